#!/usr/bin/env python3
"""The scrape endpoints under load (BENCHMARKS.md `## Scrape endpoints`).

Three copies of bench/http/server side by side, each under its own open-loop load
generator (bench/http/load, RATE requests a second) for SECONDS, all at once: A and A2
unprofiled, B preloaded with libkestrel (CPU at 997 Hz, heap at 512 KiB, KESTREL_HTTP)
and scraped every 10 s on every endpoint (profile?seconds=5, heap, allocs, symbol).
Latency is cut into 10-s windows; reported are the medians over the windows of each
window's p50 and p99 for A, A2 and B, with their interquartile ranges, and the medians
of the per-window ratios B/A (what profiling costs) beside A2/A (what two identical
unprofiled copies differ by on this machine: its own spread), then every minute's RSS
and every scrape's duration. Usage: run.py [SECONDS] [RATE]"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
B = os.path.join(ROOT, "build", "bench", "http")
LIB = os.path.join(ROOT, "build", "lib", "libkestrel.so")
SECONDS = int(sys.argv[1]) if len(sys.argv) > 1 else 600
RATE = int(sys.argv[2]) if len(sys.argv) > 2 else 300


def port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])
    return 0


tmp = tempfile.mkdtemp(prefix="kestrel-http-bench-")
pa, pa2, pb, ph = port(), port(), port(), port()
env_b = dict(os.environ, LD_PRELOAD=LIB, KESTREL_PROFILE_HZ="997",
             KESTREL_HEAP=os.path.join(tmp, "heap.pb.gz"), KESTREL_HTTP="127.0.0.1:%d" % ph)
env_a = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL") and k != "LD_PRELOAD"}
for k in ("KESTREL_PROFILE", "KESTREL_PROFILE_ENGINE"):
    env_b.pop(k, None)
srv_a = subprocess.Popen([os.path.join(B, "server"), str(pa)], env=env_a)
srv_a2 = subprocess.Popen([os.path.join(B, "server"), str(pa2)], env=env_a)
srv_b = subprocess.Popen([os.path.join(B, "server"), str(pb)], env=env_b)
time.sleep(1)
WINDOW = 10


def load(p):
    return subprocess.Popen([os.path.join(B, "load"), str(p), str(RATE), str(SECONDS), "64",
                             str(WINDOW)], stdout=subprocess.PIPE, text=True, env=env_a)


load_a, load_a2, load_b = load(pa), load(pa2), load(pb)
t0 = time.time()
rss = []
scrapes = []
base = "http://127.0.0.1:%d/debug/pprof/" % ph


def scrape_loop():
    nxt = t0 + 10
    while time.time() < t0 + SECONDS - 6:
        time.sleep(max(0, nxt - time.time()))
        nxt += 10
        for ep, data in (("profile?seconds=5", None), ("heap", None), ("allocs", None),
                         ("symbol", b"0x1+0x2")):
            s = time.time()
            try:
                with urllib.request.urlopen(base + ep, data=data, timeout=30) as r:
                    body = r.read()
                    ok = r.status
            except Exception as e:  # an answer other than 200 counts as a failed scrape
                body, ok = b"", str(e)
            scrapes.append((ep, time.time() - s, ok, len(body)))


th = threading.Thread(target=scrape_loop)
th.start()
minute = 0
while load_a.poll() is None or load_a2.poll() is None or load_b.poll() is None:
    time.sleep(1)
    if time.time() - t0 >= 60 * (minute + 1) and minute < SECONDS // 60:
        minute += 1
        rss.append((minute, rss_kib(srv_a.pid), rss_kib(srv_b.pid)))
th.join()
out_a, out_a2, out_b = load_a.stdout.read(), load_a2.stdout.read(), load_b.stdout.read()
srv_a.kill()
srv_a2.kill()
srv_b.terminate()
srv_b.wait()
srv_a.wait()
srv_a2.wait()


def parse(text):
    rows = []
    for l in text.splitlines():
        m = re.match(r"window (\d+) requests (\d+) errors (\d+) p50 (\d+) p90 (\d+) p99 (\d+) max (\d+)", l)
        if m:
            rows.append([int(x) for x in m.groups()])
    return rows


def med(v):
    v = sorted(v)
    return v[len(v) // 2] if v else 0


def iqr(v):
    v = sorted(v)
    return (v[len(v) // 4], v[(3 * len(v)) // 4]) if v else (0, 0)


ra, ra2, rb = parse(out_a), parse(out_a2), parse(out_b)
n = min(len(ra), len(ra2), len(rb))
ra, ra2, rb = ra[:n], ra2[:n], rb[:n]
load_avg = open("/proc/loadavg").read().split()[:3]
lines = []
lines.append("Command: `bench/http/run.py %d %d` (%d s, %d requests/s to each of three copies, "
             "%d windows of %d s; load average at the end %s, a 2-core machine shared with other "
             "work)." % (SECONDS, RATE, SECONDS, RATE, n, WINDOW, " ".join(load_avg)))
lines.append("")
lines.append("| per 10-s window | A unprofiled | A2 unprofiled | B profiled + scraped | B/A (median of per-window ratios) | A2/A (the machine's own spread) |")
lines.append("|---|---|---|---|---|---|")
for col, name in ((3, "p50 µs"), (5, "p99 µs")):
    a, a2, b = [x[col] for x in ra], [x[col] for x in ra2], [x[col] for x in rb]
    rba = [y / x for x, y in zip(a, b) if x]
    ra2a = [y / x for x, y in zip(a, a2) if x]
    lines.append("| %s: median (IQR) | %d (%d–%d) | %d (%d–%d) | %d (%d–%d) | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) |" % (
        name, med(a), *iqr(a), med(a2), *iqr(a2), med(b), *iqr(b), med(rba), *iqr(rba), med(ra2a), *iqr(ra2a)))
lines.append("| requests per window: median | %d | %d | %d | | |" % (
    med([x[1] for x in ra]), med([x[1] for x in ra2]), med([x[1] for x in rb])))
lines.append("| errors in all | %d | %d | %d | | |" % (
    sum(x[2] for x in ra), sum(x[2] for x in ra2), sum(x[2] for x in rb)))
lines.append("")
lines.append("| minute | RSS KiB A / B |")
lines.append("|---|---|")
for m, a, b in rss:
    lines.append("| %d | %d / %d |" % (m, a, b))
by = {}
for ep, d, ok, n in scrapes:
    by.setdefault(ep, []).append((d, ok, n))
lines.append("")
lines.append("| scrape | count | failed | duration median / max s | bytes median |")
lines.append("|---|---|---|---|---|")
for ep, v in by.items():
    lines.append("| %s | %d | %d | %.3f / %.3f | %d |" % (
        ep, len(v), sum(1 for x in v if x[1] != 200), med([x[0] for x in v]), max(x[0] for x in v),
        med([x[2] for x in v])))
print("\n".join(lines))

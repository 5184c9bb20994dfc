#!/usr/bin/env python3
"""The scrape endpoints under load (BENCHMARKS.md `## Scrape endpoints`).

Two copies of bench/http/server side by side, each under its own open-loop load
generator (bench/http/load, RATE requests a second) for SECONDS: one unprofiled, one
preloaded with libkestrel (CPU at 997 Hz, heap at 512 KiB, KESTREL_HTTP) and scraped
every 10 s on every endpoint (profile?seconds=5, heap, allocs, symbol). Reported: each
minute's latency p50/p90/p99/max and requests for both, their RSS every minute, and
the duration of every scrape. Usage: run.py [SECONDS] [RATE]"""
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
pa, pb, ph = port(), port(), port()
env_b = dict(os.environ, LD_PRELOAD=LIB, KESTREL_PROFILE_HZ="997",
             KESTREL_HEAP=os.path.join(tmp, "heap.pb.gz"), KESTREL_HTTP="127.0.0.1:%d" % ph)
env_a = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL") and k != "LD_PRELOAD"}
for k in ("KESTREL_PROFILE", "KESTREL_PROFILE_ENGINE"):
    env_b.pop(k, None)
srv_a = subprocess.Popen([os.path.join(B, "server"), str(pa)], env=env_a)
srv_b = subprocess.Popen([os.path.join(B, "server"), str(pb)], env=env_b)
time.sleep(1)
load_a = subprocess.Popen([os.path.join(B, "load"), str(pa), str(RATE), str(SECONDS)],
                          stdout=subprocess.PIPE, text=True, env=env_a)
load_b = subprocess.Popen([os.path.join(B, "load"), str(pb), str(RATE), str(SECONDS)],
                          stdout=subprocess.PIPE, text=True, env=env_a)
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
while load_a.poll() is None or load_b.poll() is None:
    time.sleep(1)
    if time.time() - t0 >= 60 * (minute + 1) and minute < SECONDS // 60:
        minute += 1
        rss.append((minute, rss_kib(srv_a.pid), rss_kib(srv_b.pid)))
th.join()
out_a, out_b = load_a.stdout.read(), load_b.stdout.read()
srv_a.kill()
srv_b.terminate()
srv_b.wait()
srv_a.wait()


def parse(text):
    rows = []
    for l in text.splitlines():
        m = re.match(r"minute (\d+) requests (\d+) errors (\d+) p50 (\d+) p90 (\d+) p99 (\d+) max (\d+)", l)
        if m:
            rows.append([int(x) for x in m.groups()])
    return rows


ra, rb = parse(out_a), parse(out_b)
load = open("/proc/loadavg").read().split()[:3]
lines = []
lines.append("Command: `bench/http/run.py %d %d` (%d s, %d requests/s to each copy; load average "
             "at the end %s, a 2-core machine shared with other work)." % (SECONDS, RATE, SECONDS, RATE,
                                                                         " ".join(load)))
lines.append("")
lines.append("| minute | requests A / B | p50 µs A / B | p90 µs A / B | p99 µs A / B | max µs A / B | RSS KiB A / B |")
lines.append("|---|---|---|---|---|---|---|")
rssd = {m: (a, b) for m, a, b in rss}
for x, y in zip(ra, rb):
    r = rssd.get(x[0], (0, 0))
    lines.append("| %d | %d / %d | %d / %d | %d / %d | %d / %d | %d / %d | %d / %d |" % (
        x[0], x[1], y[1], x[3], y[3], x[4], y[4], x[5], y[5], x[6], y[6], r[0], r[1]))


def med(v):
    v = sorted(v)
    return v[len(v) // 2] if v else 0


if ra and rb:
    lines.append("")
    lines.append("Medians over the minutes (A unprofiled, B profiled and scraped): p50 %d / %d µs "
                 "(minute range A %d–%d, B %d–%d), p99 %d / %d µs, requests per minute %d / %d; "
                 "errors %d / %d." % (
                     med([x[3] for x in ra]), med([x[3] for x in rb]), min(x[3] for x in ra),
                     max(x[3] for x in ra), min(x[3] for x in rb), max(x[3] for x in rb),
                     med([x[5] for x in ra]), med([x[5] for x in rb]), med([x[1] for x in ra]),
                     med([x[1] for x in rb]), sum(x[2] for x in ra), sum(x[2] for x in rb)))
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

#!/usr/bin/env python3
"""The event-loop server under load (BENCHMARKS.md `## Event loop`): throughput and p99
latency of bench/evloop/server (THREADS epoll threads, WORK_US of CPU per request)
under bench/evloop/client (CONNS keep-alive connections on loopback, closed loop),
unprofiled, with kestrel's signal engine, its perf engine, `perf record -g` and the
server's own probe of per-thread CPU-time timers, at 997 and 4999 Hz. Every
configuration runs once per round, in a new order each round; medians over ROUNDS and
the ratio of each median to the unprofiled one. For kestrel's runs also: the share of
the running samples with handle_request on their stack, the top functions, and each
worker's running share against its CPU time / wall time (the server prints both); for
the probe, the share of its signals that found the thread in handle_request; for every
run, handle_request's share of the threads' CPU time as the server estimates it.

Usage: run.py [--rounds N] [--seconds S] [--markdown FILE] [--label TEXT]"""
import argparse
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import server_out

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
B = os.path.join(ROOT, "build", "bench", "evloop")
LIB = os.path.join(ROOT, "build", "lib", "libkestrel.so")
KESTREL = os.path.join(ROOT, "build", "bin", "kestrel")
THREADS, WORK_US, CONNS = 2, 20, 8
ROW = re.compile(r"^\s*[█▉▊▋▌▍▎▏]*\s+([\d.]+)%\s+[\d.]+\s+[\d.]+%\s+\d+\s+\d+\s+(\S+)")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def configs(baseline):
    out = [("unprofiled", None, None)]
    for hz in (997, 4999):
        out += [("kestrel signal engine", "signal", hz), ("kestrel perf engine", "perf", hz),
                ("perf record -g", "perf-record", hz),
                ("per-thread CPU-time timers (the server's own probe, no profiler)", "cputimer", hz)]
        if baseline:
            out.append(("kestrel signal engine, %s" % baseline[0], "signal@" + baseline[1], hz))
    return out


def run_one(cfg, seconds, tmp):
    name, engine, hz = cfg
    port = free_port()
    server = [os.path.join(B, "server"), str(port), str(THREADS), str(WORK_US),
              str(seconds + 1.5)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    raw = None
    lib = LIB
    if engine and "@" in engine:
        engine, lib = engine.split("@", 1)
    if engine in ("signal", "perf"):
        raw = os.path.join(tmp, "p-%s-%d.json" % (engine, hz))
        env.update(LD_PRELOAD=lib, KESTREL_PROFILE=raw, KESTREL_PROFILE_ENGINE=engine,
                   KESTREL_PROFILE_HZ=str(hz))
    elif engine == "cputimer":
        env["EVLOOP_CPUTIMER_HZ"] = str(hz)
    elif engine == "perf-record":
        server = ["perf", "record", "-q", "-g", "-F", str(hz), "-o",
                  os.path.join(tmp, "perf.data")] + server
    srv = subprocess.Popen(server, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    time.sleep(0.3)
    cl = subprocess.run([os.path.join(B, "client"), str(port), str(CONNS), "0.5", str(seconds)],
                        capture_output=True, text=True, timeout=seconds + 60)
    out, err = srv.communicate(timeout=120)
    if cl.returncode != 0 or srv.returncode != 0:
        sys.exit("run.py: %s %s: client %d %s, server %d %s" % (name, hz, cl.returncode,
                                                                cl.stderr, srv.returncode, err))
    f = cl.stdout.split()
    res = {"rps": float(f[3]), "p99": float(f[7]), "p50": float(f[5]),
           "hr_truth": server_out.parse(out)["work_share"]}
    if raw:
        res.update(profile_figures(raw, out))
    m = re.search(r"user=(\d+) exit=(\d+) interrupted=(\d+) in_handle_request=(\d+)", out)
    if m:
        n = sum(int(m.group(i)) for i in (1, 2, 3))
        res["handle_request"] = int(m.group(4)) / n if n else 0.0
    return res


def profile_figures(raw, out_text):
    """Shares from the raw profile, symbolized by kestrel's own report."""
    truth = server_out.parse(out_text)["workers"]
    p = json.load(open(raw))
    workers = [i for i, t in enumerate(p["threads"]) if t["label"] == "thread"]
    run = {i: [0, 0] for i in workers}
    for s in p["samples"]:
        if s[1] in run:
            run[s[1]][0] += s[3] == 0
            run[s[1]][1] += 1
    shares = [r / n if n else 0.0 for r, n in run.values()]
    rep = subprocess.run([KESTREL, "report", "--state", "running", "--wide", raw],
                         capture_output=True, text=True).stdout
    top = [m.group(2) for m in map(ROW.match, rep.splitlines()) if m]
    folded = subprocess.run([KESTREL, "export", "--format", "folded", "-o", "-", raw],
                            capture_output=True, text=True).stdout
    total = inside = 0
    for line in folded.splitlines():
        stack, _, n = line.rpartition(" ")
        total += int(n)
        inside += int(n) if "handle_request" in stack.split(";") else 0
    return {"run_share": statistics.mean(shares) if shares else 0.0,
            "truth_share": statistics.mean(truth.values()) if truth else 0.0,
            "handle_request": inside / total if total else 0.0, "top": top[:10]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--markdown")
    ap.add_argument("--label", default="")
    ap.add_argument("--baseline", nargs=2, metavar=("LABEL", "LIB"),
                    help="also the signal engine of another libkestrel.so build")
    ap.add_argument("--only", help="comma-separated engines: none,signal,perf,perf-record,cputimer")
    a = ap.parse_args()
    baseline = (a.baseline[0], os.path.abspath(a.baseline[1])) if a.baseline else None
    cfgs = configs(baseline)
    if a.only:
        keep = a.only.split(",")
        cfgs = [c for c in cfgs if (c[1] or "none").split("@")[0] in keep]
    results = {c: [] for c in cfgs}
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        if baseline:
            run_one(cfgs[0], 0.5, tmp)  # the first run pays for cold caches
        for r in range(a.rounds):
            order = cfgs[:]
            random.Random(r).shuffle(order)
            for c in order:
                results[c].append(run_one(c, a.seconds, tmp))
            print("round %d done" % (r + 1), file=sys.stderr)
    load1 = os.getloadavg()
    base = statistics.median(x["rps"] for x in results[cfgs[0]])
    base_p99 = statistics.median(x["p99"] for x in results[cfgs[0]])
    lines = ["", "### %s" % a.label if a.label else "",
             "Command: `bench/evloop/run.py --rounds %d --seconds %g` (server: %d threads, "
             "%d µs of CPU per request; client: %d connections). %s UTC, load average "
             "before/after %.2f / %.2f (1-minute), 2 CPUs, %d interleaved rounds, medians "
             "(min..max)." % (a.rounds, a.seconds, THREADS, WORK_US, CONNS,
                              time.strftime("%Y-%m-%d %H:%M", time.gmtime()), load0[0], load1[0],
                              a.rounds),
             "",
             "| sampler | Hz | requests/s | ratio to unprofiled | p99 latency (µs) | p99 ratio "
             "| running share (workers) | CPU/wall (workers) | handle_request, of the running "
             "samples (probe: signals) | handle_request, of the threads' CPU (server's estimate) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in cfgs:
        xs = results[c]
        rps = [x["rps"] for x in xs]
        p99 = [x["p99"] for x in xs]
        m = statistics.median(rps)
        mp = statistics.median(p99)
        extra = ["", "", "", ""]
        if "run_share" in xs[0]:
            extra[:2] = ["%.3f" % statistics.median(x["run_share"] for x in xs),
                         "%.3f" % statistics.median(x["truth_share"] for x in xs)]
        if "handle_request" in xs[0]:
            extra[2] = "%.1f%%" % (100 * statistics.median(x["handle_request"] for x in xs))
        extra[3] = "%.1f%%" % (100 * statistics.median(x["hr_truth"] for x in xs))
        lines.append("| %s | %s | %.0f (%.0f..%.0f) | %.3f | %.0f (%.0f..%.0f) | %.2f | %s |" % (
            c[0], c[2] or "—", m, min(rps), max(rps), m / base, mp, min(p99), max(p99),
            mp / base_p99, " | ".join(extra)))
    for c in cfgs:
        if "top" in results[c][-1]:
            lines.append("")
            lines.append("%s at %d Hz, the last round's top 10 running functions: %s" % (
                c[0], c[2], ", ".join(results[c][-1]["top"])))
    text = "\n".join(l for l in lines) + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write(text)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What starting and ending a thread costs under each profiler (bench/threads/churn.c:
N threads one after another, each working US µs, each joined before the next):
unprofiled, kestrel's signal and perf engines (this tree's library, and a base
library given with --base for a before/after), and `perf record -g` (its process's
own work not in the figure: the program's wall time only). Runs are interleaved,
every configuration once per round in a rotating order; each figure is the median
over the rounds of µs per thread (create + run + join, less the work), and its ratio
to the unprofiled median.

Usage: run.py [--rounds N] [--threads N] [--us US] [--hz HZ] [--base LIB]"""
import argparse, os, shutil, statistics, subprocess, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHURN = os.path.join(ROOT, "build/bench/threads/churn")
LIB = os.path.join(ROOT, "build/lib/libkestrel.so")

ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--threads", type=int, default=3000)
ap.add_argument("--us", type=int, default=200)
ap.add_argument("--hz", type=int, default=997)
ap.add_argument("--base", default=None)
a = ap.parse_args()
d = tempfile.mkdtemp(prefix="kestrel-churn-")
argv = [CHURN, str(a.threads), str(a.us)]


def kestrel(lib, engine):
    def env(i):
        e = dict(os.environ, LD_PRELOAD=lib, KESTREL_PROFILE_ENGINE=engine,
                 KESTREL_PROFILE_HZ=str(a.hz),
                 KESTREL_PROFILE=os.path.join(d, "%s-%d.json" % (engine, i)))
        return None, e
    return env


configs = {"unprofiled": lambda i: (None, dict(os.environ))}
for eng in ("signal", "perf"):
    configs["kestrel %s" % eng] = kestrel(LIB, eng)
    if a.base:
        configs["kestrel %s (base)" % eng] = kestrel(a.base, eng)
if shutil.which("perf"):
    configs["perf record -g"] = lambda i: (["perf", "record", "-q", "-g", "-F", str(a.hz), "-o",
                                            os.path.join(d, "perf-%d.data" % i), "--"],
                                           dict(os.environ))
names = list(configs)
res = {n: [] for n in names}
for r in range(a.rounds):
    order = names[r % len(names):] + names[:r % len(names)]
    for n in order:
        pre, env = configs[n](r)
        p = subprocess.run((pre or []) + argv, env=env, capture_output=True, text=True)
        v = [l.split()[1] for l in p.stdout.splitlines() if l.startswith("us_per_thread")]
        if p.returncode == 0 and v:
            res[n].append(float(v[0]))
base = statistics.median(res["unprofiled"])
print("| | µs per thread (median of %d) | ratio |" % a.rounds)
print("|---|---|---|")
for n in names:
    m = statistics.median(res[n]) if res[n] else float("nan")
    print("| %s | %.1f | %.2f |" % (n, m, m / base))
shutil.rmtree(d)

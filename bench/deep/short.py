#!/usr/bin/env python3
"""bench/deep/short.py ROUNDS NAME=LIB... — a short process's CPU under the perf engine:
/bin/true with each libkestrel.so given (other builds, e.g. with other copy and ring
sizes), and unprofiled, interleaved rounds, process CPU medians in ms."""
import os
import resource
import statistics
import subprocess
import sys
import tempfile

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
libs = dict(a.split("=", 1) for a in sys.argv[2:]) or {
    "this build": os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                               "lib", "libkestrel.so")}
tmp = tempfile.mkdtemp(prefix="kestrel-short-")
res = {k: [] for k in list(libs) + ["unprofiled"]}
for i in range(rounds):
    for k in res:
        env = {a: b for a, b in os.environ.items() if not a.startswith("KESTREL_")}
        if k != "unprofiled":
            env.update(LD_PRELOAD=libs[k], KESTREL_PROFILE=os.path.join(tmp, "s.%p.json"),
                       KESTREL_PROFILE_ENGINE="perf")
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(["/bin/true"], env=env, check=True)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        res[k].append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000)
for k in res:
    print("%-12s %.2f ms (median of %d), min %.2f" % (k, statistics.median(res[k]), rounds, min(res[k])))
for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)

#!/usr/bin/env python3
"""The address space (VmSize) and resident memory (VmRSS) the runtime adds to a program
of 1, 100 and 10,000 threads, read while every thread is alive: medians of 5 runs,
unprofiled and profiled interleaved (signal engine, perf engine, perf engine with the
heap profiler), each profiled figure less the unprofiled one. Given several runtimes
(LABEL=LIBKESTREL.so), their runs are interleaved in one loop, for a before/after.
Usage: bench/runtime/address_space.py [LABEL=path/to/libkestrel.so ...]
(default: this=build/lib/libkestrel.so)."""
import os
import statistics
import subprocess
import sys
import tempfile

libs = [a.split("=", 1) for a in sys.argv[1:]] or [["this", "build/lib/libkestrel.so"]]
prog = os.path.join("build", "bench", "runtime", "threads_vm")
os.makedirs(os.path.dirname(prog), exist_ok=True)
subprocess.run(["cc", "-O1", "-pthread", "-o", prog, "bench/runtime/threads_vm.c"], check=True)
d = tempfile.mkdtemp()
engines = [("signal", {"KESTREL_PROFILE_ENGINE": "signal"}),
           ("perf", {"KESTREL_PROFILE_ENGINE": "perf"}),
           ("perf + heap", {"KESTREL_PROFILE_ENGINE": "perf", "KESTREL_HEAP": d + "/h.pb.gz"})]
modes = [("unprofiled", {}, None)]
modes += [("%s, %s" % (label, m), e, lib) for label, lib in libs for m, e in engines]
print("| threads | runtime | VmSize added | VmRSS added |")
print("|---|---|---|---|")
for n in (1, 100, 10000):
    res = {m: [] for m, _, _ in modes}
    for _ in range(5):
        for m, e, lib in modes:
            env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
            if e:
                env.update(e, LD_PRELOAD=os.path.abspath(lib), KESTREL_PROFILE=d + "/p.json")
            out = subprocess.run([prog, str(n)], env=env, capture_output=True, text=True,
                                 check=True).stdout.split()
            kv = dict(x.split("=") for x in out)
            res[m].append((int(kv["VmSize_kB"]), int(kv["VmRSS_kB"])))
    base = [statistics.median(x[i] for x in res["unprofiled"]) for i in (0, 1)]
    for m, _, _ in modes[1:]:
        s = statistics.median(x[0] for x in res[m]) - base[0]
        r = statistics.median(x[1] for x in res[m]) - base[1]
        print("| %d | %s | %.1f MB | %.1f MB |" % (n, m, s / 1000, r / 1000))

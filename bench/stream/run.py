#!/usr/bin/env python3
"""The cost of writing the raw profile as the program runs (a chunk a second) against
writing it once at the end (a profile path that is a symlink is written whole at the
end: docs/raw-format.md). One CPU-bound program of a fixed amount of work
(bench/stream/work.c, UNITS hundred-million iterations),
unprofiled, streamed and written at the end, interleaved, REPEATS times, at each rate;
medians of its wall time and CPU time (user + system, the runtime's threads included),
Usage: bench/stream/run.py [UNITS] [REPEATS]"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.path.join(ROOT, "build", "lib", "libkestrel.so")
units = int(sys.argv[1]) if len(sys.argv) > 1 else 40
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
d = tempfile.mkdtemp(prefix="kestrel-bench-stream-")
prog = os.path.join(d, "work")
subprocess.run(["cc", "-O1", "-g", "-fno-omit-frame-pointer", "-o", prog,
                os.path.join(ROOT, "bench", "stream", "work.c")], check=True)


def run(mode, hz):
    env = dict(os.environ)
    out = os.path.join(d, "p.json")
    for f in (out, os.path.join(d, "target.json")):
        if os.path.lexists(f):
            os.unlink(f)
    if mode != "off":
        env.update(LD_PRELOAD=LIB, KESTREL_PROFILE=out, KESTREL_PROFILE_HZ=str(hz))
        if mode == "end":
            os.symlink(os.path.join(d, "target.json"), out)
    t0 = time.monotonic()
    p = subprocess.Popen([prog, str(units)], env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    assert status == 0, status
    size = os.path.getsize(out) if mode != "off" else 0
    return wall, ru.ru_utime + ru.ru_stime, size


print("# work %d, %d runs of each, interleaved; medians" % (units, repeats))
print("%6s %-9s %9s %9s %11s %10s" % ("hz", "mode", "wall s", "CPU s", "CPU vs off", "file KiB"))
for hz in (997, 10000):
    res = {m: [] for m in ("off", "stream", "end")}
    for _ in range(repeats):
        for m in res:
            res[m].append(run(m, hz))
    off_cpu = statistics.median(r[1] for r in res["off"])
    for m, rs in res.items():
        cpu = statistics.median(r[1] for r in rs)
        print("%6d %-9s %9.3f %9.3f %10.4fx %10.0f" % (hz, m, statistics.median(r[0] for r in rs),
                                                    cpu, cpu / off_cpu,
                                                    statistics.median(r[2] for r in rs) / 1024))
    s = statistics.median(r[1] for r in res["stream"])
    e = statistics.median(r[1] for r in res["end"])
    print("%6d streamed/at-end CPU ratio: %.4f (%+.1f ms)" % (hz, s / e, (s - e) * 1e3))

#!/usr/bin/env python3
"""What kestrel costs a short process: the CPU time (user + system, from wait4) of
`true`, `sleep 0.05` and a shell script that starts 20 processes (tree.sh), unprofiled and under
kestrel's perf and signal engines with --unwind fp and cfi, at 997 Hz. Every process of
a tree is profiled (LD_PRELOAD is inherited). ROUNDS interleaved rounds, each
configuration once a round in a rotating order; medians, and the ratio of each median
to the unprofiled one.

  bench/unwind/short.py [ROUNDS] [LIB...]

Each LIB (a libkestrel.so, default build/lib/libkestrel.so) is measured side by side:
pass two builds to compare them in the same rounds."""
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 31
libs = sys.argv[2:] or [os.path.join(ROOT, "build", "lib", "libkestrel.so")]
tmp = tempfile.mkdtemp(prefix="kestrel-short-")
PROGS = {
    "true": ["/bin/true"],
    "sleep 0.05": ["/bin/sleep", "0.05"],
    "sh, 20 processes": ["/bin/sh", os.path.join(ROOT, "bench", "unwind", "tree.sh")],
}


def cpu_ms(argv, env):
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_RDWR)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execve(argv[0], argv, env)
    _, status, ru = os.wait4(pid, 0)
    if status != 0:
        raise SystemExit("%s: exit status %d" % (argv, status))
    # wait4 reports the child and the descendants it waited for.
    return 1000 * (ru.ru_utime + ru.ru_stime)


base = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
cfgs = [("unprofiled", None, None, None)]
for li, lib in enumerate(libs):
    tag = "" if len(libs) == 1 else " [%s]" % (chr(ord("A") + li))
    for eng in ("perf", "signal"):
        for mode in ("fp", "cfi"):
            cfgs.append(("%s, %s%s" % (eng, mode, tag), lib, eng, mode))
res = {(p, c[0]): [] for p in PROGS for c in cfgs}
for r in range(rounds):
    order = cfgs[r % len(cfgs):] + cfgs[:r % len(cfgs)]
    for name, lib, eng, mode in order:
        env = dict(base)
        if lib:
            env.update(LD_PRELOAD=lib, KESTREL_PROFILE=os.path.join(tmp, "p.json"),
                       KESTREL_PROFILE_ENGINE=eng, KESTREL_PROFILE_UNWIND=mode,
                       KESTREL_PROFILE_HZ="997")
        for p, argv in PROGS.items():
            res[(p, name)].append(cpu_ms(argv, env))
if len(libs) > 1:
    for li, lib in enumerate(libs):
        print("%s: %s" % (chr(ord("A") + li), lib))
    print()
print("| CPU ms, median of %d (ratio to unprofiled) | %s |" % (rounds, " | ".join(PROGS)))
print("|---|%s" % ("---|" * len(PROGS)))
for c in cfgs:
    cells = []
    for p in PROGS:
        m = statistics.median(res[(p, c[0])])
        b = statistics.median(res[(p, "unprofiled")])
        cells.append("%.2f (%.2f×)" % (m, m / b if b else float("nan")))
    print("| %s | %s |" % (c[0], " | ".join(cells)))
print("\nload average at the end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))

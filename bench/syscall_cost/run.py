#!/usr/bin/env python3
"""What kestrel adds to each system call of a system-call-heavy program, beside perf record.

Fixed work of tests/perf/syscalls.c `dd`: N blocks of 4 KiB read from /dev/zero and
written to /dev/null (default 1,000,000: a read() and a write() each). Each round
runs, interleaved, at each rate:

  none          the program alone
  idle-thread   the program with one idle thread of its own (bench/heap_idle_thread.c
                preloaded): what any second thread costs a process's system calls
                (the kernel's shared file table, libc's cancellation points), no kestrel
  preload       libkestrel.so preloaded, no profile: the blocking-call wrappers alone
  signal        the signal engine at the rate
  perf          kestrel's perf engine at the rate
  perf-g        perf record -g -e cpu-clock at the rate (root)
  signal-B, perf-B   with --lib-b LIB: the same from another build of libkestrel.so

and reports per setting the median over the rounds of the process's CPU time (kestrel's
own thread included, perf record's process not) as a ratio to `none` of the same round,
and the median CPU nanoseconds added per block (one read() and one write()).
"""
import argparse, os, re, shutil, statistics, subprocess, sys, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LIB = os.path.join(ROOT, "build", "lib", "libkestrel.so")
IDLE = os.path.join(ROOT, "build", "bench", "libheap_idle_thread.so")
PROG = os.path.join(ROOT, "build", "tests", "perf", "syscalls")
SETTINGS = ["none", "idle-thread", "preload", "signal", "perf", "perf-g"]


def one(setting, hz, n, tmp, lib_b):
    work = tempfile.mkdtemp(dir=tmp)
    argv = [PROG, "dd", "%dx" % n]
    env = dict(os.environ)
    lib = lib_b if setting.endswith("-B") else LIB
    if setting == "idle-thread":
        env["LD_PRELOAD"] = IDLE
    elif setting == "preload":
        env["LD_PRELOAD"] = lib
    elif setting.split("-")[0] in ("signal", "perf") and setting != "perf-g":
        env.update(LD_PRELOAD=lib, KESTREL_PROFILE=os.path.join(work, "r.json"),
                   KESTREL_PROFILE_HZ=str(hz), KESTREL_PROFILE_ENGINE=setting.split("-")[0])
    elif setting == "perf-g":
        argv = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(hz), "-g",
                "-o", os.path.join(work, "p.data"), "--"] + argv
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    m = re.search(r"all_ns (\d+)", p.stdout)
    shutil.rmtree(work, ignore_errors=True)
    if p.returncode != 0 or not m:
        raise SystemExit("kestrel: %s %d Hz: failed: %s" % (setting, hz, p.stderr[-300:]))
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--blocks", type=int, default=1000000)
    ap.add_argument("--rates", default="10,997")
    ap.add_argument("--lib-b", help="another libkestrel.so, as settings signal-B and perf-B")
    a = ap.parse_args()
    settings = SETTINGS + (["signal-B", "perf-B"] if a.lib_b else [])
    rates = [int(x) for x in a.rates.split(",")]
    if os.geteuid() != 0:
        print("kestrel: bench/syscall_cost: needs root (perf record -g)", file=sys.stderr)
        return 1
    for f in (LIB, IDLE, PROG):
        if not os.path.exists(f):
            print("kestrel: %s: not built (make)" % f, file=sys.stderr)
            return 1
    tmp = tempfile.mkdtemp(prefix="kestrel-syscall-bench-")
    got = {}  # (hz, setting) -> [(ratio, ns per block)]
    try:
        for r in range(a.rounds):
            for hz in rates:
                base = one("none", hz, a.blocks, tmp, a.lib_b)
                for s in settings[1:]:
                    c = one(s, hz, a.blocks, tmp, a.lib_b)
                    got.setdefault((hz, s), []).append((c / base, (c - base) / a.blocks))
            print("round %d done" % (r + 1), file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("| Hz | " + " | ".join(settings[1:]) + " |")
    print("|---|" + "---|" * (len(settings) - 1))
    for hz in rates:
        cells = []
        for s in settings[1:]:
            v = got[(hz, s)]
            cells.append("%.2f (%+.0f ns)" % (statistics.median(x[0] for x in v),
                                             statistics.median(x[1] for x in v)))
        print("| %d | %s |" % (hz, " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

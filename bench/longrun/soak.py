#!/usr/bin/env python3
"""A long run at the real row table (issue 19): prog_longrun's four threads, profiled
at HZ, each until it has used BUDGET seconds of CPU (on 2 cores about 2 x BUDGET of
wall time). Every minute the process's VmRSS; at the end the raw file's tables and the
checks of tests/runtime/longrun.py (every sample counted, the samples' CPU time the
threads', running samples = CPU time x rate under the perf engine, shares 1:3), and
the CPU profiler's memory against its stated bound (docs/raw-format.md). Prints a
markdown section for BENCHMARKS.md; exits non-zero if a check failed.

usage: bench/longrun/soak.py [BUDGET_S [HZ]]   (defaults 600 997)"""
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "runtime"))
from longrun import check_counts  # noqa: E402
from rtlib import Checker, load, prog, profiled_env, tmpdir  # noqa: E402

BOUND_MIB = 107.5  # docs/raw-format.md: rows, stacks, their words and the untimed counts
ROWS = 4194304


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def main():
    budget = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    hz = int(sys.argv[2]) if len(sys.argv) > 2 else 997
    engine = os.environ.get("KESTREL_PROFILE_ENGINE", "auto")
    os.environ["KESTREL_PROFILE_ENGINE"] = engine
    d = tmpdir()
    raw = os.path.join(d, "soak.raw.json")
    env = profiled_env(raw, hz=hz)
    env["KESTREL_PROFILE_ENGINE"] = engine
    t0 = time.monotonic()
    p = subprocess.Popen([prog("prog_longrun"), str(budget * 1000)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    minutes = []  # (minute, VmRSS KiB)
    peak = 0
    while p.poll() is None:
        time.sleep(1)
        r = rss_kib(p.pid)
        if r:
            peak = max(peak, r)
        m = int((time.monotonic() - t0) // 60)
        if r and (not minutes or minutes[-1][0] < m):
            minutes.append((m, r))
            print("minute %d: VmRSS %d KiB" % (m, r), file=sys.stderr, flush=True)
    out, err = p.communicate()
    wall = time.monotonic() - t0
    c = Checker()
    c.check(p.returncode == 0, "the program ran: %s" % err)
    cpu_ns = int(out.split()[0])
    prof = load(raw)
    total = check_counts(c, prof, cpu_ns, hz)
    c.check(prof["dropped"] == 0, "nothing dropped: %d" % prof["dropped"])
    c.check(prof["past_limits"]["samples"] == 0, "nothing went past both tables")
    c.check(peak <= BOUND_MIB * 1024 + minutes[0][1] if minutes else False,
            "peak VmRSS %d KiB within the bound %.1f MiB over the first minute's" % (peak, BOUND_MIB))
    rows = len(prof["samples"])
    untimed = sum(e[3] for e in prof.get("untimed", []))
    print("### %d s of CPU per thread, 4 threads at %d Hz, engine %s (`bench/longrun/soak.py %d %d`, %s)"
          % (budget, hz, prof["engine"], budget, hz, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
    print()
    print("wall %.0f s, the threads' CPU %.0f s; %d samples: %d rows of %d (%s), %d counted past them "
          "in %d (stack, thread, state) entries; dropped %d."
          % (wall, cpu_ns / 1e9, total, rows, ROWS,
             "full" if rows == ROWS else "not full", untimed, len(prof.get("untimed", [])),
             prof["dropped"]))
    print()
    print("| minute | VmRSS KiB |")
    print("|---|---|")
    for m, r in minutes:
        print("| %d | %d |" % (m, r))
    print()
    print("Peak VmRSS %d KiB (bound of the CPU profiler's tables: %.1f MiB). Checks: %d, failed %d."
          % (peak, BOUND_MIB, c.n, c.failed))
    c.exit()


main()

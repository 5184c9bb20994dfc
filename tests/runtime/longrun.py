"""What every long run of prog_longrun must show, however long: every sample counted
with its stack, thread and state past the row table, the samples' CPU time the
threads' own, the running samples CPU time x rate under the perf engine, and
share_a():share_b() 1:3 in the whole profile and in its untimed part. Shared by
tests/runtime/test_long_run.py (a table cut short) and bench/longrun/soak.py (the
real table, for twenty minutes)."""
import math
import os

from rtlib import name_of, program_file, symbols


def counts(p):
    """(stack, state, count, cpu_ns) of every sample: the rows, then the untimed counts."""
    rows = [(s[2], s[3], 1, s[4]) for s in p["samples"]]
    untimed = [(e[1], e[2], e[3], e[4]) for e in p.get("untimed", [])]
    return rows, untimed


def check_counts(c, p, cpu_ns, hz, min_samples=500):
    """Checks on Checker c; returns the number of samples in all."""
    rows, untimed = counts(p)
    every = rows + untimed
    total_cpu = sum(x[3] for x in every)
    c.check(abs(total_cpu - cpu_ns) <= 0.03 * cpu_ns + 20e6,
            "CPU ns of all samples %d vs the threads' own %d" % (total_cpu, cpu_ns))
    running = sum(x[2] for x in every if x[1] == 0)
    if p["engine"] == "perf":
        want = cpu_ns * hz / 1e9
        c.check(abs(running - want) <= 0.03 * want + 3 * math.sqrt(want),
                "running samples %d vs CPU time x rate %.0f" % (running, want))
    exe = program_file("prog_longrun")
    syms = {os.path.realpath(exe): symbols(exe)}
    share = {}  # stack index -> "share_a", "share_b" or None

    def share_of(stack):
        if stack not in share:
            share[stack] = None
            for k, a in enumerate(p["stacks"][stack]):
                f = name_of(p, syms, a if k == 0 else a - 1)
                if f in ("share_a", "share_b"):
                    share[stack] = f
                    break
        return share[stack]

    parts = [("the whole profile", every)]
    if untimed:
        parts.append(("the untimed part", untimed))
    for what, part in parts:
        n = {"share_a": 0, "share_b": 0}
        for st, state, cnt, _ in part:
            f = share_of(st) if state == 0 else None
            if f:
                n[f] += cnt
        tot = n["share_a"] + n["share_b"]
        pb = n["share_b"] / tot if tot else 0
        se = math.sqrt(0.75 * 0.25 / tot) if tot else 1
        c.check(tot > min_samples, "%s: %d running samples in share_a/share_b" % (what, tot))
        c.check(abs(pb - 0.75) <= 3 * se + 0.02,
                "%s: share_b %.3f of the two, want 0.75 (SE %.3f)" % (what, pb, se))
    return sum(x[2] for x in every)

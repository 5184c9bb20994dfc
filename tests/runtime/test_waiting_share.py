#!/usr/bin/env python3
"""A thread that computes half of its wall time and sleeps the other half gets about
half of its samples as waiting: the waiting share of its samples is within 4 standard
errors of the share of its wall time it really spent off the CPU (measured by the
program from its own CPU clock, so that time spent preempted on a busy machine counts
as off-CPU on both sides). Its waiting samples carry the sleep's stack.

The program runs under SCHED_FIFO (chrt) when this is allowed, so that other work on
the machine does not preempt it: a tick in which a preempted thread ran at all counts
as on-CPU, which is right for the profile but makes the truth above unreachable."""
import math
import os
import subprocess

from rtlib import Checker, load, name_of, rate_of, prog, profiled_env, symbols, tmpdir, validate

c = Checker()
d_ = tmpdir()
out = os.path.join(d_, "half.json")
exe = prog("prog_halfsleep")
argv = [exe, "4"]
if subprocess.run(["chrt", "-f", "10", "true"], capture_output=True).returncode == 0:
    argv = ["chrt", "-f", "10"] + argv
else:
    print("SCHED_FIFO not allowed here: the result depends on the machine's load")
p = subprocess.run(argv, env=profiled_env(out), capture_output=True, text=True, timeout=120)
c.check(p.returncode == 0, "exit 0: %s" % p.stderr)
truth = dict(kv.split("=") for kv in p.stdout.split())
wall, cpu = int(truth["wall_ns"]), int(truth["cpu_ns"])
p_wait = 1 - cpu / wall
d = load(out)
validate(d, c, "halfsleep")
th = d["threads"]
c.check(len(th) == 2 and th[1]["label"] == "thread", "main and the worker: %r" % th)
rows = [s for s in d["samples"] if s[1] == 1]
n = len(rows)
waiting = sum(1 for s in rows if s[3] == 1)
share = waiting / n if n else 0
se = math.sqrt(p_wait * (1 - p_wait) / n) if n else 1
print("worker: %d samples, %.4f waiting; truth %.4f off-CPU (wall %.2fs); 4 SE = %.4f" %
      (n, share, p_wait, wall / 1e9, 4 * se))
c.check(n > 0.5 * rate_of(d, c, 997) * wall / 1e9, "enough samples: %d" % n)
c.check(0.3 < p_wait < 0.7, "the program did sleep about half the time: %.3f" % p_wait)
c.check(abs(share - p_wait) <= 4 * se, "waiting share %.4f vs truth %.4f (4 SE %.4f)" %
        (share, p_wait, 4 * se))

# Waiting samples show where the thread waited: nanosleep under half().
syms = {exe: symbols(exe)}
in_half = sum(1 for s in rows if s[3] == 1 and "half" in
              [name_of(d, syms, a) for a in d["stacks"][s[2]]])
c.check(waiting and in_half >= 0.95 * waiting,
        "waiting stacks reach half(): %d of %d" % (in_half, waiting))
c.exit()

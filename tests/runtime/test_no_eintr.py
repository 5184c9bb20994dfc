#!/usr/bin/env python3
"""A profiled program sees no EINTR and no early return: nanosleep, clock_nanosleep,
usleep, sleep, poll, select, epoll_wait, sem_timedwait and pipe reads and writes in
loops under profiling at 997 Hz return what they return unprofiled, never before
their time, and 1 MiB pipe writes are never cut short. The profile shows those
threads waiting, so they were sampled."""
import os
import subprocess

from rtlib import Checker, load, prog, profiled_env, tmpdir, validate

c = Checker()
d_ = tmpdir()
out = os.path.join(d_, "b.json")
p = subprocess.run([prog("prog_blocking")], env=profiled_env(out, hz=997),
                   capture_output=True, text=True, timeout=300)
c.check(p.returncode == 0, "exit 0: %s" % p.stderr)
lines = [l.split(None, 3) for l in p.stdout.splitlines()]
c.check(len(lines) == 10, "ten kinds of call reported: %s" % p.stdout)
for l in lines:
    kind, calls, bad = l[0], int(l[1].split("=")[1]), int(l[2].split("=")[1])
    c.check(calls > 0 and bad == 0, "%s: %d of %d calls misbehaved: %s" %
            (kind, bad, calls, l[3] if len(l) > 3 else ""))
d = load(out)
validate(d, c, "blocking")
c.check(len(d["threads"]) == 12, "main, busy, 8 callers, 2 pipe threads: %d" % len(d["threads"]))
waiting = [0] * len(d["threads"])
for s in d["samples"]:
    waiting[s[1]] += s[3] == 1
c.check(sum(1 for w in waiting[2:] if w > 50) >= 9,
        "the blocking threads were sampled while waiting: %s" % waiting)
c.exit()

#!/usr/bin/env python3
"""A profiled program sees no EINTR and no early return: nanosleep, clock_nanosleep,
usleep, sleep, poll, select, epoll_wait, sem_timedwait, ppoll, pselect, sigtimedwait,
accept under a receive timeout, pipe reads and writes and socket recv/send (MSG_WAITALL)
in loops under the signal engine at 997 and 4999 Hz return what they return
unprofiled, never before their time, and 1 MiB writes and sends are never cut short
(the engine's signal interrupts them; the wrappers resume them). The profile shows
those threads waiting, so they were sampled, and no signal-mask function of the
wrappers' is among its frames."""
import os
import subprocess

from rtlib import BUILD, ENGINE, Checker, load, prog, profiled_env, tmpdir, validate

c = Checker()
d_ = tmpdir()
KINDS = 16
for hz in (997, 4999):
    out = os.path.join(d_, "b%d.json" % hz)
    p = subprocess.run([prog("prog_blocking")], env=profiled_env(out, hz=hz),
                       capture_output=True, text=True, timeout=300)
    c.check(p.returncode == 0, "%d Hz: exit 0: %s" % (hz, p.stderr))
    lines = [l.split(None, 3) for l in p.stdout.splitlines()]
    c.check(len(lines) == KINDS, "%d Hz: %d kinds of call reported: %s" % (hz, KINDS, p.stdout))
    for l in lines:
        kind, calls, bad = l[0], int(l[1].split("=")[1]), int(l[2].split("=")[1])
        c.check(calls > 0 and bad == 0, "%d Hz: %s: %d of %d calls misbehaved: %s" %
                (hz, kind, bad, calls, l[3] if len(l) > 3 else ""))
    if not c.check(os.path.exists(out), "%d Hz: a profile" % hz):
        continue
    d = load(out)
    validate(d, c, "blocking %d Hz" % hz)
    c.check(len(d["threads"]) == 2 + KINDS - 2 + 2,
            "%d Hz: main, busy, 12 callers, 2 pipe and 2 socket threads: %d"
            % (hz, len(d["threads"])))
    waiting = [0] * len(d["threads"])
    for s in d["samples"]:
        waiting[s[1]] += s[3] == 1
    c.check(sum(1 for w in waiting[2:] if w > 50) >= KINDS - 1,
            "%d Hz: the blocking threads were sampled while waiting: %s" % (hz, waiting))
    r = subprocess.run([os.path.join(BUILD, "bin", "kestrel"), "report", "--wide", out],
                       capture_output=True, text=True, timeout=120)
    c.check(r.returncode == 0 and "FUNCTION" in r.stdout, "%d Hz: kestrel report: %s"
            % (hz, r.stderr))
    bad = [l for l in r.stdout.splitlines() if "sigmask" in l or "sigprocmask" in l]
    c.check(not bad, "%d Hz, %s engine: no signal-mask function among the report's top 10: %s"
            % (hz, ENGINE, bad))
c.exit()

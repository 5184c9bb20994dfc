#!/usr/bin/env python3
"""A program's own SIGUSR1 and SIGALRM handlers interrupt its calls under profiling
exactly as without it (prog_ownsig.c): nanosleep, poll, epoll_wait, select, read,
sem_timedwait and pause fail with EINTR, an SA_RESTART read is restarted, an
SA_RESTART nanosleep still fails with EINTR, a process timer's SIGALRM ends a sleep and
a read; at 997 and 4999 Hz the program prints the same lines as unprofiled, while the
engine's own signals interrupt the same calls and are hidden from it."""
import os
import subprocess

from rtlib import ENGINE, Checker, load, profiled_env, prog, tmpdir, validate

ROUNDS = "8"
c = Checker()
exe = prog("prog_ownsig")
plain_env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
base = subprocess.run([exe, ROUNDS], env=plain_env, capture_output=True, text=True, timeout=120)
c.check(base.returncode == 0, "unprofiled: exit %d %s" % (base.returncode, base.stderr))
lines = base.stdout.splitlines()
c.check(len(lines) == 11, "unprofiled: 11 kinds: %s" % base.stdout)
for l in lines:
    restarted = "read_sa_restart" in l
    want = "eintr=0 ok=%s" % ROUNDS if restarted else "eintr=%s ok=0" % ROUNDS
    c.check(want in l, "unprofiled: %s (expected %s)" % (l, want))
d = tmpdir()
for hz in (997, 4999):
    path = os.path.join(d, "o%d.json" % hz)
    p = subprocess.run([exe, ROUNDS], env=profiled_env(path, hz=hz), capture_output=True,
                       text=True, timeout=120)
    what = "%s engine, %d Hz" % (ENGINE, hz)
    c.check(p.returncode == 0, "%s: exit %d %s" % (what, p.returncode, p.stderr))
    c.check(p.stdout == base.stdout, "%s: the program saw\n%sunprofiled\n%s"
            % (what, p.stdout, base.stdout))
    if c.check(os.path.exists(path), "%s: a profile" % what):
        prof = load(path)
        validate(prof, c, what)
        c.check(sum(1 for s in prof["samples"] if s[3] == 0) >= 20,
                "%s: on-CPU samples of the worker's computing" % what)
c.exit()

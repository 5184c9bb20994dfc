#!/usr/bin/env python3
"""The runtime's threads and the program's descriptor table (rtthread.h, RT_OWN_FDS).

A single-threaded program pays on every system call that takes a descriptor once a
second thread shares its table, so the runtime's threads have tables of their own
where they can: the signal engine's sampler and the exit watcher (empty: they open what
they use), and the perf engine's thread while the program has one thread (copies of
the runtime's descriptors it uses, imported from the program's table). prog_fdtable.c:
- none of these tables holds the program's 16 files; the program's thread holds them;
- the program closes its stdout and works on: its reader sees the end of the pipe
  while the program still runs (no thread of the process holds a copy of it);
- the program makes its first thread (`thread`): under the perf engine its engine
  thread then shares the program's table, and the work before, in and after the
  thread start is all sampled (each part at least half its samples at the rate);
- a chunk of the streamed profile that cannot be written (a full disk) is said on the
  program's stderr by the thread that writes it (under the signal engine the sampler,
  which writes to a copy of the program's stderr taken for the line); the program's
  status is untouched."""
import os
import resource
import subprocess

from rtlib import (ENGINE, Checker, full_disk, load, name_of, prog, profiled_env, rate_of,
                   symbols, tmpdir, validate)

c = Checker()
exe = prog("prog_fdtable")
d = tmpdir()
raw = os.path.join(d, "p.json")



def soft_limit_1024():
    """The runtime's descriptors go above the soft limit where the hard one leaves room
    (rtfd.h): the engine thread imports them above its soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > 2048:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))


p = subprocess.Popen([exe, "2", "thread"], env=profiled_env(raw, hz=997),
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                     preexec_fn=soft_limit_1024)
out = p.stdout.read()  # to the end of the pipe: the program's close(1)
running_at_eof = p.poll() is None
err = p.stderr.read()
p.wait(timeout=120)
c.check(p.returncode == 0 and "done" in err, "status %d: %s" % (p.returncode, err[-300:]))
c.check(out.endswith("closing\n"), "the program's lines: %r" % out)
c.check(running_at_eof, "the reader saw the end of the program's stdout while it ran")
lines = [l.split() for l in out.splitlines()]
before = {t[1]: int(t[2]) for t in lines if t[0] == "task"}
after = {t[1]: int(t[2]) for t in lines if t[0] == "after"}
epolls = {t[1]: t[3] for t in lines if t[0] == "task"}
mine = before.get("prog_fdtable", 0)
c.check(mine >= 19, "the program's thread has its descriptors: %s" % before)
runtime = {n: k for n, k in before.items() if n.startswith("kestrel-")}
own = {"kestrel-exit", "kestrel-sampler" if ENGINE == "signal" else "kestrel-perf"}
c.check(own <= set(runtime) and all(runtime[n] < 16 for n in own),
        "%s have tables of their own, without the program's 16 files: %s" % (sorted(own), before))
if ENGINE == "perf":
    c.check(epolls.get("kestrel-perf", "-") != "-" and
            epolls.get("kestrel-perf") == epolls.get("prog_fdtable"),
            "the engine thread waits on the program's table's epoll set, imported at its "
            "number: %s" % epolls)
    c.check(after.get("kestrel-perf") == after.get("prog_fdtable"),
            "with a thread of the program's, the engine thread shares its table: %s" % after)
if c.check(os.path.exists(raw), "a profile"):
    prof = load(raw)
    validate(prof, c, "fd table")
    hz = rate_of(prof, c, 997)
    syms = {exe: symbols(exe)}
    parts = dict.fromkeys(("before_thread", "in_thread", "after_thread"), 0)
    for s in prof["samples"]:
        if s[3] != 0:
            continue
        names = {name_of(prof, syms, a) for a in prof["stacks"][s[2]]}
        for part in parts:
            parts[part] += part in names
    want = {"before_thread": 0.3, "in_thread": 0.5, "after_thread": 0.5}
    c.check(all(parts[k] >= 0.5 * want[k] * hz for k in parts),
            "the work before, in and after the first thread is sampled: %s at %d Hz" %
            (parts, hz))

with full_disk(c, d) as full:
    if full:
        path = os.path.join(full, "p.json")
        r = subprocess.run([exe, "2.5"], env=profiled_env(path), capture_output=True,
                           text=True, timeout=120)
        line = ("kestrel: CPU profile: cannot write %s as the program runs: No space left "
                "on device (tried again every second)" % path)
        c.check(r.returncode == 0, "full disk: status %d" % r.returncode)
        c.check(line in r.stderr.splitlines(), "full disk: %r in %r" % (line, r.stderr))
c.exit()

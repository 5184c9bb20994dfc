#!/usr/bin/env python3
"""The runtime's threads and the program's descriptor table (rtthread.h, RT_OWN_FDS).

A single-threaded program pays on every system call that takes a descriptor once a
second thread shares its table, so the runtime's threads that keep no descriptor (the
signal engine's sampler, the exit watcher) have a table of their own, empty
(prog_fdtable.c):
- their tables hold nothing (/proc/self/task/TID/fd), the program's thread holds its
  own descriptors;
- the program closes its stdout and works on: its reader sees the end of the pipe
  while the program still runs (no thread of the process holds a copy of it);
- a chunk of the streamed profile that cannot be written (a full disk) is said on the
  program's stderr by the thread that writes it, the sampler (which has no stderr of
  its own under the signal engine: it writes to a copy of the program's, taken for the
  line); the program's status is untouched."""
import os
import subprocess

from rtlib import ENGINE, Checker, prog, profiled_env, tmpdir

c = Checker()
exe = prog("prog_fdtable")
d = tmpdir()

p = subprocess.Popen([exe, "2"], env=profiled_env(os.path.join(d, "p.json")),
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
out = p.stdout.read()  # to the end of the pipe: the program's close(1)
running_at_eof = p.poll() is None
err = p.stderr.read()
p.wait(timeout=120)
c.check(p.returncode == 0 and "done" in err, "status %d: %s" % (p.returncode, err[-300:]))
c.check(out.endswith("closing\n"), "the program's lines: %r" % out)
c.check(running_at_eof, "the reader saw the end of the program's stdout while it ran")
tasks = [l.split() for l in out.splitlines() if l.startswith("task ")]
own = [t for t in tasks if not t[1].startswith("kestrel-")]
c.check(len(own) == 1 and int(own[0][2]) >= 3,
        "the program's thread has its descriptors: %s" % own)
runtime = {t[1]: int(t[2]) for t in tasks if t[1].startswith("kestrel-")}
private = {"kestrel-exit"} | ({"kestrel-sampler"} if ENGINE == "signal" else set())
c.check(all(runtime.get(n) == 0 for n in private if n in runtime) and
        (ENGINE != "signal" or "kestrel-sampler" in runtime),
        "the tables of %s are empty: %s" % (sorted(private), runtime))

full = os.path.join(d, "full")
os.mkdir(full)
m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", full],
                   capture_output=True, text=True)
if c.check(m.returncode == 0, "a tmpfs for the full disk: %s" % m.stderr.strip()):
    try:
        fd = os.open(os.path.join(full, "fill"), os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        path = os.path.join(full, "p.json")
        r = subprocess.run([exe, "2.5"], env=profiled_env(path), capture_output=True,
                           text=True, timeout=120)
        line = ("kestrel: CPU profile: cannot write %s as the program runs: No space left "
                "on device (tried again every second)" % path)
        c.check(r.returncode == 0, "full disk: status %d" % r.returncode)
        c.check(line in r.stderr.splitlines(), "full disk: %r in %r" % (line, r.stderr))
    finally:
        subprocess.run(["umount", full])
c.exit()

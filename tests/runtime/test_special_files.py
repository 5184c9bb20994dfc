#!/usr/bin/env python3
"""KESTREL_PROFILE and KESTREL_HEAP pointed at things that are not regular files: a
character device (a null and a full device node made here with mknod, never the
system's own), a FIFO with a reader and one without, a symlink to each, and a symlink
to a regular file. A device or a FIFO with a reader is written in place (the reader
gets the whole profile), a FIFO with no reader is refused with one line, a symlink is
followed; none is ever replaced by a regular file (the write-to-temporary-and-rename
did that: `-o /dev/full` became a regular file), and no temporary file is left."""
import gzip
import json
import os
import stat
import threading

from rtlib import Checker, prog, profiled_env, tmpdir, run

c = Checker()
exe = prog("prog_nofd")
d = tmpdir()


def env_for(cpu, heap):
    return profiled_env(cpu, extra={"KESTREL_HEAP": heap})


def kind(p):
    m = os.lstat(p).st_mode
    return "link" if stat.S_ISLNK(m) else "chr" if stat.S_ISCHR(m) else "fifo" if stat.S_ISFIFO(
        m) else "reg" if stat.S_ISREG(m) else "other"


os.mknod(os.path.join(d, "null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
os.mknod(os.path.join(d, "full"), 0o666 | stat.S_IFCHR, os.makedev(1, 7))
os.symlink(os.path.join(d, "null"), os.path.join(d, "null-link"))
os.symlink(os.path.join(d, "full"), os.path.join(d, "full-link"))

for name in ("null", "null-link"):
    p = os.path.join(d, name)
    r = run([exe, "quick"], env_for(p, p))
    c.check(r.returncode == 0 and "kestrel:" not in r.stderr, "%s: %d %r" % (name, r.returncode, r.stderr))
for name in ("full", "full-link"):
    p = os.path.join(d, name)
    r = run([exe, "quick"], env_for(p, p))
    c.check(r.returncode == 0, "%s: status %d" % (name, r.returncode))
    for what in ("CPU", "heap"):
        line = "kestrel: %s profile: cannot write %s: No space left on device" % (what, p)
        c.check(line in r.stderr.splitlines(), "%s: no line %r in %r" % (name, line, r.stderr))

# FIFOs: with no reader, refused; with one, the reader gets the profile
os.mkfifo(os.path.join(d, "fifo-cpu"))
os.mkfifo(os.path.join(d, "fifo-heap"))
os.symlink(os.path.join(d, "fifo-cpu"), os.path.join(d, "fifo-link"))
r = run([exe, "quick"], env_for(os.path.join(d, "fifo-link"), os.path.join(d, "fifo-heap")))
c.check(r.returncode == 0, "fifo, no reader: status %d" % r.returncode)
for what, f in (("CPU", "fifo-link"), ("heap", "fifo-heap")):
    line = "kestrel: %s profile: cannot write %s: No such device or address" % (what, os.path.join(d, f))
    c.check(line in r.stderr.splitlines(), "fifo, no reader: no line %r in %r" % (line, r.stderr))

got = {}


def reader(name):
    with open(os.path.join(d, name), "rb") as f:
        got[name] = f.read()


ts = [threading.Thread(target=reader, args=(n,)) for n in ("fifo-cpu", "fifo-heap")]
for t in ts:
    t.start()
r = run([exe, "quick"], env_for(os.path.join(d, "fifo-link"), os.path.join(d, "fifo-heap")))
for t in ts:
    t.join(30)
c.check(r.returncode == 0 and "kestrel:" not in r.stderr, "fifo: %d %r" % (r.returncode, r.stderr))
try:
    c.check(len(json.loads(got.get("fifo-cpu", b"{}")).get("samples", [])) > 0, "fifo: CPU profile read")
except ValueError as e:
    c.check(False, "fifo: CPU profile: %s" % e)
try:
    c.check(len(gzip.decompress(got.get("fifo-heap", b""))) > 0, "fifo: heap profile read")
except (OSError, EOFError) as e:
    c.check(False, "fifo: heap profile: %s" % e)

# a symlink to a regular file: the file is written, the link stays a link
open(os.path.join(d, "real.json"), "w").close()
open(os.path.join(d, "real.pb.gz"), "w").close()
os.symlink(os.path.join(d, "real.json"), os.path.join(d, "cpu-link"))
os.symlink(os.path.join(d, "real.pb.gz"), os.path.join(d, "heap-link"))
r = run([exe, "quick"], env_for(os.path.join(d, "cpu-link"), os.path.join(d, "heap-link")))
c.check(r.returncode == 0 and "kestrel:" not in r.stderr, "link: %d %r" % (r.returncode, r.stderr))
c.check(os.path.getsize(os.path.join(d, "real.json")) > 0, "link: CPU profile in the target")
c.check(os.path.getsize(os.path.join(d, "real.pb.gz")) > 0, "link: heap profile in the target")

want = {"null": "chr", "full": "chr", "null-link": "link", "full-link": "link", "fifo-cpu": "fifo",
        "fifo-heap": "fifo", "fifo-link": "link", "real.json": "reg", "real.pb.gz": "reg",
        "cpu-link": "link", "heap-link": "link"}
kinds = {n: kind(os.path.join(d, n)) for n in os.listdir(d)}
c.check(kinds == want, "what is there afterwards: %s" % kinds)
c.exit()

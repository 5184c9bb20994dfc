#!/usr/bin/env python3
"""A profile that cannot be written is one clear line on stderr from the runtime, for
the CPU profile (the engine under test) and the heap profile: a directory that does not
exist, a program that ends with no descriptor left, a full disk (a 16 KiB tmpfs, filled;
"No space left on device", not "Input/output error"). The program's own status is
untouched and no temporary file is left. An invalid KESTREL_HEAP_INTERVAL is one line
and the default interval: the program runs and its profile is written."""
import os

from rtlib import Checker, full_disk, prog, profiled_env, tmpdir, run

c = Checker()
exe = prog("prog_nofd")


def both(d, name):
    return profiled_env(os.path.join(d, name + ".json"),
                        extra={"KESTREL_HEAP": os.path.join(d, name + ".pb.gz")})


def expect(env, args, why, where, what, either=False):
    """Each profile's line is on stderr; with `either`, a profile may instead have been
    written whole (the perf engine gives its descriptors back when it stops, and the
    profile written after it may get one), but at least one line must be there."""
    p = run([exe] + args, env)
    c.check(p.returncode == 0, "%s: status %d" % (what, p.returncode))
    lines = 0
    for kind, ext in (("CPU", ".json"), ("heap", ".pb.gz")):
        line = "kestrel: %s profile: cannot write %s%s: %s" % (kind, where, ext, why)
        said = line in p.stderr.splitlines()
        lines += said
        if either and not said:
            ok = os.path.exists(where + ext) and os.path.getsize(where + ext) > 0
            c.check(ok, "%s: %s neither written nor said: %r" % (what, kind, p.stderr))
            if os.path.exists(where + ext):
                os.unlink(where + ext)
        else:
            c.check(said, "%s: no line %r in %r" % (what, line, p.stderr))
    c.check(lines > 0, "%s: no line at all in %r" % (what, p.stderr))
    return p


d = tmpdir()
expect(both(os.path.join(d, "missing"), "p"), ["quick"], "No such file or directory",
       os.path.join(d, "missing", "p"), "no directory")
expect(both(d, "nofd"), [], "Too many open files", os.path.join(d, "nofd"), "no descriptor",
       either=True)
c.check(os.listdir(d) == [], "no descriptor: files left %s" % os.listdir(d))

with full_disk(c, d) as full:
    if full:
        expect(both(full, "p"), ["quick"], "No space left on device", os.path.join(full, "p"),
               "full disk")
        c.check(sorted(os.listdir(full)) == ["fill"], "full disk: files left %s" % os.listdir(full))

env = both(d, "iv")
env["KESTREL_HEAP_INTERVAL"] = "1000"
p = run([exe, "quick"], env)
c.check(p.returncode == 0, "bad interval: status %d" % p.returncode)
c.check("kestrel: KESTREL_HEAP_INTERVAL=1000: not a number of bytes from 65536 to 4294967296; "
        "using 524288" in p.stderr.splitlines(), "bad interval: %r" % p.stderr)
c.check(os.path.getsize(os.path.join(d, "iv.pb.gz")) > 0, "bad interval: heap profile written")
c.exit()

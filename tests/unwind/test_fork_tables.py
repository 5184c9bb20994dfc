#!/usr/bin/env python3
"""fork() while the runtime builds its unwind tables: prog_forkearly forks from the first
instant of main (as a shell or `timeout` does) for half a second, each child walking the
loader's list, with the CPU profile on in the default unwinding mode (and with the heap
profile as well). No child may hang: the tables are built inside dl_iterate_phdr, whose
lock glibc does not make anew in a fork child, and a child forked during a build waited
for it forever in its first dl_iterate_phdr. Three runs of each: a build is in progress
at one of the first forks in most runs when nothing keeps fork out of it."""
import os
import subprocess
import sys
import tempfile

from uwlib import check, failures, ROOT

LIB = os.path.join(ROOT, "build", "lib", "libkestrel.so")
PROG = os.path.join(ROOT, "build", "tests", "unwind", "prog_forkearly")


plain = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
for what, extra in (("cpu", {}), ("cpu+heap", {"KESTREL_HEAP": "heap.pb.gz"})):
    for i in range(3):
        d = tempfile.mkdtemp(prefix="kestrel-fork-")
        env = dict(plain, LD_PRELOAD=LIB, KESTREL_PROFILE=os.path.join(d, "cpu.json"),
                   KESTREL_PROFILE_ENGINE="signal")
        for k, v in extra.items():
            env[k] = os.path.join(d, v)
        try:
            p = subprocess.run([PROG, "0.5"], env=env, capture_output=True, text=True,
                               timeout=120)
        except subprocess.TimeoutExpired:
            check(False, "%s run %d: still running after 120 s" % (what, i))
            continue
        out = p.stdout.split()
        forks = int(out[1]) if len(out) >= 4 and out[0] == "forks" else 0
        check(p.returncode == 0 and out[2:4] == ["hung", "0"],
              "%s run %d: no fork child hung: %s (status %d) %s"
              % (what, i, p.stdout.strip(), p.returncode, p.stderr[-300:]))
        check(forks >= 5, "%s run %d: it forked (%d children)" % (what, i, forks))
        check(os.path.exists(os.path.join(d, "cpu.json")), "%s run %d: profile written" % (what, i))
print("%d failed" % len(failures))
sys.exit(1 if failures else 0)

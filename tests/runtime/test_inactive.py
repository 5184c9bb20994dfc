#!/usr/bin/env python3
"""Inactive means no thread, no signal handler, no allocation: a program with
libkestrel.so preloaded but KESTREL_PROFILE unset has one thread, SIGPROF, SIGRTMAX-4 (the
signal engine's signal) and SIGTERM at their default dispositions (read from the kernel), and no more address space than
the library's own mappings. The same program with KESTREL_PROFILE set shows the
opposite, so each check can fail, except for SIGPROF: it is the program's either way.

Under qemu-user (KESTREL_TEST_ARCH=aarch64) /proc/self/task lists the emulator's own
thread too: the threads are counted against the same program without the library."""
import os
import resource
import subprocess

from rtlib import EMULATED, LIB, Checker, prog, tmpdir

c = Checker()


def report(env):
    p = subprocess.run([prog("prog_inactive")], env=env, capture_output=True, text=True,
                       timeout=60)
    c.check(p.returncode == 0, "exit 0: %s" % p.stderr)
    return dict(kv.split("=") for kv in p.stdout.split())


base_env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
plain = report(base_env)
inactive = report(dict(base_env, LD_PRELOAD=LIB))
d = tmpdir()
active = report(dict(base_env, LD_PRELOAD=LIB, KESTREL_PROFILE=os.path.join(d, "p.json"),
                     KESTREL_PROFILE_ENGINE="signal"))

# The program's own threads: one.
own = int(plain["tasks"]) if EMULATED else 1
c.check(int(inactive["tasks"]) == own, "inactive: %d thread(s), got %s" % (own, inactive["tasks"]))
c.check(inactive["sigprof"] == "default", "inactive: SIGPROF %s" % inactive["sigprof"])
c.check(inactive["sigrt"] == "default", "inactive: SIGRTMAX-4 %s" % inactive["sigrt"])
c.check(inactive["sigterm"] == "default", "inactive: SIGTERM %s" % inactive["sigterm"])
grow = int(inactive["vmsize_kib"]) - int(plain["vmsize_kib"])
lib_kib = os.path.getsize(LIB) // 1024 + 64
c.check(grow <= lib_kib, "inactive: address space grew by %d KiB (library %d KiB)" %
        (grow, lib_kib))

c.check(int(active["tasks"]) >= own + 1, "active: the sampler thread runs (%s)" % active["tasks"])
c.check(active["sigrt"] == "handler", "active: SIGRTMAX-4 handled (%s)" % active["sigrt"])
c.check(active["sigprof"] == "default", "active: SIGPROF left alone (%s)" % active["sigprof"])
c.check(active["sigterm"] == "handler", "active: SIGTERM watched (%s)" % active["sigterm"])
# Active, the runtime maps its tables, sized to what a program of one thread uses: a
# few MiB (its per-thread tables alone took 126 MB before they were mapped per block).
# Under qemu-user the kernel counts the emulator's address space too: each thread the
# runtime starts is a host thread of qemu's, with a host stack of RLIMIT_STACK's size.
grow = int(active["vmsize_kib"]) - int(plain["vmsize_kib"])
host_stacks = 0
if EMULATED:
    soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    host_stacks = (int(active["tasks"]) - own) * ((soft if soft > 0 else 8 << 20) // 1024)
c.check(1024 < grow <= 16 * 1024 + host_stacks,
        "active: the runtime's tables are mapped, sized to one thread: %d KiB%s" %
        (grow, " (%d KiB of them qemu's host stacks)" % host_stacks if EMULATED else ""))
c.check(os.path.exists(os.path.join(d, "p.json")), "active: the profile was written")
c.exit()

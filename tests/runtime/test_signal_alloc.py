#!/usr/bin/env python3
"""Allocation inside a program's signal handlers (prog_sigalloc: SIGALRM and SIGUSR1
handlers that malloc and free in a tight loop while the main thread allocates; a
SIGSEGV handler that mallocs and leaves by siglongjmp). Unprofiled it runs to its end;
profiled — CPU with the engine under test, heap, both — it must too: the heap
profiler's lock held by an interrupted free, and glibc's arena lock held by an
interrupted malloc once the runtime's thread exists, each deadlocked it. Every run
ends within its time limit with status 0, its handlers ran, sigaction reports the
program's own handlers, small blocks after the siglongjmps are ordinary ones again,
and the profiles are written.

Under qemu-user (KESTREL_TEST_ARCH=aarch64) only the unprofiled and heap runs: the
program forks a child to send SIGUSR1, and with the CPU profiler the child starts the
runtime's thread again, which qemu 7.2 aborts in the fork child of a threaded program
(`cpu_exec: assertion failed: (cpu == current_cpu)`; the child's signals never come)."""
import os
import subprocess
import sys

from rtlib import EMULATED, Checker, load, prog, profiled_env, tmpdir, validate, LIB

c = Checker()
exe = prog("prog_sigalloc")
plain = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}


def run(env, what):
    try:
        p = subprocess.run([exe, "2"], env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        c.check(False, "%s: still running after 60 s (deadlocked)" % what)
        return None
    c.check(p.returncode == 0, "%s: status %d, stderr %s" % (what, p.returncode, p.stderr[-300:]))
    out = p.stdout.split()
    f = dict(zip(out[0:12:2], out[1:12:2])) if len(out) >= 12 else {}
    c.check(int(f.get("alarms", 0)) > 100 and int(f.get("usr1", 0)) > 100,
            "%s: handlers ran: %s" % (what, p.stdout.strip()))
    c.check(f.get("segv") == "200", "%s: 200 siglongjmps: %s" % (what, p.stdout.strip()))
    # A sampled block of 24 bytes is in the profiler's region (a page): at 64 KiB
    # between samples 100 blocks of 24 bytes hold one in about 27 runs, never many.
    c.check(0 < int(f.get("usable", 0)) < 100 and int(f.get("large", 100)) <= 5,
            "%s: small blocks after the jumps are the allocator's: %s" % (what, p.stdout.strip()))
    c.check("handler kept" in p.stdout, "%s: sigaction reports the program's handlers" % what)
    return p


run(plain, "unprofiled")
d = tmpdir()
cpu = os.path.join(d, "cpu.json")
heap = os.path.join(d, "heap.pb.gz")
henv = dict(plain, LD_PRELOAD=LIB, KESTREL_HEAP=heap, KESTREL_HEAP_INTERVAL="65536")
run(henv, "heap")
c.check(os.path.getsize(heap) > 0 if os.path.exists(heap) else False, "heap: profile written")
os.unlink(heap) if os.path.exists(heap) else None
if EMULATED:
    print("cpu, cpu+heap: not run under qemu-user", file=sys.stderr)
    c.exit()
run(profiled_env(cpu), "cpu")
if c.check(os.path.exists(cpu), "cpu: profile written"):
    validate(load(cpu), c, "cpu")
os.unlink(cpu) if os.path.exists(cpu) else None
run(profiled_env(cpu, extra={"KESTREL_HEAP": heap, "KESTREL_HEAP_INTERVAL": "65536"}), "cpu+heap")
c.check(os.path.exists(cpu) and os.path.exists(heap), "cpu+heap: both profiles written")
c.exit()

#!/usr/bin/env python3
"""The stack a sampled thread must spare (prog_smallstack.c): a PTHREAD_STACK_MIN
(16 KiB) thread 16 frames of 512 B deep works 300 ms under profiling as it does without,
is sampled, and not one byte of its stack below its deepest frame is written by the
sampling (the signal engine's handler runs on an alternate stack of the runtime's for
threads with less than 256 KiB of stack; the perf engine sends no signal). On a thread
with a 1 MiB stack the signal engine takes its samples on the thread's stack: the
kernel's signal frame and the handler's stay under 6 KiB (3.7 KiB measured here).
The same thread allocating there (blocks of 4 to 68 KiB, sampled often at a 64 KiB
interval) works under the heap profiler and the CPU engine together and writes no more
of its stack than it does unprofiled: the heap's sampling inside malloc read
/proc/self/maps into 4 KiB of the allocating thread's stack, and such a thread crashed
from 8 frames deep."""
import os
import subprocess

import os.path

from rtlib import (ARCH, BUILD, ENGINE, Checker, load, profiled_env, prog, rate_of, tmpdir,
                   validate)

c = Checker()
exe = prog("prog_smallstack")
plain_env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
STACK_MIN = {"x86_64": 16384, "aarch64": 131072}[ARCH]  # glibc's PTHREAD_STACK_MIN


def used(args, env):
    p = subprocess.run([exe] + args, env=env, capture_output=True, text=True, timeout=60)
    ok = p.returncode == 0 and p.stdout.startswith("used_below ")
    return (int(p.stdout.split()[1]) if ok else None), p.returncode


for stack, extra in ((STACK_MIN, 0), (1 << 20, 6144 if ENGINE == "signal" else 0)):
    args = ["16", str(stack)]
    base, rc = used(args, plain_env)
    c.check(base is not None, "%d-byte stack unprofiled: exit %d" % (stack, rc))
    d = tmpdir()
    path = os.path.join(d, "p.json")
    got, rc = used(args, profiled_env(path))
    what = "%d-byte stack, 16 frames of 512 B, %s engine" % (stack, ENGINE)
    c.check(got is not None, "%s: exit %d" % (what, rc))
    if got is not None and base is not None:
        c.check(got <= base + extra, "%s: %d bytes below the deepest frame written, %d unprofiled"
                % (what, got, base))
    if c.check(os.path.exists(path), "%s: a profile" % what):
        prof = load(path)
        validate(prof, c, what)
        idx = [i for i, t in enumerate(prof["threads"]) if t["label"] == "thread"]
        n = sum(1 for s in prof["samples"] if s[1] in idx and s[3] == 0)
        c.check(n >= 0.3 * rate_of(prof, c, 997) / 3,
                "%s: %d on-CPU samples of the thread's 300 ms" % (what, n))

for stack, extra in ((STACK_MIN, 0), (1 << 20, 6144 if ENGINE == "signal" else 0)):
    args = ["16", str(stack), "alloc"]
    base, rc = used(args, plain_env)
    c.check(base is not None, "%d-byte stack allocating, unprofiled: exit %d" % (stack, rc))
    d = tmpdir()
    path, heap = os.path.join(d, "p.json"), os.path.join(d, "h.pb.gz")
    got, rc = used(args, profiled_env(path, extra={"KESTREL_HEAP": heap,
                                                   "KESTREL_HEAP_INTERVAL": "65536"}))
    what = "%d-byte stack, 16 frames of 512 B, allocating, heap and %s engine" % (stack, ENGINE)
    c.check(got is not None, "%s: exit %d" % (what, rc))
    if got is not None and base is not None:
        c.check(got <= base + extra, "%s: %d bytes below the deepest frame written, %d unprofiled"
                % (what, got, base))
    c.check(os.path.exists(path), "%s: a CPU profile" % what)
    if c.check(os.path.exists(heap), "%s: a heap profile" % what):
        r = subprocess.run([os.path.join(BUILD, "bin", "kestrel"), "report", "--sample-type",
                            "alloc_space", heap], capture_output=True, text=True, timeout=120)
        c.check(r.returncode == 0 and "bottom" in r.stdout,
                "%s: the heap report names the allocating function: %s" % (what, r.stdout[-800:]))

c.exit()

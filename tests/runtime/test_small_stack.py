#!/usr/bin/env python3
"""The stack a sampled thread must spare (prog_smallstack.c): a thread of
PTHREAD_STACK_MIN (16 KiB on x86-64, 128 KiB on aarch64) and one of 1 MiB, each 16 frames
of 512 B deep, work 300 ms under profiling as they do without, are sampled, and not one
byte of their stack below the deepest frame is written by the sampling. The signal
engine's handler runs on an alternate stack of the runtime's: the kernel's signal frame
alone is 3 KB on x86-64 with AVX-512 and 4.6 KB on aarch64, and a walk that reads an FDE
adds 2 KB (when it ran on the 1 MiB thread's own stack, the handler wrote 5.8 KiB below
its deepest frame on x86-64 and 7.2 KiB on aarch64). The perf engine sends no signal.
The same threads allocating there (blocks of 4 to 68 KiB, sampled often at a 64 KiB
interval) work under the heap profiler and the CPU engine together and write no more of
their stack than they do unprofiled: a sample's work runs on a side stack of the
runtime's (on the thread's stack its walk wrote 2047 bytes on aarch64, where malloc
alone writes 1023), and the heap's sampling inside malloc read /proc/self/maps into
4 KiB of the allocating thread's stack once, when such a thread crashed from 8 frames
deep."""
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


for stack in (STACK_MIN, 1 << 20):
    args = ["16", str(stack)]
    base, rc = used(args, plain_env)
    c.check(base is not None, "%d-byte stack unprofiled: exit %d" % (stack, rc))
    d = tmpdir()
    path = os.path.join(d, "p.json")
    got, rc = used(args, profiled_env(path))
    what = "%d-byte stack, 16 frames of 512 B, %s engine" % (stack, ENGINE)
    c.check(got is not None, "%s: exit %d" % (what, rc))
    if got is not None and base is not None:
        c.check(got <= base, "%s: %d bytes below the deepest frame written, %d unprofiled"
                % (what, got, base))
    if c.check(os.path.exists(path), "%s: a profile" % what):
        prof = load(path)
        validate(prof, c, what)
        idx = [i for i, t in enumerate(prof["threads"]) if t["label"] == "thread"]
        n = sum(1 for s in prof["samples"] if s[1] in idx and s[3] == 0)
        c.check(n >= 0.3 * rate_of(prof, c, 997) / 3,
                "%s: %d on-CPU samples of the thread's 300 ms" % (what, n))

for stack in (STACK_MIN, 1 << 20):
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
        c.check(got <= base, "%s: %d bytes below the deepest frame written, %d unprofiled"
                % (what, got, base))
    c.check(os.path.exists(path), "%s: a CPU profile" % what)
    if c.check(os.path.exists(heap), "%s: a heap profile" % what):
        r = subprocess.run([os.path.join(BUILD, "bin", "kestrel"), "report", "--sample-type",
                            "alloc_space", heap], capture_output=True, text=True, timeout=120)
        c.check(r.returncode == 0 and "bottom" in r.stdout,
                "%s: the heap report names the allocating function: %s" % (what, r.stdout[-800:]))

c.exit()

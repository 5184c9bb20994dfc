#!/usr/bin/env python3
"""Signals that land in the heap profiler's sampling (prog_sigsample: the main thread
allocates blocks of 16 to 80 KiB, most of them sampled at a 64 KiB interval). A sample's
work runs on a side stack of the runtime's, so that it writes nothing of the allocating
thread's stack (test_small_stack.py); a signal taken meanwhile must not notice:

- a handler of the program (SIGALRM every 250 µs, 192 KiB of stack, as a handler may
  use on an 8 MiB stack) runs on the thread's own stack, below the sample's frames,
  every time, and the program ends normally; some of those signals must have come
  while the thread ran on the side stack (the handler reads the interrupted stack
  pointer), or the test says nothing;
- a CPU sample taken there is kestrel's own work, not the program's: each engine leaves
  it out and counts it (engine_stats.runtime_samples, at least 10 here), and the signal
  engine's other stacks are whole (at most 2% cut).

Under qemu-user (KESTREL_TEST_ARCH=aarch64) as natively."""
import os
import subprocess

from rtlib import ENGINE, LIB, Checker, load, profiled_env, prog, tmpdir, validate

c = Checker()
exe = prog("prog_sigsample")
plain = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
HEAP = {"KESTREL_HEAP_INTERVAL": "65536"}


def run(args, env, what):
    p = subprocess.run([exe] + args, env=env, capture_output=True, text=True, timeout=120)
    out = p.stdout.split()
    f = {k: int(v) for k, v in zip(out[0::2], out[1::2]) if v.isdigit()}
    c.check(p.returncode == 0 and len(f) == 3,
            "%s: exit %d, %s %s" % (what, p.returncode, p.stdout.strip(), p.stderr[-300:]))
    return f


f = run(["1", "handler"], plain, "unprofiled")
c.check(f.get("alarms", 0) > 100 and f.get("interrupted_off") == 0 and f.get("ran_off") == 0,
        "unprofiled: the handler ran on the main thread's stack, and so did the code it "
        "interrupted: %s" % f)

d = tmpdir()
heap = os.path.join(d, "h.pb.gz")
f = run(["1", "handler"], dict(plain, LD_PRELOAD=LIB, KESTREL_HEAP=heap, **HEAP), "heap")
c.check(f.get("alarms", 0) > 100 and f.get("interrupted_off", 0) > 0,
        "heap: alarms came while a sample ran on its side stack: %s" % f)
c.check(f.get("ran_off", 1) == 0,
        "heap: the handler ran on the main thread's own stack every time: %s" % f)
c.check(os.path.exists(heap), "heap: a heap profile")

path = os.path.join(d, "p.json")
heap2 = os.path.join(d, "h2.pb.gz")
run(["2"], profiled_env(path, extra=dict(HEAP, KESTREL_HEAP=heap2)), "heap and %s engine" % ENGINE)
c.check(os.path.exists(heap2), "heap and %s engine: a heap profile" % ENGINE)
if c.check(os.path.exists(path), "heap and %s engine: a CPU profile" % ENGINE):
    prof = load(path)
    validate(prof, c, "heap and %s engine" % ENGINE)
    walks = sum(prof["walk_stops"].values())
    if ENGINE == "signal":
        c.check(walks > 100 and prof["walks_cut_short"] * 50 <= walks,
                "signal engine: %d of %d walks cut short: %s" %
                (prof["walks_cut_short"], walks, {k: v for k, v in prof["walk_stops"].items() if v}))
    n = prof.get("engine_stats", {}).get("runtime_samples", 0)
    c.check(n >= 10, "%s engine: %d samples in the heap's sampling, left out and counted"
            % (ENGINE, n))

c.exit()

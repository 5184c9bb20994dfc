#!/usr/bin/env python3
"""2,000 short threads created and joined during profiling: no crash, no leak (open
files and address space as without the profiler), every thread registered (2,001
thread records, nothing past the registry's limits), and every thread that ran long
enough (50 ms of CPU) appears with on-CPU samples (at least 3, where 50 are due:
the sampler thread itself may wait for a CPU on a loaded machine)."""
import os
import subprocess

from rtlib import Checker, load, prog, profiled_env, tmpdir, validate

c = Checker()
plain_env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}


def run(env):
    p = subprocess.run([prog("prog_shortthreads")], env=env, capture_output=True, text=True,
                       timeout=300)
    c.check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr))
    out = {"long": []}
    for line in p.stdout.splitlines():
        k, *v = line.split()
        if k == "long":
            out["long"].append(int(v[0]))
        else:
            out[k] = [int(x) for x in v]
    return out


plain = run(plain_env)
d_ = tmpdir()
path = os.path.join(d_, "t.json")
prof = run(profiled_env(path))
c.check(prof["fds"][0] == prof["fds"][1], "open files before/after: %s" % prof["fds"])
grow_plain = plain["vm"][1] - plain["vm"][0]
grow_prof = prof["vm"][1] - prof["vm"][0]
c.check(grow_prof - grow_plain <= 4096, "address space grew %d KiB profiled, %d KiB not" %
        (grow_prof, grow_plain))
d = load(path)
validate(d, c, "short threads")
th = d["threads"]
c.check(len(th) == 2009, "2,000 threads + 8 warm-up + main registered: %d" % len(th))
c.check(d["past_limits"].get("threads") == 0, "no thread past the limits")
# The signal engine drains every thread's ring at each tick: it must lose nothing.
# (The perf engine counts records the kernel could not write as dropped; they are
# reported, not checked, here.)
if d["engine"] == "signal":
    c.check(d["dropped"] == 0, "no sample dropped: %d" % d["dropped"])
else:
    print("%s engine: %d samples dropped of %d" % (d["engine"], d["dropped"], len(d["samples"])))
by_tid = {}
for i, t in enumerate(th):
    by_tid.setdefault(t.get("tid"), []).append(i)
samples = [0] * len(th)
for s in d["samples"]:
    samples[s[1]] += s[3] == 0
missing = [tid for tid in prof["long"] if not any(samples[i] >= 3 for i in by_tid.get(tid, []))]
c.check(len(prof["long"]) == 40 and not missing,
        "long threads without their samples: %s of %d" % (missing, len(prof["long"])))
c.exit()

#!/usr/bin/env python3
"""What a fork costs a profiled program: bench/fork/fork_work.c (fork a child that
ends at once, reap it; median wall microseconds over N forks per run, and CPU
microseconds per fork of the parent and its children, and the median CPU a child has
used when fork returns in it: the runtime's fork handlers) under each
configuration, interleaved over R rounds (in a new order each round). Reported per configuration: the median over
rounds of the per-run figures (min..max), and its ratio to the unprofiled program.
With --base LIB, the same configurations run with another build of libkestrel.so
beside this one (e.g. the build before a change).

--stacks S makes the program allocate from S distinct call paths first (a heap profile
then holds S stacks when it forks).

Usage: bench/fork/run.py [--rounds R] [--forks N] [--stacks S] [--lib LIB] [--base LIB]
                         [--markdown FILE]"""
import argparse
import os
import random
import statistics
import subprocess
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORK = os.path.join(ROOT, "build", "bench", "fork", "fork_work")
LIB = os.path.join(ROOT, "build", "lib", "libkestrel.so")

ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--forks", type=int, default=200)
ap.add_argument("--base")
ap.add_argument("--lib", default=LIB, help="the libkestrel.so under test (default: the build's)")
ap.add_argument("--stacks", type=int, default=0)
ap.add_argument("--markdown")
a = ap.parse_args()
tmp = tempfile.mkdtemp(prefix="kestrel-fork-")
plain = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_") and k != "LD_PRELOAD"}


def configs(lib, tag):
    heap = {"KESTREL_HEAP": os.path.join(tmp, "h.%p.pb.gz"), "KESTREL_HEAP_INTERVAL": "65536"}
    cpu = {"KESTREL_PROFILE": os.path.join(tmp, "c.%p.json")}
    return [("preloaded, inactive" + tag, lib, {}), ("heap" + tag, lib, heap),
            ("CPU, signal engine" + tag, lib, dict(cpu, KESTREL_PROFILE_ENGINE="signal")),
            ("CPU, perf engine" + tag, lib, dict(cpu, KESTREL_PROFILE_ENGINE="perf")),
            ("CPU (perf) + heap" + tag, lib, dict(cpu, KESTREL_PROFILE_ENGINE="perf", **heap))]


runs = [("plain", None, {})] + configs(a.lib, "")
if a.base:
    runs += configs(a.base, " (base)")
res = {name: [] for name, _, _ in runs}
cpu = {name: [] for name, _, _ in runs}
born = {name: [] for name, _, _ in runs}
load_before = open("/proc/loadavg").read().split()[:3]
order = list(runs)
rng = random.Random(1)
for r in range(a.rounds):
    rng.shuffle(order)  # a new order each round: no configuration always runs last
    for name, lib, extra in order:
        env = dict(plain, **extra)
        if lib:
            env["LD_PRELOAD"] = lib
        out = subprocess.run([WORK, str(a.forks), "16", str(a.stacks)], env=env, capture_output=True, text=True,
                             timeout=600)
        if out.returncode != 0:
            raise SystemExit("%s: status %d: %s" % (name, out.returncode, out.stderr))
        res[name].append(float(out.stdout.split()[1]))
        cpu[name].append(float(out.stdout.split()[3]))
        born[name].append(float(out.stdout.split()[4]))
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
load_after = open("/proc/loadavg").read().split()[:3]
base = statistics.median(res["plain"])
lines = ["### fork: fork a child that ends at once and reap it; %d forks a run, %d interleaved "
         "rounds, median of the runs' figures (min..max); %d distinct stacks allocated first "
         "(heap interval 64 KiB)" % (a.forks, a.rounds, a.stacks), "",
         "| configuration | wall µs per fork | × plain | CPU µs per fork | × plain "
         "| child's CPU µs when fork returns | × plain |",
         "|---|---|---|---|---|---|---|"]
cbase = statistics.median(cpu["plain"])
bbase = statistics.median(born["plain"])
for name, _, _ in runs:
    v, u, w = res[name], cpu[name], born[name]
    m, mc, mb = statistics.median(v), statistics.median(u), statistics.median(w)
    lines.append("| %s | %.0f (%.0f..%.0f) | %.2f | %.0f (%.0f..%.0f) | %.2f | %.0f (%.0f..%.0f) | %.2f |" %
                 (name, m, min(v), max(v), m / base, mc, min(u), max(u), mc / cbase,
                  mb, min(w), max(w), mb / bbase))
lines += ["", "load average before: %s; after: %s" % (" ".join(load_before), " ".join(load_after))]
text = "\n".join(lines)
print(text)
if a.markdown:
    with open(a.markdown, "a") as f:
        f.write("\n" + text + "\n")

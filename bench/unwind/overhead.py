#!/usr/bin/env python3
"""bench/unwind/overhead.py [ROUNDS] [HZ] [LIB...]   (UW_ITERS=N: the work, default 25)

The CPU cost of CFI unwinding: prog_chain built without frame pointers (two threads,
qsort with a callback and memset through a shared library), fixed work, its own
CPU time (getrusage at exit: the profiler's threads inside the process count, perf's
own process does not), unprofiled, under kestrel (signal and perf engines, --unwind
fp and cfi), under perf record -g and --call-graph dwarf and under samply record
--save-only (which copies the stack and unwinds it afterwards, as perf's dwarf mode
does), interleaved rounds,
medians. Prints a markdown table; the share of samples whose stack reaches main or
thread_main is read from each profile, and for kestrel the on-CPU samples, the stack bytes
the kernel copied per sample (perf engine, cfi) and the program CPU each sample cost
(its CPU above the unprofiled run's, over its samples). Each further LIB (another
build of libkestrel.so) adds its kestrel configurations to the same rounds, marked
[B], [C]..., to compare builds side by side."""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import samply_read  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXE = os.path.join(ROOT, "build", "tests", "unwind", "nofp", "prog_chain")
LIB = os.path.join(ROOT, "build", "lib", "libkestrel.so")
KESTREL = os.path.join(ROOT, "build", "bin", "kestrel")
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
hz = int(sys.argv[2]) if len(sys.argv) > 2 else 997
OTHER_LIBS = sys.argv[3:]
SECS, ITERS = "0", os.environ.get("UW_ITERS", "25")  # rounds of work a thread (25: about 0.1 s of CPU each today)
tmp = tempfile.mkdtemp(prefix="kestrel-uwbench-")


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpu_of(stderr):
    for line in stderr.splitlines():
        if line.startswith("cpu_s "):
            return float(line.split()[1])
    raise SystemExit("no cpu_s line: " + stderr[-500:])


def rooted_share(folded):
    tot = good = 0
    for line in open(folded):
        st, n = line.rsplit(" ", 1)
        fr = st.split(";")
        if any("futex" in f for f in fr):
            continue
        tot += int(n)
        good += int(n) if ("main" in fr or "thread_main" in fr) else 0
    return good / tot if tot else 0.0


def run(cfg):
    env = dict(os.environ, PROG_CHAIN_CPU="1")
    env = {k: v for k, v in env.items() if not k.startswith("KESTREL_")}
    env["PROG_CHAIN_CPU"] = "1"
    if cfg == "none":
        t0 = children_cpu()
        p = subprocess.run([EXE, SECS, ITERS], env=env, capture_output=True, text=True)
        return cpu_of(p.stderr), children_cpu() - t0, None
    if cfg.startswith("kestrel"):
        lib = LIB
        if " [" in cfg:
            cfg_base, tag = cfg.split(" [")
            lib = OTHER_LIBS[ord(tag[0]) - ord("B")]
        else:
            cfg_base = cfg
        _, engine, mode = cfg_base.split("-")
        raw = os.path.join(tmp, "k.json")
        env.update(LD_PRELOAD=lib, KESTREL_PROFILE=raw, KESTREL_PROFILE_ENGINE=engine,
                   KESTREL_PROFILE_UNWIND=mode, KESTREL_PROFILE_HZ=str(hz))
        t0 = children_cpu()
        p = subprocess.run([EXE, SECS, ITERS], env=env, capture_output=True, text=True)
        total = children_cpu() - t0
        cpu = cpu_of(p.stderr)
        out = os.path.join(tmp, "k.folded")
        e = subprocess.run([KESTREL, "export", "--format", "folded", "-o", out, raw],
                           capture_output=True, text=True)
        # (fp mode on code without frame pointers records junk return addresses, and
        # today's reader rejects one above 2^63: no share for such a run)
        sh = rooted_share(out) if e.returncode == 0 else None
        d = json.load(open(raw))
        st = d.get("engine_stats", {})
        copies = st.get("stack_copies", 0)
        extra[cfg].append((sum(1 for x in d["samples"] if x[3] == 0),  # on-CPU
                           st.get("stack_copy_bytes", 0) / copies if copies else None))
        for f in (raw, out):
            if os.path.exists(f):
                os.unlink(f)
        return cpu, total, sh
    if cfg == "samply":
        out = os.path.join(tmp, "samply.json.gz")
        t0 = children_cpu()
        p = subprocess.run(samply_read.run_argv([samply_read.SAMPLY, "record", "--save-only",
                                                 "--unstable-presymbolicate", "-r", str(hz), "-o", out,
                                                 "--", EXE, SECS, ITERS], tmp),
                           env=env, capture_output=True, text=True)
        total = children_cpu() - t0
        cpu = cpu_of(p.stderr)
        tot = good = 0
        for fr, n in samply_read.stacks(out):
            if any("futex" in f for f in fr):
                continue
            tot += n
            good += n if ("main" in fr or "thread_main" in fr) else 0
        return cpu, total, (good / tot if tot else 0.0)
    data = os.path.join(tmp, "perf.data")
    cg = ["-g"] if cfg == "perf-g" else ["--call-graph", "dwarf"]
    t0 = children_cpu()
    p = subprocess.run(["perf", "record", "-q", "-F", str(hz)] + cg + ["-o", data, "--", EXE,
                       SECS, ITERS], env=env, capture_output=True, text=True)
    total = children_cpu() - t0
    cpu = cpu_of(p.stderr)
    s = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym"], capture_output=True,
                       text=True).stdout
    tot = good = 0
    for block in s.split("\n\n"):
        fr = [(l.split() + ["", ""])[1] for l in block.strip().splitlines()]
        if not fr or any("futex" in f for f in fr):
            continue
        tot += 1
        good += 1 if ("main" in fr or "thread_main" in fr) else 0
    return cpu, total, (good / tot if tot else 0.0)


cfgs = ["none", "kestrel-signal-fp", "kestrel-signal-cfi", "kestrel-perf-fp",
        "kestrel-perf-cfi", "perf-g", "perf-dwarf"]
if os.path.exists(samply_read.SAMPLY):
    cfgs.append("samply")
for k, _ in enumerate(OTHER_LIBS):
    cfgs += ["%s [%s]" % (c, chr(ord("B") + k)) for c in
             ("kestrel-signal-fp", "kestrel-signal-cfi", "kestrel-perf-fp", "kestrel-perf-cfi")]
res = {c: [] for c in cfgs}
tot = {c: [] for c in cfgs}
share = {c: [] for c in cfgs}
extra = {c: [] for c in cfgs}  # kestrel: (samples, copied bytes per sample or None)
for r in range(rounds):
    for c in cfgs[r % len(cfgs):] + cfgs[:r % len(cfgs)]:
        cpu, total, sh = run(c)
        res[c].append(cpu)
        tot[c].append(total)
        if sh is not None:
            share[c].append(sh)
        elif c != "none":
            share[c].append(float("nan"))
for k, lib in enumerate(OTHER_LIBS):
    print("[%s]: %s" % (chr(ord("B") + k), lib))
base = statistics.median(res["none"])
tbase = statistics.median(tot["none"])
print("| %d Hz, %d rounds | program CPU (median) | overhead, program | overhead, with the "
      "profiler's own process | samples reaching main | samples | stack bytes copied a sample "
      "| program CPU a sample |" % (hz, rounds))
print("|---|---|---|---|---|---|---|---|")
for c in cfgs:
    m = statistics.median(res[c])
    ok = [x for x in share[c] if x == x]
    sh = "%.1f%% (%d runs)" % (100 * statistics.median(ok), len(ok)) if ok else \
        ("unreadable" if share[c] else "-")
    t = statistics.median(tot[c])
    n = statistics.median([e[0] for e in extra[c]]) if extra[c] else None
    b = [e[1] for e in extra[c] if e[1] is not None]
    print("| %s | %.3f s | %+.1f%% | %+.1f%% | %s | %s | %s | %s |" % (
        c, m, 100 * (m / base - 1), 100 * (t / tbase - 1), sh,
        "%d" % n if n else "-", "%.0f B" % statistics.median(b) if b else "-",
        "%.1f µs" % (1e6 * (m - base) / n) if n else "-"))

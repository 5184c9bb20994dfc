#!/usr/bin/env python3
"""bench/deep/compiler.py [ROUNDS] [HZ]

Deep stacks without frame pointers: Debian's clang++ -O2 on a large generated file
(tests/unwind/gen_cxx.py 8; its parser runs 20-130 KiB deep), unprofiled, under kestrel
(default settings: the perf engine with stack copies read on past their end; and the
signal engine) and under perf record -g and perf record --call-graph dwarf, at HZ
(default 997), interleaved rounds, medians.

Per configuration: the compiler's own CPU time (user + system, from a wrapper's
getrusage of its child: kestrel's threads inside the process count, perf's process does
not), its overhead over the unprofiled median, the CPU of every process (perf's
included), and the share of the compiler's on-CPU samples whose stack reaches the
thread's root (kestrel: whole walks in the raw file; perf: the outermost frame in libc,
the outermost frame _start, or __libc_start_*, as `perf script` unwinds it, read in
the first round only). KESTREL_BENCH_LIB names another libkestrel.so to measure;
KESTREL_BENCH_BASE_LIB adds a configuration "kestrel-base" with that library (an earlier
build, side by side). KESTREL_BENCH_USER runs every configuration, perf's included, as
that user (runuser, the bench run as root): a user without CAP_IPC_LOCK, whose rings'
locked memory is limited (perf_event_paranoid must let the user sample: 1 or less).
Prints a markdown table."""
import glob
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import rawjson  # noqa: E402  (a run past a second streams its raw file in chunks)
LIB = os.environ.get("KESTREL_BENCH_LIB", os.path.join(ROOT, "build", "lib", "libkestrel.so"))
BASE_LIB = os.environ.get("KESTREL_BENCH_BASE_LIB")
USER = os.environ.get("KESTREL_BENCH_USER")
CLANG = shutil.which("clang++")
PERF = shutil.which("perf")
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
hz = int(sys.argv[2]) if len(sys.argv) > 2 else 997
tmp = tempfile.mkdtemp(prefix="kestrel-deepbench-")
os.chmod(tmp, 0o777)
src = os.path.join(tmp, "big.cpp")
with open(src, "w") as f:
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "unwind", "gen_cxx.py"), "8"],
                   stdout=f, check=True)
os.chmod(src, 0o644)
# The compiler's own CPU: a wrapper that runs it and prints its child's rusage.
WRAP = [shutil.which("python3", path="/usr/bin") if USER else sys.executable, "-c", "import resource,subprocess,sys;subprocess.run(sys.argv[1:],check=True);"
        "r=resource.getrusage(resource.RUSAGE_CHILDREN);"
        "print('cpu_s',r.ru_utime+r.ru_stime,file=sys.stderr)"]
COMPILE = [CLANG, "-O2", "-c", src, "-o", os.path.join(tmp, "big.o")]
WHOLE = ("end", "top", "cfi_end")


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpu_of(stderr):
    for line in stderr.splitlines():
        if line.startswith("cpu_s "):
            return float(line.split()[1])
    raise SystemExit("no cpu_s line: " + stderr[-800:])


def kestrel_whole(d):
    best = None  # the compiler's file (the wrapper is profiled too)
    for f in glob.glob(os.path.join(d, "*.json")):
        raw = rawjson.load(f)
        if os.path.basename(raw.get("exe", "")).startswith("clang"):
            best = raw
    names, ends = list(best["walk_stops"]), best["stack_ends"]
    run = [names[ends[s[2]]] for s in best["samples"] if s[3] == 0]
    return sum(1 for e in run if e in WHOLE) / len(run), len(run), best.get("engine_stats", {})


def perf_whole(data):
    out = subprocess.run([PERF, "script", "-f", "-i", data, "--no-inline", "-F", "comm,ip,sym,dso",
                          "--comm", "clang++"], capture_output=True, text=True).stdout
    n = whole = 0
    last = None
    for line in out.splitlines() + [""]:
        if not line.strip():
            if last is not None:  # the outermost frame: the process's or the loader's start
                n += 1
                sym = last.split()[1] if len(last.split()) > 2 else ""
                whole += sym.startswith(("_start", "_dl_start", "__libc_start"))
            last = None
        elif line.startswith("\t") or line.startswith(" "):
            last = line
        else:
            last = last or ""
    return whole / n if n else 0.0, n


def as_user(argv, env):
    """argv run as KESTREL_BENCH_USER with env's kestrel settings, or as it is."""
    if not USER:
        return argv
    keep = ["%s=%s" % (k, v) for k, v in env.items() if k.startswith("KESTREL_") or k == "LD_PRELOAD"]
    return ["runuser", "-u", USER, "--", "env"] + keep + argv


def run(cfg, first):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    d = os.path.join(tmp, cfg)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    os.chmod(d, 0o777)
    whole = None
    t0 = children_cpu()
    if cfg == "none":
        p = subprocess.run(as_user(WRAP + COMPILE, env), env=env, capture_output=True, text=True)
    elif cfg.startswith("kestrel"):
        env.update(LD_PRELOAD=BASE_LIB if cfg == "kestrel-base" else LIB,
                   KESTREL_PROFILE=os.path.join(d, "k.%p.json"), KESTREL_PROFILE_HZ=str(hz))
        if cfg == "kestrel-signal":
            env["KESTREL_PROFILE_ENGINE"] = "signal"
        p = subprocess.run(as_user(WRAP + COMPILE, env), env=env, capture_output=True, text=True)
        whole = kestrel_whole(d)
    else:
        data = os.path.join(d, "perf.data")
        g = ["-g"] if cfg == "perf-g" else ["--call-graph", "dwarf"]
        p = subprocess.run(as_user([PERF, "record", "-q", "-F", str(hz)] + g + ["-o", data, "--"] +
                                   WRAP + COMPILE, env), env=env, capture_output=True, text=True)
        if first:
            whole = perf_whole(data)
    total = children_cpu() - t0
    if p.returncode:
        raise SystemExit("%s failed: %s" % (cfg, p.stderr[-800:]))
    return cpu_of(p.stderr), total, whole


CFGS = ["none", "kestrel"] + (["kestrel-base"] if BASE_LIB else []) + \
    ["kestrel-signal", "perf-g", "perf-dwarf"]
res = {c: {"cpu": [], "all": [], "whole": None, "stats": None} for c in CFGS}
for r in range(rounds):
    for c in CFGS:
        cpu, total, whole = run(c, r == 0)
        res[c]["cpu"].append(cpu)
        res[c]["all"].append(total)
        if whole is not None and res[c]["whole"] is None:
            res[c]["whole"] = whole
        print("round %d %-15s cpu %.3f s all %.3f s" % (r, c, cpu, total), file=sys.stderr)
base = statistics.median(res["none"]["cpu"])
print("| configuration | compiler CPU (median) | overhead | all processes | samples reaching the root |")
print("|---|---|---|---|---|")
for c in CFGS:
    cpu, tot = statistics.median(res[c]["cpu"]), statistics.median(res[c]["all"])
    w = res[c]["whole"]
    ws = "-" if w is None else "%.1f%% of %d" % (100 * w[0], w[1])
    print("| %s | %.3f s | %+.1f%% | %+.1f%% | %s |" %
          (c, cpu, 100 * (cpu / base - 1), 100 * (tot / base - 1), ws))
# Paired by round (the machine's load moves between rounds more than within one): each
# round's difference to perf --call-graph dwarf, in points of the unprofiled median.
print("\n| paired with perf-dwarf, per round | compiler CPU: median (min..max) | all processes: median (min..max) |")
print("|---|---|---|")
for c in [c for c in CFGS if c not in ("none", "perf-dwarf")]:
    dc = [100 * (a - b) / base for a, b in zip(res[c]["cpu"], res["perf-dwarf"]["cpu"])]
    da = [100 * (a - b) / base for a, b in zip(res[c]["all"], res["perf-dwarf"]["all"])]
    print("| %s | %+.1f (%+.1f..%+.1f) | %+.1f (%+.1f..%+.1f) |" %
          (c, statistics.median(dc), min(dc), max(dc), statistics.median(da), min(da), max(da)))
stats = res["kestrel"]["whole"][2] if res["kestrel"]["whole"] else {}
print("\nkestrel (perf engine) first round: %s" %
      {k: v for k, v in stats.items() if "stack" in k})
print("rounds %d at %d Hz, medians; overheads against the unprofiled median %.3f s" %
      (rounds, hz, base))
shutil.rmtree(tmp)

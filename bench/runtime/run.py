#!/usr/bin/env python3
"""The CPU runtime beside its peers (issue 2): kestrel's two engines (perf, the default
where the kernel allows it, and signal, the fallback), `perf record -g` and gperftools' libprofiler (LD_PRELOAD, CPUPROFILE, CPUPROFILE_FREQUENCY) on
the same fixed work — bench/engines/work.c, 8 threads, a fixed number of units, not
a fixed time — at 100, 997, 4999 and 10000 Hz. Every configuration runs once per
round, in a rotating order, and each figure is the median over the rounds.

  rate      on-CPU samples / (CPU seconds x requested Hz), per thread (median thread
            and lowest thread); gperftools records no thread, so its figure is the
            whole process's
  overhead  the workload's own CPU time at the end of main against the unprofiled
            run of the same round; and all processes (wait4 rusage: perf's own
            process, kestrel's final write included)
  memory    peak RSS beyond the unprofiled run (perf record: perf's own peak RSS)

Then the cost of one sample at stack depth 32 for the signal engine, whose handler runs
in the program (bench/runtime/handler_cost.c), and the runtime's memory after 60 s of 8
threads at 997 Hz with each engine (bench/runtime/memory.c).

Usage: run.py [--rounds N] [--rates ...] [--memory-seconds S] [--markdown FILE]
"""
import argparse
import importlib.util
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
spec = importlib.util.spec_from_file_location("engines_bench", os.path.join(ROOT, "bench/engines/run.py"))
eng = importlib.util.module_from_spec(spec)
spec.loader.exec_module(eng)  # work.c's runner and the kestrel/perf sample readers

GPERF = "/usr/lib/x86_64-linux-gnu/libprofiler.so.0"
THREADS = 8
ENGINES = ("perf", "signal")
NAMES = {"perf": "kestrel (perf engine, the default)", "signal": "kestrel (signal engine, the fallback)"}
BUILD = os.path.join(ROOT, "build/bench/runtime")


def gperf_samples(path):
    """Total samples in a gperftools CPU profile and the period its header claims."""
    data = open(path, "rb").read()
    w = struct.unpack_from("<%dQ" % (len(data) // 8), data)
    period_us, i, total = w[3], 5, 0
    while i + 2 < len(w):
        count, n = w[i], w[i + 1]
        if count == 0 and n == 1 and w[i + 2] == 0:
            break
        total += count
        i += 2 + n
    return total, period_us


def one(cfg, hz, tmp):
    if cfg != "gperftools":
        return eng.one(cfg, THREADS, hz, tmp)
    side, prof = os.path.join(tmp, "work.json"), os.path.join(tmp, "gperf.prof")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env.update(LD_PRELOAD=GPERF, CPUPROFILE=prof, CPUPROFILE_FREQUENCY=str(hz))
    rc, ru, err = eng.run_child([eng.WORK, str(THREADS), str(eng.UNITS[THREADS]), side], env)
    if rc != 0:
        sys.exit("bench: gperftools at %d Hz: exit %d: %s" % (hz, rc, err.strip()))
    work = json.load(open(side))
    n, period_us = gperf_samples(prof)
    rate = n / (work["cpu_s"] * hz)
    return {"cpu": work["cpu_s"], "total": ru.ru_utime + ru.ru_stime,
            "rss_kb": work["maxrss_kb"], "rate_med": rate, "rate_min": rate,
            "claimed_hz": 1e6 / period_us if period_us else 0}


def handler_cost(rounds, tmp):
    exe = os.path.join(BUILD, "handler_cost")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env["KESTREL_PROFILE_ENGINE"] = "signal"
    out = subprocess.run([exe, tmp, str(rounds)], env=env, capture_output=True, text=True,
                         check=True).stdout
    walk, per_sample = None, []
    for line in out.splitlines():
        p = line.split()
        if p[0] == "walk_ns":
            walk = float(p[1])
        elif p[0] == "round":
            base, prof = int(p[3]), int(p[5])
            raw = json.load(open(p[7]))
            main = [s for s in raw["samples"] if s[1] == 0 and s[3] == 0]
            per_sample.append((prof - base) / len(main) if main else float("nan"))
    return walk, statistics.median(per_sample), per_sample


def memory(seconds, tmp):
    exe = os.path.join(BUILD, "memory")
    base = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    res = {}
    for cfg in ENGINES + ("none",):
        env = dict(base)
        raw = os.path.join(tmp, "mem.json")
        if cfg != "none":
            env.update(LD_PRELOAD=eng.LIB, KESTREL_PROFILE=raw, KESTREL_PROFILE_ENGINE=cfg,
                       KESTREL_PROFILE_HZ="997")
        out = subprocess.run([exe, str(seconds)], env=env, capture_output=True, text=True,
                             check=True).stdout.split()
        res[cfg] = {"hwm": int(out[1]), "rss": int(out[3])}
        if cfg != "none":
            d = json.load(open(raw))
            res[cfg].update(file_mib=os.path.getsize(raw) / 2**20, samples=len(d["samples"]),
                            tables=d["tables"])
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rates", default="100,997,4999,10000")
    ap.add_argument("--memory-seconds", type=float, default=60)
    ap.add_argument("--markdown")
    a = ap.parse_args()
    rates = [int(x) for x in a.rates.split(",")]
    cfgs = ["none"] + list(ENGINES) + ["perf record", "gperftools"]
    load0 = os.getloadavg()
    results = {}
    tmp = tempfile.mkdtemp(prefix="kestrel-rt-bench-")
    try:
        for r in range(a.rounds):
            for hz in rates:
                order = cfgs[r % len(cfgs):] + cfgs[:r % len(cfgs)]
                for cfg in order:
                    results.setdefault((hz, cfg), []).append(one(cfg, hz, tmp))
            print("round %d/%d, load %.2f" % (r + 1, a.rounds, os.getloadavg()[0]), file=sys.stderr)
        load1 = os.getloadavg()
        walk, cost, costs = handler_cost(a.rounds, tmp)
        mem = memory(a.memory_seconds, tmp)
        load2 = os.getloadavg()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = statistics.median
    L = ["Load average (1-minute) before / after the rate runs / at the end: "
         "%.2f / %.2f / %.2f, %d CPUs, %d interleaved rounds, medians; %d threads, fixed "
         "work (bench/engines/work.c, %d units a thread)." %
         (load0[0], load1[0], load2[0], os.cpu_count(), a.rounds, THREADS, eng.UNITS[THREADS]),
         "", "| Hz | profiler | rate (median thread) | rate (lowest thread) | overhead, "
         "program CPU | overhead, all processes | memory |", "|---|---|---|---|---|---|---|"]
    for hz in rates:
        base = results[(hz, "none")]
        for cfg in cfgs[1:]:
            rs = results[(hz, cfg)]
            ov = med([(x["cpu"] - b["cpu"]) / b["cpu"] * 100 for x, b in zip(rs, base)])
            ovt = med([(x["total"] - b["total"]) / b["total"] * 100 for x, b in zip(rs, base)])
            if cfg == "perf record":
                m = "%.1f MiB (perf's own)" % (med([x["rss_kb"] for x in rs]) / 1024)
            else:
                m = "%+.1f MiB" % (med([x["rss_kb"] - b["rss_kb"] for x, b in zip(rs, base)]) / 1024)
            name = NAMES.get(cfg, cfg)
            if cfg == "gperftools":
                name += " (file claims %.0f Hz; whole process)" % med([x["claimed_hz"] for x in rs])
            L.append("| %d | %s | %.3f | %.3f | %+.2f%% | %+.2f%% | %s |" %
                     (hz, name, med([x["rate_med"] for x in rs]), med([x["rate_min"] for x in rs]),
                      ov, ovt, m))
    L += ["", "Cost of one sample at stack depth 32 (`build/bench/runtime/handler_cost`, "
          "signal engine, 10 kHz): the frame-pointer walk alone %.0f ns; everything the "
          "sampled thread pays per sample (signal delivery, handler, return: its extra CPU "
          "time / its samples) %.2f us, median of %d rounds (%s)." %
          (walk, cost / 1000, len(costs), ", ".join("%.2f" % (c / 1000) for c in costs)),
          "", "Memory after %.0f s of 8 threads at 997 Hz (`build/bench/runtime/memory %.0f`, "
          "each thread 5 ms of work then 5 ms of sleep): peak RSS %.1f MiB unprofiled; " %
          (a.memory_seconds, a.memory_seconds, mem["none"]["hwm"] / 1024) +
          "; ".join("%s %.1f MiB (%+.1f MiB), %d samples, tables used %s, raw file %.1f MiB" %
                    (NAMES[e], mem[e]["hwm"] / 1024, (mem[e]["hwm"] - mem["none"]["hwm"]) / 1024,
                     mem[e]["samples"],
                     ", ".join("%s %d/%d" % (k, v[0], v[1]) for k, v in mem[e]["tables"].items()),
                     mem[e]["file_mib"]) for e in ENGINES) + "."]
    text = "\n".join(L) + "\n"
    print(text)
    if a.markdown:
        write_section(a.markdown, text, " ".join(sys.argv[1:]))


def write_section(path, body, args):
    head = "## CPU runtime\n"
    intro = ("\nkestrel's runtime (both engines) beside `perf record -g` and gperftools' "
             "libprofiler, measured by `make bench` with:\n\n```\nmake bench   # runs: "
             "bench/runtime/run.py " + args + "\n```\n\nMeasured " +
             time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()) + ". This machine is shared "
             "with other builds; read ratios, not absolute times.\n\n")
    eng.replace_section(path, head, head + intro + body)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Sampling engines side by side: kestrel's perf engine, its signal engine and
`perf record -g`, on the same fixed work (bench/engines/work.c: shares 1/6, 2/6, 3/6
by construction), at several rates, with one thread and with eight. Runs are
interleaved (every configuration once per round, in a rotating order) and each figure
is the median over the rounds.

Per configuration:
  rate      on-CPU samples of each worker thread / (its CPU seconds x requested Hz):
            the median over threads and the lowest thread
  overhead  the process's CPU time at the end of main against the unprofiled runs of
            the same round (kestrel: its own thread included; perf record: the
            workload only) and the total of every process involved (kestrel's final
            write and perf's own process included)
  memory    peak RSS beyond the unprofiled run (perf record: the perf process's own
            peak RSS)
  error     mean absolute error of the three functions' shares against the truth,
            in percentage points

Usage: run.py [--rounds N] [--rates 100,997,...] [--threads 1,8] [--markdown FILE]
"""
from math import comb
import argparse, json, os, resource, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.path.join(ROOT, "build/bench/engines/work")
LIB = os.path.join(ROOT, "build/lib/libkestrel.so")
TRUTH = {"work_a": 1 / 6, "work_b": 2 / 6, "work_c": 3 / 6}
UNITS = {1: 1200, 8: 300}  # about 1.1 s of CPU per thread count's run here


def run_child(cmd, env=None):
    """Runs cmd; returns (status, rusage of it and everything it waited for)."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru, err


def attribute(ranges, pc):
    for name, (lo, hi) in ranges.items():
        if lo <= pc < hi:
            return name
    return None


def kestrel_samples(raw_path, work):
    """Per worker tid: on-CPU sample count; overall leaf counts per function."""
    with open(raw_path) as f:
        raw = json.load(f)
    tids = {i: t.get("tid") for i, t in enumerate(raw["threads"])}
    per_tid, per_fn = {}, {k: 0 for k in TRUTH}
    for row in raw["samples"]:
        if row[3] != 0:
            continue
        tid = tids.get(row[1])
        per_tid[tid] = per_tid.get(tid, 0) + 1
        stack = raw["stacks"][row[2]]
        fn = attribute(work["ranges"], stack[0]) if stack else None
        if fn:
            per_fn[fn] += 1
    return per_tid, per_fn, raw.get("engine"), raw.get("dropped", 0)


def perf_samples(data_path, work):
    out = subprocess.run(["perf", "script", "-i", data_path, "-F", "tid,ip", "-G"],
                         capture_output=True, text=True, check=True).stdout
    per_tid, per_fn = {}, {k: 0 for k in TRUTH}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        tid, ip = int(parts[0]), int(parts[1], 16)
        per_tid[tid] = per_tid.get(tid, 0) + 1
        fn = attribute(work["ranges"], ip)
        if fn:
            per_fn[fn] += 1
    return per_tid, per_fn, "perf record", 0


def one(cfg, threads, hz, tmp, samples=True):
    """One run of the work under cfg; with samples=False only its CPU times (and, for
    kestrel, the engine the raw file names)."""
    side = os.path.join(tmp, "work.json")
    cmd = [WORK, str(threads), str(UNITS[threads]), side]
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("KESTREL_"):
            del env[k]
    raw = os.path.join(tmp, "raw.json")
    if cfg in ("perf", "signal"):
        env.update(LD_PRELOAD=LIB, KESTREL_PROFILE=raw, KESTREL_PROFILE_HZ=str(hz),
                   KESTREL_PROFILE_ENGINE=cfg)
    elif cfg == "perf record":
        cmd = ["perf", "record", "-q", "-g", "-F", str(hz), "-o",
               os.path.join(tmp, "perf.data"), "--"] + cmd
    rc, ru, err = run_child(cmd, env)
    if rc != 0:
        sys.exit(f"bench: {cfg} at {hz} Hz, {threads} threads: exit {rc}: {err.strip()}")
    with open(side) as f:
        work = json.load(f)
    res = {"cpu": work["cpu_s"], "total": ru.ru_utime + ru.ru_stime,
           "workers": sum(t["cpu_ns"] for t in work["threads"]) / 1e9,
           "rss_kb": ru.ru_maxrss if cfg == "perf record" else work["maxrss_kb"]}
    if cfg == "none":
        return res
    if not samples:
        if cfg != "perf record":
            with open(raw) as f:
                engine = json.load(f).get("engine")
            if engine != cfg:
                sys.exit(f"bench: asked for the {cfg} engine, the file says {engine!r}: "
                         f"{err.strip()}")
        return res
    if cfg == "perf record":
        per_tid, per_fn, engine, dropped = perf_samples(os.path.join(tmp, "perf.data"), work)
    else:
        per_tid, per_fn, engine, dropped = kestrel_samples(raw, work)
        with open(raw) as f:
            stats = json.load(f).get("engine_stats", {})
        # The kernel's ring pages are not in the RSS: one metadata page + data pages
        # per CPU (threads that inherit the per-CPU events), else per registered
        # thread (the worker threads and main).
        page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
        if stats.get("cpu_rings"):
            res["ring_kb"] = (stats["cpu_ring_pages"] + 1) * page_kb * stats["cpu_rings"]
        elif "ring_pages" in stats:
            res["ring_kb"] = (stats["ring_pages"] + 1) * page_kb * (threads + 1)
        if engine != cfg:
            sys.exit(f"bench: asked for the {cfg} engine, the file says {engine!r}: {err.strip()}")
    rates = [per_tid.get(t["tid"], 0) / (t["cpu_ns"] / 1e9 * hz) for t in work["threads"]]
    n = sum(per_fn.values())
    mae = statistics.mean(abs(per_fn[k] / n - TRUTH[k]) for k in TRUTH) * 100 if n else float("nan")
    res.update(rate_med=statistics.median(rates), rate_min=min(rates), mae=mae,
               dropped=dropped)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rates", default="100,997,4999,10000")
    ap.add_argument("--threads", default="1,8")
    ap.add_argument("--configs", default="perf,signal,perf record")
    ap.add_argument("--paired-rounds", type=int, default=0,
                    help="then this many rounds of kestrel's perf engine and perf record "
                         "alone, CPU times only, for their paired comparison")
    ap.add_argument("--markdown")
    ap.add_argument("--probe", help="bench/perf_engine/probe binary: what the kernel allows")
    ap.add_argument("--stack-cost", help="bench/perf_engine/stack_cost binary")
    ap.add_argument("--attr-cost", help="bench/perf_engine/attr_cost binary")
    a = ap.parse_args()
    rates = [int(x) for x in a.rates.split(",")]
    tcounts = [int(x) for x in a.threads.split(",")]
    cfgs = ["none"] + a.configs.split(",")
    load0 = os.getloadavg()
    results = {}
    tmp = tempfile.mkdtemp(prefix="kestrel-engines-")
    paired = {}
    pcfgs = ["none", "perf", "perf record"]
    try:
        for r in range(a.rounds):
            for t in tcounts:
                for hz in rates:
                    order = cfgs[r % len(cfgs):] + cfgs[:r % len(cfgs)]
                    for cfg in order:
                        results.setdefault((t, hz, cfg), []).append(one(cfg, t, hz, tmp))
            print(f"round {r + 1}/{a.rounds} done, load {os.getloadavg()[0]:.2f}",
                  file=sys.stderr)
        for r in range(a.paired_rounds):
            for t in tcounts:
                for hz in rates:
                    for cfg in pcfgs[r % 3:] + pcfgs[:r % 3]:
                        paired.setdefault((t, hz, cfg), []).append(
                            one(cfg, t, hz, tmp, samples=False))
            print(f"paired round {r + 1}/{a.paired_rounds} done, load "
                  f"{os.getloadavg()[0]:.2f}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load1 = os.getloadavg()

    med = lambda xs: statistics.median(xs)
    lines = []
    lines.append(f"Load average before/after: {load0[0]:.2f} / {load1[0]:.2f} "
                 f"(1-minute), {os.cpu_count()} CPUs, {a.rounds} interleaved rounds, medians.")
    lines.append("")
    lines.append("| threads | Hz | sampler | rate (median thread) | rate (lowest thread) "
                 "| overhead, process CPU | of which workers | other threads | "
                 "overhead, all processes | memory | share error (pp) |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for t in tcounts:
        for hz in rates:
            base = results[(t, hz, "none")]
            for cfg in cfgs[1:]:
                rs = results[(t, hz, cfg)]
                ov = med([(x["cpu"] - b["cpu"]) / b["cpu"] * 100 for x, b in zip(rs, base)])
                ovt = med([(x["total"] - b["total"]) / b["total"] * 100 for x, b in zip(rs, base)])
                ovw = med([(x["workers"] - b["workers"]) / b["cpu"] * 100 for x, b in zip(rs, base)])
                oth = med([(x["cpu"] - x["workers"]) * 1000 for x in rs])
                if cfg == "perf record":
                    mem = f"{med([x['rss_kb'] for x in rs]) / 1024:.1f} MiB (perf's own)"
                else:
                    mem = f"{med([x['rss_kb'] - b['rss_kb'] for x, b in zip(rs, base)]):+.0f} KiB"
                    if "ring_kb" in rs[0]:
                        mem += f" + {rs[0]['ring_kb']} KiB rings"
                name = {"perf": "kestrel perf engine", "signal": "kestrel signal engine"}.get(cfg, cfg)
                lines.append(f"| {t} | {hz} | {name} | {med([x['rate_med'] for x in rs]):.3f} | "
                             f"{med([x['rate_min'] for x in rs]):.3f} | {ov:+.2f}% | {ovw:+.2f}% | "
                             f"{oth:.1f} ms | {ovt:+.2f}% | "
                             f"{mem} | {med([x['mae'] for x in rs]):.2f} |")
    if a.paired_rounds:
        lines += [""] + paired_table(paired, tcounts, rates, a.paired_rounds, load1,
                                     os.getloadavg())
    if a.probe:
        out = subprocess.run([a.probe], capture_output=True, text=True, check=True).stdout
        lines += ["", "What this kernel allows a process on its own threads "
                  f"(`{os.path.relpath(a.probe, ROOT)}`):", "", "```", out.rstrip(), "```"]
    if a.stack_cost:
        out = subprocess.run([a.stack_cost, str(a.rounds)], capture_output=True, text=True,
                             check=True).stdout
        lines += ["", "Cost of the user registers and stack copy per sample (one busy thread, "
                  f"`{os.path.relpath(a.stack_cost, ROOT)} {a.rounds}`, load "
                  f"{os.getloadavg()[0]:.2f}):", "", out.rstrip()]
    if a.attr_cost:
        rounds = max(a.rounds, 11)
        load = os.getloadavg()[0]
        out = subprocess.run([a.attr_cost, str(rounds)], capture_output=True, text=True,
                             check=True).stdout
        lines += ["", "What each piece of the event configuration costs the sampled threads, "
                  "beside perf record's configuration (busy thread and token-passing threads "
                  f"pinned to one CPU, `{os.path.relpath(a.attr_cost, ROOT)} {rounds}`, load "
                  f"{load:.2f} before, {os.getloadavg()[0]:.2f} after):", "", out.rstrip()]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.markdown:
        shown = [x for i, x in enumerate(sys.argv[1:]) if x != "--markdown" and
                 (i == 0 or sys.argv[i] != "--markdown")]
        write_section(a.markdown, text, " ".join(shown + ["--markdown", "BENCHMARKS.md"]))


def half_cdf(n, k):
    """P(Bin(n, 1/2) <= k): the sign test's tail."""
    return sum(comb(n, i) for i in range(k + 1)) / 2 ** n


def median_interval(n, level=0.95):
    """1-based ranks (lo, hi) of the order statistics that bracket the median of n
    values with at least `level` coverage whatever their distribution (the sign
    test's interval), or None when n is too small for any."""
    best = None
    for k in range(1, n // 2 + 1):
        if 1 - 2 * half_cdf(n, k - 1) >= level:
            best = (k, n - k + 1)
    return best


def paired_table(results, tcounts, rates, rounds, load0, load1):
    """kestrel's perf engine against perf record, round by round: both ran within
    seconds of each other and of the same round's unprofiled run, so the host's
    drift, which moves both, partly cancels in their difference."""
    ranks = median_interval(rounds)
    lines = [f"kestrel's perf engine against perf record, paired: {rounds} more rounds of "
             "the two and an unprofiled run (rotating order, CPU times only; load "
             f"{load0[0]:.2f} before, {load1[0]:.2f} after). Per round, the difference of "
             "their process-CPU overheads (kestrel's thread counted, perf's process not), "
             "in points of the unprofiled run's CPU. Interval: the order statistics that "
             "hold the median difference with 95% confidence or more (sign test), whatever "
             "the noise's distribution. Verdict: *above* when the whole interval is above "
             "zero, *below* when it is below, *at* when it holds zero.", "",
             "| threads | Hz | kestrel | perf record | kestrel − perf record (median) | "
             "interval | rounds kestrel ≤ perf record | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    at_or_below = pooled = 0
    for t in tcounts:
        for hz in rates:
            base = results[(t, hz, "none")]
            k, p = results[(t, hz, "perf")], results[(t, hz, "perf record")]
            d = sorted((x["cpu"] - y["cpu"]) / b["cpu"] * 100 for x, y, b in zip(k, p, base))
            if ranks:
                lo, hi = d[ranks[0] - 1], d[ranks[1] - 1]
                iv = f"{lo:+.2f} .. {hi:+.2f}"
                verdict = "above" if lo > 0 else "below" if hi < 0 else "at"
            else:
                iv, verdict = "too few rounds", "—"
            ov = lambda rs: statistics.median((x["cpu"] - b["cpu"]) / b["cpu"] * 100
                                              for x, b in zip(rs, base))
            lines.append(f"| {t} | {hz} | {ov(k):+.2f}% | {ov(p):+.2f}% | "
                         f"{statistics.median(d):+.2f} | {iv} | "
                         f"{sum(x <= 0 for x in d)} of {len(d)} | {verdict} |")
            at_or_below += sum(x <= 0 for x in d)
            pooled += len(d)
    # Every setting together: a difference too small for any one row's interval would
    # still show as a lopsided count (two-sided sign test).
    tail = min(at_or_below, pooled - at_or_below)
    pval = min(1.0, 2 * half_cdf(pooled, tail))
    side = ("no difference shown" if pval >= 0.05 else
            "kestrel below overall" if at_or_below > pooled / 2 else "kestrel above overall")
    lines += ["", f"All settings together: kestrel at or below perf record in {at_or_below} of "
              f"{pooled} rounds (sign test, two-sided p = {pval:.2f}: {side})."]
    return lines


def write_section(path, body, args):
    head = "## Sampling engines\n"
    intro = ("\nkestrel's perf engine, its signal engine and `perf record -g` on the same fixed "
             "work (bench/engines/work.c, shares 1:2:3), measured by `make bench` with:\n\n"
             "```\nmake bench   # runs: bench/engines/run.py " + args + "\n```\n\n"
             "Rate = on-CPU samples of a thread / (its CPU seconds x requested Hz). "
             "Overhead, process CPU = the workload's own CPU time at the end of main against "
             "an unprofiled run of the same round (kestrel's thread included, perf's process "
             "not), split into the worker threads' own CPU clocks (as a share of the "
             "unprofiled process's CPU) and the CPU of every other thread (main, which "
             "waits in join, and kestrel's own thread); all processes = wait4 rusage of "
             "everything launched. Memory = peak RSS "
             "beyond the unprofiled run. Share error = mean absolute error of the three "
             "functions' shares against 1/6, 2/6, 3/6.\n\n"
             "Reading it: at 100 Hz a worker of the 8-thread run holds about 30 periods of "
             "CPU and its last partial period is never sampled, so a kernel-timed sampler "
             "reads about 0.98 there by construction. The signal engine counts one on-CPU "
             "sample per wall tick in which a thread's CPU clock advanced; on a loaded host "
             "a thread runs in short slices, so that count departs from its CPU periods "
             "either way (its rows carry the CPU ns in the 5th column instead). perf record's "
             "workload-only overhead leaves out its own process, which the last overhead "
             "column includes. One run's overhead moves by a point or more from run to run at "
             "high rates here (the hypervisor's share of every sample's cost varies), more "
             "than the two samplers differ: the paired table below, with its many rounds, is "
             "the comparison of kestrel with perf record. docs/perf-engine.md (What it costs) "
             "reads these figures piece by piece. Measured " +
             time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()) + ".\n\n")
    replace_section(path, head, head + intro + body)


def replace_section(path, head, section):
    """Puts section in place of the one of BENCHMARKS.md that starts with head (up to
    the next "## "), or at the end when there is none."""
    old = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    start = old.find(head)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + section
    else:
        end = old.find("\n## ", start + len(head))
        new = old[:start] + section + ("\n" + old[end + 1:] if end >= 0 else "")
    with open(path, "w") as f:
        f.write(new)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What profiling a process tree costs: `make -j2` of a generated C project
(gen_project.py: gcc, cc1 and as per file, a few hundred processes) unprofiled, under
`kestrel record` and under `perf record -g` and `perf record --call-graph dwarf`,
interleaved round by round, as medians of wall and CPU time (the CPU time of every
process, the profiler's own included: the children's rusage) and their ratios to the
unprofiled build. kestrel's time is split into the build (the program's end) and the
whole command (the report and exports written); then the report of the tree's folder
is timed alone (`kestrel report STEM.raw`), and a folder of 5,000 raw files made by
copying the build's (--folder) is read with its time and peak memory.

--kestrel NAME=PREFIX (repeatable) adds another kestrel to the same rounds, PREFIX/bin/kestrel
with its PREFIX/lib/libkestrel.so (a build of another commit, say), as rows "kestrel
record (NAME)" and "kestrel, the build alone (NAME)"; the medians of the ratios to the
unprofiled build of the same round are given beside the ratios of the medians.

Usage: bench/tree/run.py [--rounds N] [--files N] [--folder N] [--kestrel NAME=PREFIX]...
                         [--markdown FILE]"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KESTREL = os.path.join(ROOT, "build", "bin", "kestrel")


def timed(cmd, cwd, env=None):
    """Wall seconds, CPU seconds (user + system of the command and every child it
    waited for), and the peak RSS of the largest one (MiB)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"run.py: {' '.join(cmd)} failed ({status})")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--folder", type=int, default=5000)
    ap.add_argument("--markdown")
    ap.add_argument("--kestrel", action="append", default=[])
    a = ap.parse_args()
    others = [k.split("=", 1) for k in a.kestrel]
    work = tempfile.mkdtemp(prefix="kestrel-bench-tree-")
    proj = os.path.join(work, "proj")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench/tree/gen_project.py"), proj,
                    str(a.files)], check=True)
    clean = ["make", "-s", "clean"]
    build = ["make", "-j2", "-s"]
    variants = {
        "unprofiled": build,
        "kestrel record": [KESTREL, "record", "-o", os.path.join(work, "k"),
                           "--report=" + os.path.join(work, "k.txt"), "--"] + build,
        "perf record -g": ["perf", "record", "-q", "-g", "-o", os.path.join(work, "p.data"),
                           "--"] + build,
        "perf record --call-graph dwarf": ["perf", "record", "-q", "--call-graph", "dwarf",
                                           "-o", os.path.join(work, "d.data"), "--"] + build,
    }
    for name, prefix in others:
        variants[f"kestrel record ({name})"] = [
            os.path.join(prefix, "bin", "kestrel"), "record", "-o", os.path.join(work, "o"),
            "--report=" + os.path.join(work, "o.txt"), "--"] + build
    res = {k: ([], []) for k in variants}
    kbuild = ([], [])  # kestrel: the build alone (the runtime preloaded, no report)
    preload = dict(os.environ, LD_PRELOAD=os.path.join(ROOT, "build/lib/libkestrel.so"),
                   KESTREL_PROFILE=os.path.join(work, "kb.raw", "%p.raw.json"))
    obuild = {name: ([], []) for name, _ in others}
    report = ([], [], [])
    n_files = 0
    for r in range(a.rounds):
        for name, cmd in variants.items():
            subprocess.run(clean, cwd=proj, check=True)
            w, c, _ = timed(cmd, proj)
            res[name][0].append(w)
            res[name][1].append(c)
        subprocess.run(clean, cwd=proj, check=True)
        shutil.rmtree(os.path.join(work, "kb.raw"), ignore_errors=True)
        os.mkdir(os.path.join(work, "kb.raw"))
        w, c, _ = timed(build, proj, preload)
        kbuild[0].append(w)
        kbuild[1].append(c)
        n_files = len(os.listdir(os.path.join(work, "kb.raw")))
        for name, prefix in others:
            subprocess.run(clean, cwd=proj, check=True)
            shutil.rmtree(os.path.join(work, "ob.raw"), ignore_errors=True)
            os.mkdir(os.path.join(work, "ob.raw"))
            env = dict(os.environ, LD_PRELOAD=os.path.join(prefix, "lib", "libkestrel.so"),
                       KESTREL_PROFILE=os.path.join(work, "ob.raw", "%p.raw.json"))
            w, c, _ = timed(build, proj, env)
            obuild[name][0].append(w)
            obuild[name][1].append(c)
        w, c, m = timed([KESTREL, "report", os.path.join(work, "kb.raw")], proj)
        report[0].append(w), report[1].append(c), report[2].append(m)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    base_w = statistics.median(res["unprofiled"][0])
    base_c = statistics.median(res["unprofiled"][1])
    rows = []
    order = list(res.items())[:2] + [("kestrel, the build alone", kbuild)] + \
        list(res.items())[2:4] + [(n, v) for n, v in list(res.items())[4:]] + \
        [(f"kestrel, the build alone ({n})", v) for n, v in obuild.items()]
    for name, (ws, cs) in order:
        w, c = statistics.median(ws), statistics.median(cs)
        # the same round's unprofiled build: the ratio of each round, then their median
        rw = statistics.median(x / b for x, b in zip(ws, res["unprofiled"][0]))
        rc = statistics.median(x / b for x, b in zip(cs, res["unprofiled"][1]))
        rows.append(f"| {name} | {w:.2f} s | {w / base_w:.2f}× | {rw:.2f}× | {c:.2f} s | "
                    f"{c / base_c:.2f}× | {rc:.2f}× |")
    out = ["", f"`make -j2` of {a.files + 1} C files ({n_files} processes profiled), "
           f"{a.rounds} rounds interleaved, medians (ratio: of the medians; per round: the "
           "median of each round's ratio):", "",
           "| | wall | wall ratio | per round | CPU | CPU ratio | per round |",
           "|---|---|---|---|---|---|---|"] + rows
    out += ["", f"`kestrel report` of the build's folder ({n_files} raw files): "
            f"{statistics.median(report[0]):.2f} s wall, {statistics.median(report[1]):.2f} s "
            f"CPU, peak RSS {statistics.median(report[2]):.0f} MiB (medians of {a.rounds})."]
    if a.folder:
        # A folder of --folder raw files: the build's, copied under new pids (the
        # file's own "pid" too, so that each is a process of its own).
        big = os.path.join(work, "big.raw")
        os.mkdir(big)
        src = sorted(f for f in os.listdir(os.path.join(work, "kb.raw")) if ".raw.json" in f)
        for i in range(a.folder):
            data = open(os.path.join(work, "kb.raw", src[i % len(src)]), "rb").read()
            data = re.sub(rb'^\{"version":1,"pid":\d+', b'{"version":1,"pid":%d' % (100000 + i),
                          data, count=1)
            open(os.path.join(big, f"{100000 + i}.raw.json"), "wb").write(data)
        size = sum(os.path.getsize(os.path.join(big, f)) for f in os.listdir(big))
        w, c, m = timed([KESTREL, "report", big], proj)
        out += [f"`kestrel report` of a folder of {a.folder} raw files ({size / 2**20:.0f} MB, "
                f"the build's copied): {w:.2f} s wall, {c:.2f} s CPU, peak RSS {m:.0f} MiB."]
    text = "\n".join(out) + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write(text)
    shutil.rmtree(work, ignore_errors=True)


main()

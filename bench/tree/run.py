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

Usage: bench/tree/run.py [--rounds N] [--files N] [--folder N] [--markdown FILE]"""
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
    a = ap.parse_args()
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
    res = {k: ([], []) for k in variants}
    kbuild = ([], [])  # kestrel: the build alone (the runtime preloaded, no report)
    preload = dict(os.environ, LD_PRELOAD=os.path.join(ROOT, "build/lib/libkestrel.so"),
                   KESTREL_PROFILE=os.path.join(work, "kb.raw", "%p.raw.json"))
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
        w, c, m = timed([KESTREL, "report", os.path.join(work, "kb.raw")], proj)
        report[0].append(w), report[1].append(c), report[2].append(m)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    base_w = statistics.median(res["unprofiled"][0])
    base_c = statistics.median(res["unprofiled"][1])
    rows = []
    for name, (ws, cs) in list(res.items())[:2] + [("kestrel, the build alone", kbuild)] + \
            list(res.items())[2:]:
        w, c = statistics.median(ws), statistics.median(cs)
        rows.append(f"| {name} | {w:.2f} s | {w / base_w:.2f}× | {c:.2f} s | {c / base_c:.2f}× |")
    out = ["", f"`make -j2` of {a.files + 1} C files ({n_files} processes profiled), "
           f"{a.rounds} rounds interleaved, medians:", "",
           "| | wall | wall ratio | CPU | CPU ratio |", "|---|---|---|---|---|"] + rows
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

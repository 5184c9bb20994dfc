#!/usr/bin/env python3
"""The signal engine's split between threads: tests/perf/syscalls.c `server` (a client
and a server thread over a socket pair) profiled at 997 Hz by this tree's
libkestrel.so, by another build's (BASE_LIB, e.g. main's), and by
`perf record -e cpu-clock -F 997 --call-graph dwarf` (as root), interleaved, ROUNDS
rounds. Per run: the client's share of the two threads' samples beside its share of
their CPU time by their own clocks (the program prints them), and handle_request's
share of the server thread's samples beside the run's own clock around each call.

usage: bench/thread_split.py BASE_LIB [ROUNDS]"""
import importlib.util, os, re, shutil, statistics, subprocess, sys, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
spec = importlib.util.spec_from_file_location(
    "tu", os.path.join(ROOT, "tests", "perf", "test_unprivileged.py"))
tu = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tu)
PROG = os.path.join(ROOT, "build", "tests", "perf", "syscalls")
KESTREL = os.path.join(ROOT, "build", "bin", "kestrel")


def one(which, lib):
    tmp = tempfile.mkdtemp(prefix="kestrel-split-")
    try:
        argv = [PROG, "server", "2", tmp]
        if which == "perf":
            data = os.path.join(tmp, "p.data")
            p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "997",
                                "--call-graph", "dwarf", "-o", data, "--"] + argv,
                               capture_output=True, text=True, check=True)
            n, inc = tu.shares_perf(data)
        else:
            raw = os.path.join(tmp, "r.json")
            env = dict(os.environ, LD_PRELOAD=lib, KESTREL_PROFILE=raw,
                       KESTREL_PROFILE_ENGINE="signal", KESTREL_PROFILE_HZ="997")
            p = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
            folded = os.path.join(tmp, "f.folded")
            subprocess.run([KESTREL, "export", "--format", "folded", "-o", folded, raw],
                           check=True, capture_output=True)
            n, inc = tu.shares_folded(folded)
        g = lambda k: int(re.search(r"%s_ns (\d+)" % k, p.stdout).group(1))
        c, s, h = g("client"), g("server"), g("handle")
        both = inc.get("client", 0) + inc.get("server", 0)
        return {"samples": n, "client": inc.get("client", 0) / max(both, 1),
                "client_clock": c / (c + s),
                "handle": inc.get("handle_request", 0) / max(inc.get("server", 0), 1),
                "handle_clock": h / s}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    libs = {"base": sys.argv[1], "this": os.path.join(ROOT, "build", "lib", "libkestrel.so")}
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    res = {"base": [], "this": [], "perf": []}
    for _ in range(rounds):
        for which in res:
            r = one(which, libs.get(which))
            res[which].append(r)
            print(which, " ".join("%s=%.3f" % kv for kv in r.items()), flush=True)
    for which, rows in res.items():
        gap = [abs(r["client"] - r["client_clock"]) for r in rows]
        print("median %s: %s client-clock gap %.3f (max %.3f)" % (
            which, " ".join("%s=%.3f" % (k, statistics.median(r[k] for r in rows))
                            for k in rows[0]), statistics.median(gap), max(gap)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

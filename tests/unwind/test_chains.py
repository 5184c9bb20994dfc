#!/usr/bin/env python3
"""Whole stacks without frame pointers: prog_chain, built with frame pointers, without
them, and mixed (the executable with, its library without), recorded by `kestrel
record --unwind=cfi` with each engine and the heap profiler. In every build, at least
99% of the CPU samples have stacks that reach main or the thread's start function,
the samples in the qsort callback and in memset show their exact caller chains
through libc and the library, and so do the heap's allocations through strdup. The
same program without frame pointers walked with --unwind=fp loses its callers (the
check that the test can fail)."""
import glob
import json
import os
import subprocess
import sys
import shutil
import tempfile
import time

from uwlib import check, failures, KESTREL, ROOT, load_raw


def folded(path):
    stacks = []
    for line in open(path):
        st, n = line.rsplit(" ", 1)
        stacks.append((st.split(";"), int(n)))
    return stacks


# The signal engine's timers sample at most at the kernel's tick rate (the coarse clock
# moves once a tick): its runs last longer, for as many samples as 1.5 s at 997 Hz.
SIGNAL_HZ = min(997, round(1 / time.clock_getres(6)))


def record(build, mode, engine="signal", heap=False):
    d = tempfile.mkdtemp(prefix="kestrel-uw-")
    stem = os.path.join(d, "p")
    exe = os.path.join(ROOT, "build", "tests", "unwind", build, "prog_chain")
    p = subprocess.run([KESTREL, "record", "--engine", engine, "--unwind", mode, "-o", stem] +
                       (["--heap"] if heap else []) +
                       ["--", exe, "%.2f" % (1.5 * 997 / (SIGNAL_HZ if engine == "signal" else 997))],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "%s/%s/%s: kestrel record exits 0 (%s)" %
          (build, mode, engine, p.stderr[-300:]))
    stacks = folded(stem + ".folded")
    raw = load_raw(glob.glob(stem + ".raw/*.raw.json")[0])
    heap_stacks = None
    if heap:
        out = os.path.join(d, "heap.folded")
        p = subprocess.run([KESTREL, "export", "--format", "folded", "--sample-type",
                            "alloc_space", "-o", out, glob.glob(stem + ".raw/*.heap.pb.gz")[0]],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, "%s: heap export (%s)" % (build, p.stderr[-300:]))
        heap_stacks = folded(out)
    shutil.rmtree(d)
    return stacks, raw, heap_stacks


def rooted(fr):
    return "main" in fr or "thread_main" in fr


def chain_ok(fr, leaf):
    """root..., main|thread_main, do_work, lib_sort, *qsort*, msort_with_tmp..., cmp_ints
    or ..., do_work, lib_fill, *memset*."""
    if leaf == "cmp":
        if fr[-1] != "cmp_ints":
            return None
        i = fr.index("lib_sort") if "lib_sort" in fr else -1
        if i < 2 or fr[i - 1] != "do_work" or fr[i - 2] not in ("main", "thread_main"):
            return False
        mid = fr[i + 1:-1]
        return bool(mid) and "qsort" in mid[0] and all("msort" in f or "qsort" in f for f in mid)
    if "memset" not in fr[-1]:
        return None
    return len(fr) >= 4 and fr[-2] == "lib_fill" and fr[-3] == "do_work" and \
        fr[-4] in ("main", "thread_main")


def heap_chain_ok(fr):
    """..., main|thread_main, do_work, lib_keep, *strdup (frame 0: the call into malloc)."""
    return len(fr) >= 4 and "strdup" in fr[-1] and fr[-2] == "lib_keep" and \
        fr[-3] == "do_work" and fr[-4] in ("main", "thread_main")


for engine, build in [(e, b) for e in ("signal", "perf") for b in ("fp", "nofp", "mixed")]:
    stacks, raw, heap = record(build, "cfi", engine, heap=(engine == "signal"))
    build = "%s/%s" % (build, engine)
    check(raw.get("unwind") == "cfi", "%s: the raw file says unwind cfi" % build)
    check(raw.get("engine") == engine, "%s: the %s engine ran" % (build, engine))
    if engine == "perf":
        es = raw.get("engine_stats", {})
        check(es.get("stack_copies", 0) > 0 and es.get("stacks_copy_short", 1) == 0,
              "%s: %s stacks walked from the kernel's copies, %s reached the copy's end" %
              (build, es.get("stack_copies"), es.get("stacks_copy_short")))
    on_cpu = [(fr, n) for fr, n in stacks if not any("futex" in f for f in fr)]
    total = sum(n for _, n in on_cpu)
    good = sum(n for fr, n in on_cpu if rooted(fr))
    hz = SIGNAL_HZ if engine == "signal" else 997
    check(raw.get("rate_hz") == hz, "%s: sampled at %s Hz, %d expected" %
          (build, raw.get("rate_hz"), hz))
    check(total > 500, "%s: %d on-CPU samples at %d Hz" % (build, total, hz))
    check(total and good >= 0.99 * total,
          "%s: %d of %d samples (%.2f%%) reach main or thread_main" %
          (build, good, total, 100.0 * good / max(total, 1)))
    for leaf in ("cmp", "memset"):
        res = [(chain_ok(fr, leaf), n) for fr, n in on_cpu]
        n_all = sum(n for r, n in res if r is not None)
        n_ok = sum(n for r, n in res if r)
        check(n_all >= 20 and n_ok >= 0.99 * n_all,
              "%s: %d of %d %s samples have the exact caller chain" % (build, n_ok, n_all, leaf))
    if heap is not None:
        sd = [(fr, n) for fr, n in heap if any("strdup" in f for f in fr)]
        n_all = sum(n for _, n in sd)
        n_ok = sum(n for fr, n in sd if heap_chain_ok(fr))
        check(n_all > 0 and n_ok >= 0.99 * n_all,
              "%s: heap: %d of %d bytes allocated through strdup have the exact caller chain"
              % (build, n_ok, n_all))
        tot = sum(n for _, n in heap)
        good = sum(n for fr, n in heap if rooted(fr))
        check(tot > 0 and good >= 0.99 * tot, "%s: heap: %d of %d bytes' stacks reach main or "
              "thread_main" % (build, good, tot))

stacks, raw, heap = record("nofp", "fp", heap=True)
total = sum(n for _, n in stacks)
good = sum(n for fr, n in stacks if rooted(fr))
check(good < 0.5 * total, "nofp with --unwind=fp: only %d of %d samples reach main (CFI is "
      "what finds the callers)" % (good, total))
sd = [(fr, n) for fr, n in heap if any("strdup" in f for f in fr)]
check(sum(n for fr, n in sd if heap_chain_ok(fr)) < 0.5 * sum(n for _, n in sd),
      "nofp with --unwind=fp: the heap's strdup stacks lose their callers")

if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all passed")

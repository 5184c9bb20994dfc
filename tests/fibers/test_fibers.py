#!/usr/bin/env python3
"""Fibers under both engines: prog_ucontext (makecontext/swapcontext; fiber A's stack
registered through kestrel_fiber_register as fiber 7 "worker", fiber B's mmap'd and not
registered) and prog_boost (boost.context, two unregistered fibers on a mmap'd and a
malloc'd stack). For each engine and program:
- at least 95% of the on-CPU samples in each fiber's leaf reach the fiber's outermost
  frame (a whole walk), their stacks holding the fiber's own call chain;
- each fiber is a thread record of its own (label and fiber id; "worker"/7 for the
  registered one), and the folded export roots its stacks at `<label>-<fiber>`, the
  speedscope export has a profile for it;
- the report advises no frame pointers (the programs keep them).
And prog_boost with fiber B sleeping at each turn (`sleep`), recorded with every state:
B's waiting samples (in nanosleep, under boost_b_wait) are rooted at B's fiber, not at
the thread, and walked whole through boost_b_main."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "unwind"))
from uwlib import ROOT, KESTREL, check, failures, running_by_end, whole_share  # noqa: E402
import rawjson  # noqa: E402

B = os.path.join(ROOT, "build", "tests", "fibers")
# program -> {leaf function: (thread label or None for "fiber", fiber id or None, caller)}
PROGS = {
    "prog_ucontext": {"fiber_a_leaf": ("worker", 7, "fiber_a_main"),
                      "fiber_b_leaf": ("fiber", None, "fiber_b_main")},
    "prog_boost": {"boost_a_leaf": ("fiber", None, "boost_a_main"),
                   "boost_b_leaf": ("fiber", None, "boost_b_main")},
}

# What runs: every program under both engines, or the `prog/engine` pairs named on the
# command line.
ONLY = set(sys.argv[1:])

d = tempfile.mkdtemp(prefix="kestrel-fibers-")
for prog, leaves in PROGS.items():
    for engine in ("signal", "perf"):
        tag = "%s/%s" % (prog, engine)
        if ONLY and tag not in ONLY:
            continue
        stem = os.path.join(d, prog + "-" + engine)
        p = subprocess.run([KESTREL, "record", "--engine", engine, "-o", stem, "--",
                            os.path.join(B, prog), "4"], capture_output=True, text=True,
                           timeout=300)
        check(p.returncode == 0, "%s: kestrel record exits 0" % tag)
        if p.returncode:
            print(p.stderr[-2000:])
            continue
        raw = rawjson.load(glob.glob(stem + ".raw/*.raw.json")[0])
        threads = raw["threads"]
        folded = [l.rsplit(" ", 1) for l in open(stem + ".folded").read().splitlines() if l]
        for leaf, (label, fid, caller) in leaves.items():
            # The folded stacks that end in this leaf: their thread root and chain.
            rows = [(s.split(";"), int(c)) for s, c in folded if s.split(";")[-1] == leaf]
            n = sum(c for _, c in rows)
            roots = {f[0] for f, _ in rows}
            whole = sum(c for f, c in rows if "[incomplete stack]" not in f and caller in f)
            check(n >= 15 and whole >= 0.95 * n,
                  "%s: %d of %d samples in %s walked whole through %s (%s)" %
                  (tag, whole, n, leaf, caller, sorted(roots)))
            want = ("%s-%d" % (label, fid)) if fid is not None else label + "-"
            check(len(roots) == 1 and next(iter(roots), "").startswith(want) and
                  not next(iter(roots), "").startswith("main-"),
                  "%s: %s's stacks are rooted at its fiber %s... (%s)" % (tag, leaf, want, roots))
        fibers = [i for i, t in enumerate(threads) if t.get("label") in ("worker", "fiber")]
        check(len(fibers) == 2, "%s: two fiber thread records (%s)" % (tag, threads))
        if prog == "prog_ucontext":
            check(any(t.get("label") == "worker" and t.get("fiber") == 7 for t in threads),
                  "%s: the registered fiber is thread record worker/7" % tag)
        by_end = running_by_end(raw, set(fibers))
        share, n = whole_share(by_end)
        check(n >= 40 and share >= 0.95,
              "%s: %.1f%% of %d on-CPU fiber samples whole (%s)" % (tag, 100 * share, n, by_end))
        sp = json.load(open(stem + ".speedscope.json"))
        names = [pr.get("name", "") for pr in sp["profiles"]]
        check(sum(1 for nm in names if "fiber" in nm or "worker" in nm) >= 2,
              "%s: speedscope has a profile per fiber (%s)" % (tag, names))
        rep = subprocess.run([KESTREL, "report", stem + ".raw"], capture_output=True, text=True,
                             timeout=120).stdout
        check("-fno-omit-frame-pointer" not in rep, "%s: the report advises no frame pointers" % tag)

# A fiber's waiting samples are the fiber's.
for engine in ("signal", "perf"):
    tag = "prog_boost-sleep/%s" % engine
    if ONLY and tag not in ONLY:
        continue
    stem = os.path.join(d, "sleep-" + engine)
    p = subprocess.run([KESTREL, "record", "--engine", engine, "--state", "all", "-o", stem, "--",
                        os.path.join(B, "prog_boost"), "3", "sleep"], capture_output=True,
                       text=True, timeout=300)
    check(p.returncode == 0, "%s: kestrel record exits 0" % tag)
    if p.returncode:
        print(p.stderr[-2000:])
        continue
    folded = [l.rsplit(" ", 1) for l in open(stem + ".folded").read().splitlines() if l]
    rows = [(s.split(";"), int(c)) for s, c in folded
            if s.endswith(";[waiting]") and "boost_b_wait" in s.split(";")]
    n = sum(c for _, c in rows)
    on_fiber = sum(c for f, c in rows if f[0].startswith("fiber-"))
    whole = sum(c for f, c in rows if "[incomplete stack]" not in f and "boost_b_main" in f)
    roots = sorted({f[0] for f, _ in rows})
    check(n >= 15 and on_fiber == n,
          "%s: %d of %d waiting samples in boost_b_wait rooted at the fiber (%s)" %
          (tag, on_fiber, n, roots))
    check(n >= 15 and whole >= 0.95 * n,
          "%s: %d of %d of them walked whole through boost_b_main" % (tag, whole, n))
shutil.rmtree(d)
if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all passed")

#!/usr/bin/env python3
"""Recursion deeper than any bound: prog_deeprec recurses 1,000 frames (no frame
pointers, about 80 KiB of stack) and computes at the bottom. Under both engines, at
least 95% of its on-CPU samples are cut and named `depth_limit` (not `copy_end`, not a
frame-pointer check), each such stack holds the walker's 128 frames, and the report
names the depth limit as the cause without advising frame pointers or a longer copy."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from uwlib import B, KESTREL, check, failures, running_by_end
import rawjson  # noqa: E402

PROG = os.path.join(B, "prog_deeprec")
d = tempfile.mkdtemp(prefix="kestrel-deeprec-")
for engine in ("signal", "perf"):
    stem = os.path.join(d, engine)
    p = subprocess.run([KESTREL, "record", "--engine", engine, "-o", stem, "--", PROG, "1000",
                        "3"], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "%s: kestrel record -- prog_deeprec exits 0" % engine)
    raw = rawjson.load(glob.glob(stem + ".raw/*.raw.json")[0])
    by_end = running_by_end(raw)
    n = sum(by_end.values())
    depth = by_end.get("depth_limit", 0)
    check(n >= 50 and depth >= 0.95 * n,
          "%s: %d of %d on-CPU walks (%.1f%%) cut at the depth limit (%s)" %
          (engine, depth, n, 100.0 * depth / max(n, 1), by_end))
    deepest = max((len(raw["stacks"][i]) for i, e in enumerate(raw["stack_ends"])
                   if e == list(raw["walk_stops"]).index("depth_limit")), default=0)
    check(deepest == 128, "%s: a depth-limited stack holds 128 frames (%d)" % (engine, deepest))
    rep = subprocess.run([KESTREL, "report", stem + ".raw"], capture_output=True, text=True,
                         timeout=120).stdout
    check("128-frame depth limit" in rep, "%s: the report names the depth limit" % engine)
    check("-fno-omit-frame-pointer" not in rep and "copy ran out" not in rep,
          "%s: the report advises neither frame pointers nor a longer copy" % engine)
shutil.rmtree(d)
if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all passed")

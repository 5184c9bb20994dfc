#!/usr/bin/env python3
"""An optimizing C++ compiler without frame pointers, on a large file: Debian's clang++
-O2 (its parser's stacks are 20-130 KiB deep, past any fixed 16 KiB copy: 98.7% of the
samples were cut there before) with kestrel's default settings (engine auto), and with
the signal engine. In clang's raw file:
- at least 95% of the on-CPU samples reach the thread's root (whole walks);
- with the perf engine, the deepest stack seen is deeper than 16 KiB (so the test
  measures deep stacks at all);
- the report names no library twice, and advises frame pointers only where walks that
  they would carry on are cut (not for a copy that ran out or the depth limit)."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from uwlib import KESTREL, check, failures, running_by_end, whole_share
import rawjson  # noqa: E402

CLANG = shutil.which("clang++")
if not CLANG:
    print("FAIL clang++ is not installed (Debian's clang)")
    sys.exit(1)
d = tempfile.mkdtemp(prefix="kestrel-cxx-")
src = os.path.join(d, "big.cpp")
with open(src, "w") as f:
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "gen_cxx.py"), "8"], stdout=f, check=True)
for engine in (None, "signal"):
    tag = engine or "default"
    stem = os.path.join(d, tag)
    cmd = [KESTREL, "record", "-o", stem] + (["--engine", engine] if engine else [])
    p = subprocess.run(cmd + ["--", CLANG, "-O2", "-c", src, "-o", os.path.join(d, "big.o")],
                       capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, "%s: kestrel record -- clang++ -O2 exits 0" % tag)
    raws = [rawjson.load(f) for f in glob.glob(stem + ".raw/*.raw.json")]
    raw = max(raws, key=lambda r: len(r["samples"]))  # the compiler's process
    by_end = running_by_end(raw)
    share, n = whole_share(by_end)
    check(n >= 300 and share >= 0.95,
          "%s (%s engine): %.1f%% of %d on-CPU samples reach the root (%s)" %
          (tag, raw.get("engine"), 100 * share, n, {k: v for k, v in by_end.items() if v}))
    st = raw.get("engine_stats", {})
    if raw.get("engine") == "perf":
        check(st.get("stack_depth_max", 0) > 16384,
              "%s: stacks deeper than 16 KiB were sampled (deepest %d bytes)" %
              (tag, st.get("stack_depth_max", 0)))
    rep = subprocess.run([KESTREL, "report", stem + ".raw"], capture_output=True, text=True,
                         timeout=300).stdout
    m = re.search(r"walks end early in (.*)", rep)
    libs = [x.split(" (")[0] for x in m.group(1).split(", ")] if m else []
    check(len(libs) == len(set(libs)), "%s: each library named once (%s)" % (tag, libs))
    cut = {k: v for k, v in by_end.items() if k not in ("end", "top", "cfi_end")}
    fp_causes = sum(v for k, v in cut.items() if k not in ("copy_end", "depth_limit"))
    if fp_causes < 0.01 * n:
        check("-fno-omit-frame-pointer" not in rep,
              "%s: no frame-pointer advice for cuts frame pointers would not fix (%s)" % (tag, cut))
shutil.rmtree(d)
if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all passed")

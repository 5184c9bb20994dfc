#!/usr/bin/env python3
"""Unwind tables built on need (docs/unwind.md, "Tables"): a process that takes no
sample decodes no image's CFI, only registers its images; one that runs longer walks
through FDEs read one at a time and has not every table built, with its stacks whole
all along. Each engine, --unwind=cfi, the counts of the raw file's
`unwind_tables`."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from uwlib import check, failures, KESTREL, ROOT, load_raw


def record(engine, argv):
    d = tempfile.mkdtemp(prefix="kestrel-lazy-")
    stem = os.path.join(d, "p")
    p = subprocess.run([KESTREL, "record", "--engine", engine, "--unwind", "cfi", "-o", stem,
                        "--"] + argv, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "%s: kestrel record %s exits 0%s" %
          (engine, os.path.basename(argv[0]), "" if p.returncode == 0 else
           " (%s)" % p.stderr[-300:]))
    raws = glob.glob(stem + ".raw/*.raw.json")
    raw = load_raw(raws[0]) if raws else {}
    stacks = []
    if os.path.exists(stem + ".folded"):
        for line in open(stem + ".folded"):
            st, n = line.rsplit(" ", 1)
            stacks.append((st.split(";"), int(n)))
    shutil.rmtree(d)
    return raw, stacks


for engine in ("signal", "perf"):
    raw, _ = record(engine, ["/bin/true"])
    t = raw.get("unwind_tables", {})
    check(t.get("images_mapped", 0) >= 3 and t.get("images") == 0 and t.get("rows") == 0,
          "%s: /bin/true registered %s images and decoded %s tables (%s rows)" %
          (engine, t.get("images_mapped"), t.get("images"), t.get("rows")))

    exe = os.path.join(ROOT, "build", "tests", "unwind", "nofp", "prog_chain")
    raw, stacks = record(engine, [exe, "1.5"])
    t = raw.get("unwind_tables", {})
    # Built up front, every image with CFI would have its table; which ones are built
    # here depends on where the samples fell (tests/unwind/test_hard_cases.py checks
    # that tables are built and found again).
    check(t.get("lookups_without_table", 0) > 0 and
          t.get("images", 0) + t.get("images_without_cfi", 0) < t.get("images_mapped", 0),
          "%s: prog_chain read %s rules from FDEs and built %s of its %s images' tables" %
          (engine, t.get("lookups_without_table"), t.get("images"), t.get("images_mapped")))
    on_cpu = [(fr, n) for fr, n in stacks if not any("futex" in f or "nanosleep" in f
                                                     for f in fr)]
    total = sum(n for _, n in on_cpu)
    good = sum(n for fr, n in on_cpu if "main" in fr or "thread_main" in fr)
    check(total >= 100 and good >= 0.99 * total,
          "%s: %d of %d samples reach main or thread_main" % (engine, good, total))

if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all passed")

#!/usr/bin/env python3
"""Deep stacks for a user who is not root: Debian's clang++ -O2 on a large generated file
(its parser's stacks are 20-130 KiB deep, no frame pointers) recorded with kestrel's
default settings by a user without CAP_IPC_LOCK, whose perf rings' locked memory the
kernel limits (perf_event_mlock_kb, then RLIMIT_MEMLOCK). The test (as root) creates
the user (useradd), and runs the compiler as that user (runuser) at
perf_event_paranoid 1, where `auto` takes the perf engine, then 2, where it takes the
signal engine (restored at the end). At each level:
- at least 95% of the compiler's on-CPU samples reach the thread's root;
- at paranoid 1, the engine is perf, its stack copy is larger than 16 KiB (the copy
  that left 19% of the samples cut: the stack past it had changed by the drain) and the
  deepest stack seen is deeper than 16 KiB (the test measures deep stacks at all).
Skipped (exit 77) when not root or without clang++, useradd or runuser."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import uuid

from uwlib import KESTREL, check, failures, running_by_end, whole_share
import rawjson  # noqa: E402

PARANOID = "/proc/sys/kernel/perf_event_paranoid"
CLANG = shutil.which("clang++")


def main():
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("useradd", "runuser")) or not CLANG:
        print("skipped: needs root, clang++, useradd and runuser", file=sys.stderr)
        return 77
    user = "kst" + uuid.uuid4().hex[:8]
    old = open(PARANOID).read().strip()
    d = tempfile.mkdtemp(prefix="kestrel-deep-unpriv-")
    os.chmod(d, 0o777)
    src = os.path.join(d, "big.cpp")
    with open(src, "w") as f:
        subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "gen_cxx.py"), "8"], stdout=f, check=True)
    os.chmod(src, 0o644)
    subprocess.run(["useradd", "-M", "-N", "-s", "/bin/sh", user], check=True)
    try:
        for level, want in ((1, "perf"), (2, "signal")):
            with open(PARANOID, "w") as f:
                f.write(str(level))
            stem = os.path.join(d, "p%d" % level)
            p = subprocess.run(["runuser", "-u", user, "--", KESTREL, "record", "-o", stem, "--",
                                CLANG, "-O2", "-c", src, "-o", os.path.join(d, "big%d.o" % level)],
                               capture_output=True, text=True, timeout=900)
            what = "paranoid %d, a user who is not root" % level
            raws = [rawjson.load(f) for f in glob.glob(stem + ".raw/*.raw.json")]
            ran = p.returncode == 0 and bool(raws)
            check(ran, "%s: kestrel record -- clang++ -O2 exits 0 and leaves its profile%s" %
                  (what, "" if ran else " (%s)" % p.stderr[-300:]))
            if not ran:
                continue
            raw = max(raws, key=lambda r: len(r["samples"]))  # the compiler's process
            by_end = running_by_end(raw)
            share, n = whole_share(by_end)
            st = raw.get("engine_stats", {})
            check(raw.get("engine") == want, "%s: auto took the %s engine (%s)" %
                  (what, want, raw.get("engine")))
            check(n >= 300 and share >= 0.95,
                  "%s (%s engine): %.1f%% of %d on-CPU samples reach the root (%s; copy %s bytes)"
                  % (what, raw.get("engine"), 100 * share, n,
                     {k: v for k, v in by_end.items() if v}, st.get("stack_copy_size")))
            if raw.get("engine") == "perf":
                check(st.get("stack_copy_size", 0) > 16384,
                      "%s: the stack copy is larger than 16 KiB (%d bytes)" %
                      (what, st.get("stack_copy_size", 0)))
                check(st.get("stack_depth_max", 0) > 16384,
                      "%s: stacks deeper than 16 KiB were sampled (deepest %d bytes)" %
                      (what, st.get("stack_depth_max", 0)))
    finally:
        with open(PARANOID, "w") as f:
            f.write(old)
        subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(d, ignore_errors=True)
    if failures:
        print("%d failed" % len(failures))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""kestrel record --attach: stacks deeper than the stack copy (32 KiB as root, 16 KiB
where locked memory is limited), read on over the target's stack (process_vm_readv)
with the runtime's resume (runtime/unwind/resume.c).

1. Debian's clang++ -O2 (no frame pointers; its parser's stacks are 20-130 KiB deep)
   on a generated file, started by `kestrel record --attach --`: at least 95% of its
   on-CPU samples reach the thread's root, and walks did go on past their copy.
2. A recursion 200 frames deep of about 400 bytes each (prog_deep, no frame pointers):
   its samples' walks end at the depth limit (depth_limit), none at the copy's end.
"""
import glob, json, os, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "unwind"))
from uwlib import KESTREL, check, failures, running_by_end, whole_share  # noqa: E402

DEEP = os.path.join(ROOT, "build", "tests", "attach", "prog_deep")
CLANG = shutil.which("clang++")
if not CLANG:
    print("FAIL clang++ is not installed (Debian's clang)")
    sys.exit(1)


def biggest_raw(stem):
    raws = [json.load(open(f)) for f in glob.glob(stem + ".raw/*.raw.json")]
    return max(raws, key=lambda r: len(r["samples"])) if raws else None


d = tempfile.mkdtemp(prefix="kestrel-attach-deep-")
src = os.path.join(d, "big.cpp")
with open(src, "w") as f:
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "unwind", "gen_cxx.py"), "8"],
                   stdout=f, check=True)
stem = os.path.join(d, "clang")
p = subprocess.run([KESTREL, "record", "--attach", "-o", stem, "--", CLANG, "-O2", "-c", src,
                    "-o", os.path.join(d, "big.o")], capture_output=True, text=True, timeout=600)
check(p.returncode == 0, "record --attach -- clang++ -O2 exits 0" +
      ("" if p.returncode == 0 else ": " + p.stderr.strip()[-300:]))
raw = biggest_raw(stem)
check(raw is not None, "clang's raw file written")
if raw:
    by_end = running_by_end(raw)
    share, n = whole_share(by_end)
    check(n >= 300 and share >= 0.95,
          "clang++ -O2 attached: %.1f%% of %d on-CPU samples reach the root (%s)" %
          (100 * share, n, {k: v for k, v in by_end.items() if v}))
    st = raw.get("engine_stats", {})
    check(st.get("stacks_read_on", 0) > 0,
          "walks went on past their copy (stacks_read_on %d, of them cut %d, %d bytes read)" %
          (st.get("stacks_read_on", 0), st.get("stacks_read_changed", 0),
           st.get("stack_read_bytes", 0)))

stem = os.path.join(d, "deep")
p = subprocess.run([KESTREL, "record", "--attach", "-o", stem, "--", DEEP, "1.5"],
                   capture_output=True, text=True, timeout=120)
check(p.returncode == 0, "record --attach -- prog_deep exits 0" +
      ("" if p.returncode == 0 else ": " + p.stderr.strip()[-300:]))
raw = biggest_raw(stem)
if raw:
    by_end = running_by_end(raw)
    n = sum(by_end.values())
    check(n >= 100 and by_end.get("depth_limit", 0) >= 0.95 * n and not by_end.get("copy_end"),
          "a 200-frame recursion: %d of %d on-CPU samples end at the depth limit (%s)" %
          (by_end.get("depth_limit", 0), n, by_end))
else:
    check(False, "prog_deep's raw file written")
shutil.rmtree(d)
sys.exit(1 if failures else 0)

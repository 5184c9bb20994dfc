#!/usr/bin/env python3
"""Cases that break simple unwinders, each with a program built without frame
pointers, recorded with `kestrel record --unwind=cfi` by both engines:
- a signal frame: samples inside the program's own SIGALRM handler show
  in_handler <- on_alarm <- (the signal frame) <- spin_outside <- main, the
  interrupted function named exactly (no return-address adjustment on it);
- the vdso (CFI only in memory): samples under clock_gettime still reach main;
- dlopen/dlclose in a loop on two threads while the handler and the drain walk
  stacks: the program finishes with its own exit status and output, the profile is
  written, images mapped again find their tables again (`reused`), and the main
  thread's memset samples keep their whole chain."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from uwlib import B, check, failures, KESTREL, load_raw


def record(engine, argv):
    d = tempfile.mkdtemp(prefix="kestrel-uw-")
    stem = os.path.join(d, "p")
    p = subprocess.run([KESTREL, "record", "--engine", engine, "--unwind", "cfi", "-o", stem,
                        "--"] + argv, capture_output=True, text=True, timeout=300)
    stacks = []
    for line in open(stem + ".folded"):
        st, n = line.rsplit(" ", 1)
        stacks.append((st.split(";"), int(n)))
    raw = load_raw(glob.glob(stem + ".raw/*.raw.json")[0])
    shutil.rmtree(d)
    return p, stacks, raw


for engine in ("signal", "perf"):
    p, stacks, raw = record(engine, [os.path.join(B, "prog_sigframe"), "3"])
    check(p.returncode == 0, "%s: prog_sigframe exits 0" % engine)
    inh = [(fr, n) for fr, n in stacks if fr[-1] == "in_handler"]
    n_all = sum(n for _, n in inh)

    def through_frame(fr):
        if len(fr) < 5 or fr[-2] != "on_alarm" or "main" not in fr:
            return False
        i = fr.index("main")
        # main, spin_outside, [clock_gettime and the vdso's frames], the signal
        # frame's return address, on_alarm, in_handler
        return fr[i + 1] == "spin_outside" and len(fr) - i >= 5
    n_ok = sum(n for fr, n in inh if through_frame(fr))
    check(n_all >= 30 and n_ok >= 0.99 * n_all,
          "%s: %d of %d samples in the signal handler walk through the signal frame to "
          "spin_outside and main" % (engine, n_ok, n_all))
    vd = [(fr, n) for fr, n in stacks if any("clock_gettime" in f for f in fr)]
    check(sum(n for fr, n in vd if "main" in fr) == sum(n for _, n in vd),
          "%s: all %d samples under clock_gettime (the vdso) reach main" %
          (engine, sum(n for _, n in vd)))
    total = sum(n for _, n in stacks)
    good = sum(n for fr, n in stacks if "main" in fr)
    check(good >= 0.99 * total, "%s: %d of %d samples reach main" % (engine, good, total))

    p, stacks, raw = record(engine, [os.path.join(B, "prog_dlloop"),
                                     os.path.join(B, "nofp", "libchain.so"),
                                     os.path.join(B, "fp", "libchain.so"), "2",
                                     os.path.join(B, "mixed", "libchain.so")])
    first = (p.stdout.splitlines() or [""])[0].strip()  # the program's line comes first
    check(p.returncode == 0 and first.isdigit() and int(first) > 100,
          "%s: prog_dlloop exits 0 after %s dlopen/dlclose cycles" % (engine, first))
    t = raw.get("unwind_tables", {})
    check(t.get("reused", 0) > 0 and t.get("bytes", 1 << 30) < 4 << 20,
          "%s: images mapped again found their tables (%s reused, %s bytes in all)" %
          (engine, t.get("reused"), t.get("bytes")))
    ms = [(fr, n) for fr, n in stacks if "memset" in fr[-1] and fr[0].startswith("main")]
    n_all = sum(n for _, n in ms)
    n_ok = sum(n for fr, n in ms if fr[-2:-4:-1] == ["lib_fill", "main"])
    check(n_all >= 30 and n_ok >= 0.99 * n_all,
          "%s: %d of %d memset samples under the loop keep lib_fill <- main" %
          (engine, n_ok, n_all))

if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all passed")

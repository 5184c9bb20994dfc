#!/usr/bin/env python3
"""aarch64 programs recorded under qemu-aarch64 (libkestrel cross-compiled) and
symbolized here by the x86-64 kestrel:

- `auto` chooses the signal engine under emulation and says why (engine_fallback);
  the raw file says linux-aarch64 and each image's arch;
- prog_chain built with frame pointers, without, and both signed with pac-ret (which
  qemu's `-cpu max` authenticates: prog_pacsign shows a signed frame record), walked
  by frame pointers (where it has them) and by CFI: at least 99% of the on-CPU
  samples reach main or thread_main, and the samples in the qsort callback and in
  memset show their exact callers, named from the aarch64 ELF by libdw;
- the leaf's caller comes from lr: prog_leaf (plain and signed) spends half its time
  in outer before its call (return address in lr and in outer's frame record: main
  once under outer) and half in leaf (in lr alone: outer under leaf), at least 99% of
  each exact, with each walk; memset, a leaf, shows lib_fill under it;
- a function of the program shows as its own caller in under 1% of samples (the known
  limit: after a call returns, lr points into the function itself);
- the report gives cmp_ints its hottest line, prog_chain.c's loop in it;
- with KESTREL_SYSROOT naming the arm64 sysroot, libc's own functions are named
  too (qsort_r under lib_sort);
- the heap profiler's stacks (KESTREL_HEAP) from inside malloc: at least 99% of the
  bytes allocated through strdup show ..., root, do_work, lib_keep, strdup, with each
  walk where the build allows it."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from rawjson import load as load_raw  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
A64 = os.path.join(ROOT, "build", "aarch64")
LIB = os.path.join(A64, "lib", "libkestrel.so")
KESTREL = os.path.join(ROOT, "build", "bin", "kestrel")
QEMU = os.environ.get("A64_QEMU", "qemu-aarch64")
SYSROOT = os.environ.get("A64_SYSROOT", "/usr/aarch64-linux-gnu")
ROOTS = ("main", "thread_main")
OWN = ("main", "thread_main", "do_work", "lib_sort", "lib_fill", "lib_keep", "cmp_ints")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def qemu(argv, env, timeout=300):
    cmd = [QEMU, "-cpu", "max", "-L", SYSROOT]
    for k, v in env.items():
        cmd += ["-E", "%s=%s" % (k, v)]
    return subprocess.run(cmd + argv, capture_output=True, text=True, timeout=timeout)


def record(exe, args, extra):
    d = tempfile.mkdtemp(prefix="kestrel-a64-")
    raw = os.path.join(d, "p.raw.json")
    env = {"LD_PRELOAD": LIB, "KESTREL_PROFILE": raw}
    env.update(extra)
    p = qemu([exe] + args, env)
    return d, raw, p


def folded(path):
    stacks = []
    for line in open(path):
        st, n = line.rsplit(" ", 1)
        stacks.append((st.split(";"), int(n)))
    return stacks


def libc(f):
    """A frame in libc: named by address (its file here is x86-64's), or by name."""
    return f.startswith("libc.so.6+") or f.startswith("0x") or "qsort" in f or \
        "msort" in f or "memset" in f or "strdup" in f


# ---- prog_pacsign: the CPU qemu gives signs return addresses ----
p = subprocess.run([QEMU, "-cpu", "max", "-L", SYSROOT,
                    os.path.join(A64, "tests", "arch", "prog_pacsign")],
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 0 and p.stdout.startswith("signed "),
      "under -cpu max a pac-ret frame record holds a signed return address: %r" %
      p.stdout.strip())

# ---- auto chooses the signal engine, and says why ----
d, raw, p = record(os.path.join(A64, "tests", "runtime", "prog_threads"), [], {})
check(p.returncode == 0, "prog_threads exits 0 under qemu (%s)" % p.stderr[-300:])
r = load_raw(raw) if os.path.exists(raw) else {}
check(r.get("engine") == "signal", "auto chose the %s engine" % r.get("engine"))
why = r.get("engine_fallback") or ""
check("perf_event_open" in why and "emulator" in why, "engine_fallback says why: %r" % why)
check(r.get("platform") == "linux-aarch64", "platform %r" % r.get("platform"))
me = [im for im in r.get("images", []) if im.get("path", "").endswith("/prog_threads")]
check(len(me) == 1 and me[0].get("arch") == "aarch64",
      "the program's image has arch aarch64: %r" % [im.get("arch") for im in me])
shutil.rmtree(d)

# ---- prog_leaf: lr taken for a leaf, not repeated where the frame record has it ----
for prog in ("prog_leaf", "prog_leaf_pac"):
    for mode in ("fp", "cfi"):
        what = "%s/%s" % (prog, mode)
        d, raw, p = record(os.path.join(A64, "tests", "arch", prog), ["1.5"],
                           {"KESTREL_PROFILE_UNWIND": mode})
        out = os.path.join(d, "p.folded")
        k = subprocess.run([KESTREL, "export", "--format", "folded", "-o", out, raw],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0 and k.returncode == 0, "%s: recorded and exported (%s%s)" %
              (what, p.stderr[-200:], k.stderr[-200:]))
        stacks = folded(out) if k.returncode == 0 else []
        for fn, want in (("outer", ["main", "outer"]), ("leaf", ["main", "outer", "leaf"])):
            n_all = sum(n for fr, n in stacks if fr[-1] == fn)
            # under the thread's label: main's caller in libc (where the walk ends,
            # as perf record -g's does), then exactly these
            n_ok = sum(n for fr, n in stacks
                       if fr[-1] == fn and len(fr) > 2 and libc(fr[1]) and fr[2:] == want)
            check(n_all >= 100 and n_ok >= 0.99 * n_all, "%s: %d of %d samples in %s are "
                  "exactly libc;%s" % (what, n_ok, n_all, fn, ";".join(want)))
        shutil.rmtree(d)

# ---- prog_chain: whole stacks, exact callers, every build and walk ----
runs = [("fp", "fp"), ("fp", "cfi"), ("nofp", "cfi"), ("pac", "fp"), ("pac", "cfi"),
        ("pacnofp", "cfi")]
for build, mode in runs:
    what = "%s/%s" % (build, mode)
    exe = os.path.join(A64, "tests", "unwind", build, "prog_chain")
    d, raw, p = record(exe, ["0", "48"], {"KESTREL_PROFILE_UNWIND": mode})  # fixed work:
    # about 900 samples at the signal engine's 250 Hz (its timers fire once a kernel tick)
    check(p.returncode == 0, "%s: prog_chain exits 0 under qemu (%s)" % (what, p.stderr[-300:]))
    out = os.path.join(d, "p.folded")
    k = subprocess.run([KESTREL, "export", "--format", "folded", "-o", out, raw],
                       capture_output=True, text=True, timeout=120)
    check(k.returncode == 0, "%s: kestrel export reads the aarch64 profile (%s)" %
          (what, k.stderr[-300:]))
    stacks = folded(out) if k.returncode == 0 else []
    total = sum(n for _, n in stacks)
    good = sum(n for fr, n in stacks if any(f in ROOTS for f in fr))
    check(total > 300, "%s: %d on-CPU samples" % (what, total))
    check(total and good >= 0.99 * total, "%s: %d of %d samples (%.2f%%) reach main or "
          "thread_main" % (what, good, total, 100.0 * good / max(total, 1)))
    # cmp_ints: ..., root, do_work, lib_sort, libc's qsort frames..., cmp_ints
    cmp_all = cmp_ok = 0
    fill_all = fill_ok = 0
    for fr, n in stacks:
        if fr[-1] == "cmp_ints":
            cmp_all += n
            i = fr.index("lib_sort") if "lib_sort" in fr else -1
            mid = fr[i + 1:-1]
            if i >= 2 and fr[i - 1] == "do_work" and fr[i - 2] in ROOTS and mid and \
                    all(libc(f) for f in mid):
                cmp_ok += n
        elif libc(fr[-1]) and "lib_fill" in fr:
            fill_all += n
            i = fr.index("lib_fill")
            if i == len(fr) - 2 and fr[i - 1] == "do_work" and fr[i - 2] in ROOTS:
                fill_ok += n
    check(cmp_all >= 20 and cmp_ok >= 0.99 * cmp_all,
          "%s: %d of %d cmp_ints samples have the exact caller chain" % (what, cmp_ok, cmp_all))
    check(fill_all >= 20 and fill_ok >= 0.99 * fill_all,
          "%s: %d of %d samples in memset sit under lib_fill, do_work, a root" %
          (what, fill_ok, fill_all))
    rep = sum(n for fr, n in stacks
              if any(a == b and a in OWN for a, b in zip(fr, fr[1:])))
    check(rep < 0.01 * max(total, 1), "%s: %d of %d samples show a function of the program "
          "as its own caller" % (what, rep, total))
    if mode == "cfi":
        # With KESTREL_SYSROOT the arm64 libc qemu ran is found under it, and names
        # qsort_r (exported) under lib_sort; without it that frame has no name.
        out2 = os.path.join(d, "root.folded")
        env = dict(os.environ, KESTREL_SYSROOT=SYSROOT)
        k = subprocess.run([KESTREL, "export", "--format", "folded", "-o", out2, raw], env=env,
                           capture_output=True, text=True, timeout=120)
        rs = folded(out2) if k.returncode == 0 else []
        c_all = sum(n for fr, n in rs if fr[-1] == "cmp_ints")
        c_ok = sum(n for fr, n in rs if fr[-1] == "cmp_ints" and "lib_sort" in fr and
                   fr[fr.index("lib_sort") + 1] == "qsort_r")
        check(c_all >= 20 and c_ok >= 0.99 * c_all, "%s: with KESTREL_SYSROOT, %d of %d "
              "cmp_ints samples show qsort_r under lib_sort" % (what, c_ok, c_all))
        check(not any("qsort_r" in f for fr, _ in stacks for f in fr),
              "%s: without it, no frame is named qsort_r" % what)
    if (build, mode) == ("fp", "fp"):
        k = subprocess.run([KESTREL, "report", "--wide", raw], capture_output=True, text=True,
                           timeout=120)
        src = open(os.path.join(ROOT, "tests", "unwind", "prog_chain.c")).read().splitlines()
        want = [i + 1 for i, l in enumerate(src) if "sink += i" in l]
        row = r"^.*\d+\s+\d+\s+%s\s+(\S+)\s*$"
        m = re.search(row % "cmp_ints", k.stdout, re.M)
        check(m is not None and want and m.group(1) == "prog_chain.c:%d" % want[0],
              "report: cmp_ints at %s, its loop is prog_chain.c:%s" %
              (m.group(1) if m else None, want[0] if want else "?"))
    shutil.rmtree(d)

# ---- the heap profiler: stacks taken inside malloc ----
for build, mode in [("fp", "fp"), ("fp", "cfi"), ("nofp", "cfi"), ("pac", "fp"), ("pac", "cfi"),
                    ("pacnofp", "cfi")]:
    what = "heap %s/%s" % (build, mode)
    d = tempfile.mkdtemp(prefix="kestrel-a64-")
    exe = os.path.join(A64, "tests", "unwind", build, "prog_chain")
    p = qemu([exe, "0", "4"], {"LD_PRELOAD": LIB, "KESTREL_HEAP": d + "/",
                            "KESTREL_HEAP_INTERVAL": "65536", "KESTREL_PROFILE_UNWIND": mode})
    prof = glob.glob(os.path.join(d, "*.pb.gz"))
    check(p.returncode == 0 and len(prof) == 1, "%s: prog_chain exits 0 and leaves a heap "
          "profile (%s)" % (what, p.stderr[-300:]))
    out = os.path.join(d, "h.folded")
    k = subprocess.run([KESTREL, "export", "--format", "folded", "--sample-type", "alloc_space",
                        "-o", out] + prof[:1], capture_output=True, text=True, timeout=120)
    stacks = folded(out) if k.returncode == 0 else []
    keep = [(fr, n) for fr, n in stacks if "lib_keep" in fr]
    n_all = sum(n for _, n in keep)
    n_ok = sum(n for fr, n in keep if len(fr) >= 5 and libc(fr[-1]) and fr[-2] == "lib_keep" and
               fr[-3] == "do_work" and fr[-4] in ROOTS)
    check(n_all > 0 and n_ok >= 0.99 * n_all, "%s: %d of %d bytes allocated through strdup "
          "show root, do_work, lib_keep, strdup" % (what, n_ok, n_all))
    shutil.rmtree(d)

if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all passed")

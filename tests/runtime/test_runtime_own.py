#!/usr/bin/env python3
"""kestrel's own work never appears as the program's. With a heap profile, the runtime
works on the program's threads: the heap session's start (the unwind tables of every
image, through dl_iterate_phdr), a sample inside malloc (the stack walk, the bucket),
the heap file at the end. Each CPU sample taken there is left out of the profile and
counted in engine_stats.runtime_samples.

Debian's python3 (its own build, no frame pointers) runs a short program (about 110 ms: enough for the signal engine's tick-bound timers to take 5 samples)
and a long one (about 3 s of allocations, sampled every 64 KiB), at 4999 Hz, under
each engine (KESTREL_PROFILE_ENGINE=signal and perf), with and without KESTREL_HEAP.
In every profile:
- no sample has a frame of the runtime's own work (its unwind tables, images, heap
  sampling and writing functions: libkestrel.so's symbols) nor one in libc's
  dl_iterate_phdr, which only the runtime calls in these programs (the issue this
  answers: 5.5% of a short run's samples under `[incomplete stack];__GI___dl_iterate_phdr`);
- runtime_samples is written; 0 without a heap profile (nothing of kestrel's runs on
  the program's threads then), and more than 0 in the long run with one (its sampling
  is found and counted, not lost);
- `kestrel report` says how many samples it left out, when there were any.
The perf engine runs only where perf_event_open is allowed; the test says when it is not."""
import glob
import os
import re
import subprocess

from rtlib import BUILD, LIB, Checker, image_of, load, symbols, tmpdir

c = Checker()
KESTREL = os.path.join(BUILD, "bin", "kestrel")
PY = sorted(p for p in glob.glob("/usr/bin/python3.*") if re.fullmatch(r".*/python3\.\d+", p))[0]
SHORT = "x = [str(i) for i in range(1000000)]"
LONG = ("import time\nt = time.time()\nwhile time.time() - t < 3:\n"
        "    x = [str(i) * 3 for i in range(20000)]\n")

# The runtime's own work: what runs on a program's thread for kestrel's sake alone.
# Not its entry frames on the thread's own stack (heap_sample, heap_side_run: the switch
# to the side stack and back), nor a sampled calloc's zeroing or realloc's copy there,
# which the program asked for.
OWN = re.compile(r"^(uw_|cfi_|fde_|row_of|run$|images_|maps_|heap_sample_work|heap_stack|"
                 r"heap_table|heap_pprof|heap_gzip|heap_encode|heap_flush|heap_build|"
                 r"heap_bucket|heap_sampled_free_work|heap_region|heap_start|pb_)")
kestrel_syms = symbols(LIB)
own_syms = sorted((n, r) for n, r in kestrel_syms.items() if OWN.match(n))


def own_name(prof, a):
    im = image_of(prof, a)
    if im is None:
        return hex(a)
    off = a - im["slide"]
    if im["path"].endswith("/libkestrel.so"):
        for n, (lo, hi) in kestrel_syms.items():
            if lo <= off < hi:
                return n
    return "%s+%#x" % (os.path.basename(im["path"]), off)


def libc_path(d):
    for im in d["images"]:
        if re.search(r"/libc\.so\.6$", im["path"]):
            return im
    return None


def dyn_symbol(path, name):
    out = subprocess.run(["nm", "-D", "-S", "--defined-only", path], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[3].split("@")[0] == name:
            a = int(p[0], 16)
            return (a, a + int(p[1], 16))
    return None


def perf_allowed():
    d = tmpdir()
    path = os.path.join(d, "p.json")
    env = dict(os.environ, LD_PRELOAD=LIB, KESTREL_PROFILE=path, KESTREL_PROFILE_ENGINE="perf")
    p = subprocess.run(["/bin/true"], env=env, capture_output=True, text=True)
    return p.returncode == 0 and os.path.exists(path) and load(path).get("engine") == "perf"


def check_run(engine, length, heap):
    what = "%s engine, %s program, %s" % (engine, length, "with --heap" if heap else "CPU only")
    d = tmpdir()
    path = os.path.join(d, "p.json")
    env = dict(os.environ, LD_PRELOAD=LIB, KESTREL_PROFILE=path, KESTREL_PROFILE_ENGINE=engine,
               KESTREL_PROFILE_HZ="4999")
    if heap:
        env.update(KESTREL_HEAP=os.path.join(d, "h.pb.gz"), KESTREL_HEAP_INTERVAL="65536")
    p = subprocess.run([PY, "-c", SHORT if length == "short" else LONG], env=env,
                       capture_output=True, text=True, timeout=120)
    if not c.check(p.returncode == 0 and os.path.exists(path),
                   "%s: exit %d: %s" % (what, p.returncode, p.stderr[-400:])):
        return
    if heap:
        c.check(os.path.exists(env["KESTREL_HEAP"]), what + ": a heap profile")
    prof = load(path)
    c.check(prof.get("engine") == engine, "%s: engine %s" % (what, prof.get("engine")))
    libc = libc_path(prof)
    dl = dyn_symbol(libc["path"], "dl_iterate_phdr") if libc else None
    c.check(dl is not None, what + ": libc's dl_iterate_phdr found")
    own = in_dl = 0
    for s in prof["samples"]:
        frames = prof["stacks"][s[2]]
        is_own = is_dl = False
        for a in frames:
            im = image_of(prof, a)
            if im is None:
                continue
            off = a - im["slide"]
            if im["path"] == LIB or im["path"].endswith("/libkestrel.so"):
                hit = [n for n, (lo, hi) in own_syms if lo <= off < hi]
                if hit and not is_own:
                    print("  %s: in kestrel's work: %s" % (what, " <- ".join(
                        own_name(prof, x) for x in frames[:12])))
                is_own |= bool(hit)
            elif libc and im is libc and dl:
                is_dl |= dl[0] <= off < dl[1]
        own += is_own
        in_dl += is_dl
    n = len(prof["samples"])
    rt = prof.get("engine_stats", {}).get("runtime_samples")
    print("%s: %d samples, %d in kestrel's work, %d in dl_iterate_phdr, runtime_samples %s"
          % (what, n, own, in_dl, rt))
    c.check(n >= (5 if length == "short" else 150), "%s: %d samples" % (what, n))
    c.check(own == 0, "%s: %d of %d samples in kestrel's own work" % (what, own, n))
    c.check(in_dl == 0, "%s: %d of %d samples in dl_iterate_phdr" % (what, in_dl, n))
    c.check(isinstance(rt, int), what + ": engine_stats.runtime_samples written")
    if not heap:
        c.check(rt == 0, "%s: runtime_samples %s without a heap profile" % (what, rt))
    elif length == "long":
        c.check(isinstance(rt, int) and rt > 0,
                "%s: runtime_samples %s: kestrel's sampling was found" % (what, rt))
    rep = subprocess.run([KESTREL, "report", path], capture_output=True, text=True)
    said = re.search(r"kestrel's own work on the program's threads: (\d+) samples?", rep.stdout)
    if rt:
        c.check(said is not None and int(said.group(1)) == rt,
                "%s: the report says %s samples were left out: %s" % (what, rt, rep.stdout[-600:]))
    else:
        c.check(said is None, "%s: the report says nothing of none" % what)


engines = ["signal"]
if perf_allowed():
    engines.append("perf")
else:
    print("perf_event_open is not allowed here: the perf engine is not tested")
for engine in engines:
    for length in ("short", "long"):
        for heap in (False, True):
            check_run(engine, length, heap)
c.exit()

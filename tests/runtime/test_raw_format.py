#!/usr/bin/env python3
"""The raw JSON of a multi-threaded program matches FORMATS.md §1 and kestrel's
optional fields: every thread present with samples, stacks leaf-first, frame 0 inside
an image's text range, the loader listed, the executable's build id, the CPU column
adding up to the CPU time the process really used. Under qemu-user
(KESTREL_TEST_ARCH=aarch64) the executable is the aarch64 program the helper's wrapper
runs, and a thread's name the emulator's."""
import glob
import os
import resource
import subprocess
import time

from rtlib import (ARCH, Checker, rate_of, build_id, default_thread_name, image_of, load, name_of,
                   prog, profiled_env, program_file, symbols, tmpdir, validate)

c = Checker()
d_ = tmpdir()
exe = program_file("prog_threads")
before = resource.getrusage(resource.RUSAGE_CHILDREN)
p = subprocess.run([prog("prog_threads"), "3", "300"],
                   env=profiled_env(os.path.join(d_, "cpu.%p.json")), timeout=300,
                   capture_output=True, text=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
c.check(p.returncode == 0, "exit status %d, stderr %s" % (p.returncode, p.stderr))
files = glob.glob(os.path.join(d_, "*"))
c.check(len(files) == 1, "one file, no temporary left: %s" % files)
f = files[0] if files else None
d = load(f) if f else {}
validate(d, c, "prog_threads")
c.check(f and os.path.basename(f) == "cpu.%d.json" % d.get("pid", -1), "%%p became the pid: %s" % f)
c.check(d.get("requested_hz") == 997, "default rate 997")
hz = rate_of(d, c, 997)

# Threads: main + 3 workers, each with on-CPU samples.
th = d.get("threads", [])
c.check(len(th) == 4, "4 threads, got %d" % len(th))
c.check(th and th[0]["label"] == "main" and th[0]["fiber"] == 0, "thread 0 is main/fiber 0")
c.check(all(isinstance(t.get("tid"), int) and t.get("name") == default_thread_name("prog_threads")
            for t in th),
        "tid and name of every thread: %r" % th)
c.check(len({t.get("tid") for t in th}) == len(th), "distinct tids")
counts = [0] * len(th)
for s in d.get("samples", []):
    if s[3] == 0:
        counts[s[1]] += 1
c.check(all(n >= 50 * hz / 997 for n in counts), "every thread has on-CPU samples: %s" % counts)

# Images: the executable with readelf's build id, libc, the loader.
ims = d.get("images", [])
me = [im for im in ims if im["path"] == exe]
c.check(len(me) == 1, "the executable is listed once")
if me:
    c.check(me[0].get("build_id") == build_id(exe), "build id %s vs readelf %s" %
            (me[0].get("build_id"), build_id(exe)))
    c.check(me[0]["text_size"] > 0 and me[0]["arch"] == ARCH, "exe text span and arch")
c.check(any("ld-linux" in im["path"] for im in ims), "the dynamic loader is listed")
c.check(d.get("exe") == exe, "exe %s" % d.get("exe"))

# Frame 0 of every on-CPU sample lies in some image's executable span.
stacks = d.get("stacks", [])
on = [s for s in d.get("samples", []) if s[3] == 0]
outside = sum(1 for s in on if not stacks[s[2]] or not image_of(d, stacks[s[2]][0]))
c.check(on and outside == 0, "%d of %d on-CPU samples have frame 0 outside every image" %
        (outside, len(on)))

# Leaf-first: samples in spin() show descend() x5 then work() after it, in that order.
# spin() is a leaf that gcc builds without a frame of its own even with
# -fno-omit-frame-pointer, so its direct caller cannot be seen: 4 or 5 descend().
syms = {exe: symbols(exe)}
in_spin = ordered = 0
for s in on:
    names = [name_of(d, syms, a) for a in stacks[s[2]]]
    if names and names[0] == "spin":
        in_spin += 1
        k = names.index("work") if "work" in names else -1
        if k in (5, 6) and names[1:k] == ["descend"] * (k - 1):
            ordered += 1
c.check(in_spin > 0.8 * len(on), "most samples in spin: %d of %d" % (in_spin, len(on)))
c.check(ordered > 0.95 * in_spin, "leaf-first chains spin<descend*5<work: %d of %d" %
        (ordered, in_spin))
c.check(d.get("walks_cut_short", -1) <= 0.01 * len(on), "walks cut short: %s" %
        d.get("walks_cut_short"))

# The 5th column adds up to (nearly all of) the CPU time the process used.
cpu_rusage = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e9
cpu_samples = sum(s[4] for s in d.get("samples", []))
c.check(0.8 * cpu_rusage <= cpu_samples <= 1.02 * cpu_rusage,
        "sampled CPU %.3fs vs rusage %.3fs" % (cpu_samples / 1e9, cpu_rusage / 1e9))
c.exit()

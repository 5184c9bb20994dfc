#!/usr/bin/env python3
"""bench/dist/complete.py [ROUNDS] [HZ]

Stack completeness on programs as Debian ships them (built without frame pointers,
stripped, libc's debug info from libc6-dbg): xz, gzip and bzip2 compressing a text
file (4 MB for xz, 24 MB for the others), perl and python3 running a loop. Each runs
under kestrel record (its default: perf engine, CFI unwinding), perf record -g, perf
record --call-graph dwarf and samply record --save-only, at HZ (997), every profiler
once a round in a rotated order.
A sample's stack is complete when it reaches the start of its thread: a frame of
__libc_start_call_main / __libc_start_main (the main thread) or start_thread / clone3
(the others); the figure is the share of a run's on-CPU samples whose stack does, the
median over the rounds, beside the median number of samples. Prints a markdown table."""
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import samply_read  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KESTREL = os.path.join(ROOT, "build", "bin", "kestrel")
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
hz = int(sys.argv[2]) if len(sys.argv) > 2 else 997
tmp = tempfile.mkdtemp(prefix="kestrel-dist-")
ROOTS = {"libc_start_call_main", "libc_start_main", "libc_start_main_impl",
         "libc_start_main_alias_2", "start_thread", "clone3"}

# A 24 MB text of words, compressible, not trivially (xz -6 gets its first 4 MB).
text = os.path.join(tmp, "words.txt")
rnd = random.Random(1)
words = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 9)))
         for _ in range(20000)]
with open(text, "w") as f:
    for _ in range(24):
        f.write(" ".join(rnd.choice(words) for _ in range(170000)) + "\n")
small = os.path.join(tmp, "words4.txt")
with open(text, "rb") as f, open(small, "wb") as g:
    g.write(f.read(4 << 20))

PROGRAMS = {
    "xz -6": ["/usr/bin/xz", "-6", "-T1", "-c", small],
    "gzip -9": ["/usr/bin/gzip", "-9", "-c", text],
    "bzip2 -9": ["/usr/bin/bzip2", "-9", "-c", text],
    "perl": ["/usr/bin/perl", "-e",
             'my %h; for my $i (1..3000000) { $h{$i % 5003} .= chr(97 + $i % 26); '
             'delete $h{$i % 5003} if length($h{$i % 5003}) > 64 }'],
    "python3": ["/usr/bin/python3", "-c",
                "d = {}\nfor i in range(3000000):\n    d[i % 5003] = d.get(i % 5003, '') + chr(97 + i % 26)\n"
                "    if len(d[i % 5003]) > 64: del d[i % 5003]\n"],
}


def complete_share(stacks):
    tot = good = 0
    for frames, n in stacks:
        tot += n
        good += n if any(f.lstrip("_") in ROOTS for f in frames) else 0
    return (good / tot if tot else float("nan")), tot


def run_kestrel(cmd):
    stem = os.path.join(tmp, "k")
    subprocess.run([KESTREL, "record", "-F", str(hz), "-o", stem, "--report=" + stem + ".report",
                    "--"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    stacks = []
    for line in open(stem + ".folded"):
        st, n = line.rstrip("\n").rsplit(" ", 1)
        stacks.append((st.split(";"), int(n)))
    return stacks


def run_perf(cmd, cg):
    data = os.path.join(tmp, "perf.data")
    subprocess.run(["perf", "record", "-q", "-F", str(hz)] + cg + ["-o", data, "--"] + cmd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    s = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym"], capture_output=True,
                       text=True).stdout
    stacks = []
    for block in s.split("\n\n"):
        fr = [(l.split() + ["", ""])[1] for l in block.strip().splitlines()]
        if fr:
            stacks.append((fr, 1))
    return stacks


def run_samply(cmd):
    out = os.path.join(tmp, "samply.json.gz")
    subprocess.run(samply_read.run_argv([samply_read.SAMPLY, "record", "--save-only",
                                         "--unstable-presymbolicate", "-r", str(hz), "-o", out,
                                         "--"] + cmd, tmp),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return samply_read.stacks(out)


PROFILERS = {
    "kestrel": run_kestrel,
    "perf -g": lambda c: run_perf(c, ["-g"]),
    "perf dwarf": lambda c: run_perf(c, ["--call-graph", "dwarf"]),
    "samply": run_samply,
}


names = list(PROFILERS)
res = {(p, q): [] for p in PROGRAMS for q in names}
for r in range(rounds):
    for prog, cmd in PROGRAMS.items():
        for q in names[r % len(names):] + names[:r % len(names)]:
            share, n = complete_share(PROFILERS[q](cmd))
            res[(prog, q)].append((share, n))
print("| %d Hz, %d rounds: share of samples whose stack reaches the thread's start (samples) | %s |"
      % (hz, rounds, " | ".join(names)))
print("|---|" + "---|" * len(names))
for prog in PROGRAMS:
    cells = []
    for q in names:
        v = res[(prog, q)]
        cells.append("%.1f%% (%d)" % (100 * statistics.median(x[0] for x in v),
                                       statistics.median(x[1] for x in v)))
    print("| `%s` | %s |" % (prog, " | ".join(cells)))
shutil.rmtree(tmp)

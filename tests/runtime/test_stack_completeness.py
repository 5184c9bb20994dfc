#!/usr/bin/env python3
"""How whole the stacks are, as `kestrel record --heap` states it, for one program
built with frame pointers and without (prog_libcwork, prog_libcwork_nofp), both
calling into libc: without frame pointers the report states a high share of
incomplete stacks, names the program's image among those where walks end and says it
was built without frame pointers; with them, the share is below the report's
threshold and it says nothing. The share agrees, within three standard errors, with
the truth read from the stacks themselves (a whole stack of the work holds main), and
the heap profile says the same."""
import glob
import json
import os
import subprocess

from rtlib import BUILD, ENGINE, Checker, load, prog, rate_of, tmpdir

c = Checker()
d_ = tmpdir()
kestrel = os.path.join(BUILD, "bin", "kestrel")


def record(name):
    stem = os.path.join(d_, name)
    # Frame-pointer walks: what this checks is how kestrel reports the stacks a frame-
    # pointer walk cannot complete (the default, CFI, completes them: tests/unwind).
    env = dict(os.environ, KESTREL_PROFILE_ENGINE=ENGINE, KESTREL_PROFILE_UNWIND="fp")
    p = subprocess.run([kestrel, "record", "--heap", "-o", stem, "--report=/dev/stdout", "--",
                        prog(name), "1500"],
                       env=env, timeout=300, capture_output=True, text=True)
    c.check(p.returncode == 0, "%s: kestrel record exit %d: %s" % (name, p.returncode, p.stderr))
    out = {}
    for kind, suffix in (("cpu", ".profile.json"), ("heap", ".heap.profile.json")):
        try:
            with open(stem + suffix) as f:
                out[kind] = json.load(f)
        except (OSError, ValueError) as e:
            c.check(False, "%s: %s%s: %s" % (name, stem, suffix, e))
            out[kind] = {"stacks": {"known": False, "incomplete": {"share": -1, "se": 0}}}
    raws = glob.glob(stem + ".raw/*.raw.json")
    hz = rate_of(load(raws[0]), c, 997) if c.check(len(raws) == 1, "%s: one raw file" % name) else 997
    return p.stdout, out, stem, hz


def folded_truth(path):
    """Samples, and those whose stack lacks main (the truth of "cut") from the folded
    export, and those under [incomplete stack] (what kestrel says)."""
    total = no_main = marked = 0
    with open(path) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            frames, n = stack.split(";"), int(n)
            total += n
            no_main += n * ("main" not in frames)
            marked += n * ("[incomplete stack]" in frames)
    return total, no_main, marked


def incomplete_line(report):
    return [l for l in report.splitlines() if "incomplete stacks:" in l]


for name, fp in (("prog_libcwork", True), ("prog_libcwork_nofp", False)):
    report, pj, stem, hz = record(name)
    cpu, heap = pj["cpu"]["stacks"], pj["heap"]["stacks"]
    share, se = cpu["incomplete"]["share"], cpu["incomplete"]["se"]
    print("%s (%s engine): %.1f%% +- %.1f of samples incomplete; heap %.1f%%; report lines: %s" %
          (name, ENGINE, 100 * share, 100 * se, 100 * heap["incomplete"]["share"],
           incomplete_line(report)))
    c.check(cpu["known"] and heap["known"], "%s: the profiles record how walks ended" % name)
    total, no_main, marked = folded_truth(stem + ".folded")
    c.check(total >= 1.5 * hz / 3, "%s: %d samples of 1.5 s at %d Hz" % (name, total, hz))
    truth = no_main / total if total else -1
    c.check(abs(marked / max(total, 1) - share) < 1e-6,
            "%s: profile.json's share %.4f is the folded export's [incomplete stack] share %d/%d" %
            (name, share, marked, total))
    c.check(abs(share - truth) <= max(3 * se, 0.02),
            "%s: stated %.3f +- %.3f, truth (stacks without main) %.3f" % (name, share, se, truth))
    lines = incomplete_line(report)
    if fp:
        if not c.check(share < 0.02, "%s: with frame pointers, %.3f incomplete" % (name, share)):
            with open(stem + ".folded") as f:
                print("".join(l for l in f if "[incomplete stack]" in l), end="")
        c.check(heap["incomplete"]["share"] < 0.02,
                "%s: heap, %.3f incomplete" % (name, heap["incomplete"]["share"]))
        c.check(all("%.1f%%" % (100 * share) in l for l in lines[:1]),
                "%s: the report says nothing, or the same figure: %s" % (name, lines))
        c.check(not any(name in l for l in report.splitlines() if "built without" in l),
                "%s: never called a build without frame pointers" % name)
    else:
        c.check(share >= 0.9, "%s: without frame pointers, %.3f incomplete" % (name, share))
        c.check(heap["incomplete"]["share"] >= 0.9,
                "%s: heap, %.3f incomplete" % (name, heap["incomplete"]["share"]))
        c.check(len(lines) == 2, "%s: the CPU and the heap report state it: %s" % (name, lines))
        c.check(lines and ("%.1f%%" % (100 * share)) in lines[0] and
                ("±%.1f" % (100 * se)) in lines[0],
                "%s: the report's figure is profile.json's: %s" % (name, lines[:1]))
        c.check(lines and name in lines[0], "%s: names its image: %s" % (name, lines[:1]))
        ends = {e["image"]: e for e in cpu["ends"]}
        c.check(name in ends and ends[name]["frame_pointers"] and
                ends[name]["frame_pointers"]["without"],
                "%s: its CFI says it keeps no frame pointers: %s" % (name, ends.get(name)))
        fixes = [l for l in report.splitlines() if "built without frame pointers" in l]
        c.check(fixes and name in fixes[0] and "-fno-omit-frame-pointer" in fixes[0],
                "%s: the fix is named: %s" % (name, fixes))
c.exit()

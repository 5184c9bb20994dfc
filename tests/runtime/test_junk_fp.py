#!/usr/bin/env python3
"""A program whose frame-pointer register holds data (prog_junkfp: rbp points at a
fake frame record of a large value past 2^63 and a small one) is recorded by
`kestrel record`: it prints a report and writes every export, the raw file holds no
frame after the leaf outside an image's text, and the junk loop's stacks end there
with the reason `no_exec` while the plain loop's reach the root; a thread blocked in
read(2) with the same rbp has waiting stacks cut there too."""
import glob
import os
import re
import subprocess

from rtlib import BUILD, ENGINE, Checker, image_of, load, name_of, prog, symbols, tmpdir, validate

c = Checker()
d_ = tmpdir()
exe = prog("prog_junkfp")
stem = os.path.join(d_, "junk")
env = dict(os.environ, KESTREL_PROFILE_ENGINE=ENGINE)
p = subprocess.run([os.path.join(BUILD, "bin", "kestrel"), "record", "-o", stem,
                    "--report=/dev/stdout", "--", exe, "400"],
                   env=env, timeout=300, capture_output=True, text=True)
c.check(p.returncode == 0, "kestrel record exit %d, stderr %s" % (p.returncode, p.stderr))
c.check("not valid JSON" not in p.stderr, "the raw file read: %s" % p.stderr)
c.check("junk_loop" in p.stdout and "SELF%" in p.stdout, "a report: %s" % p.stdout[:2000])
for ext in (".speedscope.json", ".cpuprofile", ".folded", ".pb.gz", ".profile.json", ".html"):
    c.check(os.path.exists(stem + ext), "export %s written" % ext)
raws = glob.glob(stem + ".raw/*.raw.json")
c.check(len(raws) == 1, "one raw file: %s" % raws)
d = load(raws[0]) if raws else {"images": [], "stacks": [], "samples": []}
validate(d, c, "prog_junkfp")

stacks, ends = d.get("stacks", []), d.get("stack_ends", [])
outside = [(i, f) for i, s in enumerate(stacks) for f in s[1:] if not image_of(d, f)]
c.check(not outside, "%d frames after the leaf outside every image's text, e.g. %s" %
        (len(outside), outside[:5]))
junk = {0xff69aabbccddee07, 0x1234}
c.check(not any(f in junk for s in stacks for f in s), "no junk value written as a frame")

syms = {exe: symbols(exe)}
leaf = {}
for s in d.get("samples", []):
    if s[3] == 0 and stacks[s[2]]:
        leaf.setdefault(name_of(d, syms, stacks[s[2]][0]), []).append(s[2])


def spin_range(path):
    """junk_loop's instructions that run with rbp = the fake record: from the one after
    `mov ...,%rbp` through `pop %rbp` (objdump). A sample at its first instructions or
    its `ret` has the caller's rbp and may walk whole."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path],
                         capture_output=True, text=True).stdout
    body = out.split("<junk_loop>:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    ins = [(int(m.group(1), 16), m.group(2)) for m in
           (re.match(r"\s*([0-9a-f]+):\s*(.*)", line) for line in body) if m]
    first = next(k for k, (_, t) in enumerate(ins) if re.match(r"mov\s+%\w+,%rbp$", t))
    last = next(k for k, (_, t) in enumerate(ins) if re.match(r"pop\s+%rbp$", t))
    return ins[first + 1][0], ins[last][0]


lo, hi = spin_range(exe)
in_junk = leaf.get("junk_loop", [])
in_spin = [i for i in in_junk
           if lo <= stacks[i][0] - image_of(d, stacks[i][0])["slide"] <= hi]
c.check(len(in_spin) >= 50, "junk_loop sampled in its spin: %d of %d" %
        (len(in_spin), len(in_junk)))
c.check(all(ends[i] == 11 and len(stacks[i]) == 1 for i in in_spin),
        "junk_loop's stacks in its spin are its PC alone, cut by no_exec: %s" %
        sorted({(ends[i], len(stacks[i])) for i in in_spin}))
# The thread blocked in read(2) from junk_wait: waiting samples, cut there.
waits = {}
for s in d.get("samples", []):
    if s[3] == 1 and stacks[s[2]]:
        waits.setdefault(name_of(d, syms, stacks[s[2]][0]), []).append(s[2])
in_wait = waits.get("junk_wait", [])
c.check(len(in_wait) >= 50, "junk_wait's waiting samples: %d (%s)" %
        (len(in_wait), {k: len(v) for k, v in waits.items()}))
# The kernel's callchain (perf engine) follows rbp, so the stack is cut; the signal
# engine reads the waiting stack's return addresses from its memory, rbp aside, and
# may find the whole stack: then it holds junk_wait's caller.
whole = [i for i in set(in_wait) if ends[i] in (0, 1, 8)]
c.check(all(ends[i] != 7 for i in in_wait), "junk_wait's stacks are classified")
c.check(all("waiter" in [name_of(d, syms, f) for f in stacks[i]] for i in whole),
        "junk_wait's whole stacks hold its caller: %s" %
        [[name_of(d, syms, f) for f in stacks[i]] for i in whole])
if ENGINE == "perf":
    c.check(not whole, "perf engine: junk_wait's stacks are cut: %s" %
            sorted({(ends[i], len(stacks[i])) for i in in_wait}))
in_plain = leaf.get("plain_for", [])
c.check(len(in_plain) >= 20, "plain_for sampled: %d" % len(in_plain))
c.check(all(ends[i] == 1 for i in in_plain),
        "plain_for's stacks reach the root: %s" % sorted({ends[i] for i in in_plain}))
c.check(d.get("walk_stops", {}).get("no_exec", 0) >= len(set(in_spin)),
        "walk_stops counts the no_exec cuts: %s" % d.get("walk_stops"))
c.exit()

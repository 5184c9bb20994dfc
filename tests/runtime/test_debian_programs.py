#!/usr/bin/env python3
"""Debian's own programs, built without frame pointers, recorded by `kestrel record`:
gzip compressing random data, python3 running a loop. Each gets a report and every
export (never "not valid JSON"), and the report states that most samples have
incomplete stacks, names the program's own image among those where walks end, and
says from its CFI that it was built without frame pointers (python3's is
libpython3.X.so, where Debian's interpreter runs)."""
import json
import os
import subprocess

from rtlib import BUILD, ENGINE, Checker, tmpdir

c = Checker()
d_ = tmpdir()
kestrel = os.path.join(BUILD, "bin", "kestrel")
data = os.path.join(d_, "random.bin")
with open(data, "wb") as f:
    f.write(os.urandom(24 << 20))

cases = [
    ("gzip", "gzip", ["gzip", "-9", "-c", data]),
    # Debian's python3 runs its interpreter from libpython3.X.so.
    ("python3", "libpython3", ["python3", "-c",
                            "s = 0\nfor i in range(6000000):\n    s += i * i % 7\nprint(s)"]),
]
for label, image, argv in cases:
    stem = os.path.join(d_, label)
    # Frame-pointer walks: what this checks is how kestrel reports the stacks a frame-
    # pointer walk cannot complete (the default, CFI, completes them: tests/unwind).
    env = dict(os.environ, KESTREL_PROFILE_ENGINE=ENGINE, KESTREL_PROFILE_UNWIND="fp")
    # The program's own output (gzip's compressed data) is of no interest: the report
    # is read again from the raw file below.
    p = subprocess.run([kestrel, "record", "-o", stem, "--"] + argv, env=env, timeout=300,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       errors="replace")
    c.check(p.returncode == 0, "%s: kestrel record exit %d: %s" % (label, p.returncode, p.stderr[-500:]))
    c.check("not valid JSON" not in p.stderr, "%s: the raw file read: %s" % (label, p.stderr[-500:]))
    for ext in (".speedscope.json", ".cpuprofile", ".folded", ".pb.gz", ".profile.json", ".html"):
        c.check(os.path.exists(stem + ext), "%s: export %s written" % (label, ext))
    raws = [os.path.join(stem + ".raw", f) for f in os.listdir(stem + ".raw")
            if f.endswith(".raw.json")] if os.path.isdir(stem + ".raw") else []
    c.check(len(raws) == 1, "%s: one raw file: %s" % (label, raws))
    report = subprocess.run([kestrel, "report"] + raws[:1], capture_output=True, text=True).stdout
    try:
        with open(stem + ".profile.json") as f:
            st = json.load(f)["stacks"]
    except (OSError, ValueError, KeyError):
        st = {"known": False, "incomplete": {"share": 0, "se": 0}, "ends": []}
    share = st["incomplete"]["share"]
    lines = [l for l in report.splitlines() if "incomplete stacks:" in l or "frame pointers" in l]
    print("%s (%s engine): %.1f%% incomplete; %s" % (label, ENGINE, 100 * share, lines))
    c.check(st["known"] and share >= 0.5, "%s: most samples incomplete: %.3f" % (label, share))
    c.check(lines and ("%.1f%%" % (100 * share)) in lines[0], "%s: the report states it: %s" %
            (label, lines))
    ends = {e["image"]: e for e in st["ends"] if (e["image"] or "").startswith(image)}
    c.check(len(ends) == 1, "%s: walks end in %s: %s" % (label, image,
                                                       [e["image"] for e in st["ends"]]))
    fp = list(ends.values())[0].get("frame_pointers") if ends else None
    c.check(fp and fp["without"], "%s: its CFI says no frame pointers: %s" % (label, fp))
    c.check(any(image in l and "built without frame pointers" in l for l in lines),
            "%s: the report says so, with the fix: %s" % (label, lines))
c.exit()

#!/usr/bin/env python3
"""A Debian-built program without frame pointers: `kestrel record -- xz -3 -c FILE >
OUT` with the default unwinding, both engines. At least 99% of the stack walks reach
the thread's top (its outermost frame) rather than being cut short, and xz's output
still decompresses to FILE."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from uwlib import check, failures, KESTREL, load_raw


XZ = shutil.which("xz")
if not XZ:
    print("FAIL xz is not installed (Debian's xz-utils)")
    sys.exit(1)
d = tempfile.mkdtemp(prefix="kestrel-xz-")
src = os.path.join(d, "in.txt")
with open(src, "wb") as f:  # compressible but not trivially: words from a fixed LCG
    x, words = 12345, [b"alpha", b"beta", b"gamma", b"delta", b"kestrel", b"frame", b"stack"]
    out = []
    for i in range(1500000):
        x = (x * 1103515245 + 12345) & 0x7fffffff
        out.append(words[x % 7] + (b"%d " % (x % 1000)))
    f.write(b"".join(out))
for engine in ("signal", "perf"):
    stem = os.path.join(d, engine)
    outp = os.path.join(d, engine + ".xz")
    with open(outp, "wb") as o:
        p = subprocess.run([KESTREL, "record", "--engine", engine, "-o", stem, "--", XZ, "-3",
                            "-c", src], stdout=o, stderr=subprocess.PIPE, timeout=300)
    check(p.returncode == 0, "%s: kestrel record -- xz exits 0" % engine)
    back = subprocess.run([XZ, "-dc", outp], capture_output=True, timeout=120).stdout
    check(back == open(src, "rb").read(), "%s: xz's output decompresses to its input" % engine)
    raw = load_raw(glob.glob(stem + ".raw/*.raw.json")[0])
    ws = raw["walk_stops"]
    walked = sum(v for k, v in ws.items() if k != "not_walked")
    whole = ws.get("top", 0) + ws.get("end", 0) + ws.get("cfi_end", 0)
    check(raw.get("unwind") == "auto", "%s: the default unwinding is auto" % engine)
    check(walked > 300 and whole >= 0.99 * walked,
          "%s: %d of %d walks (%.2f%%) reach the thread's top" %
          (engine, whole, walked, 100.0 * whole / max(walked, 1)))
shutil.rmtree(d)
if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all passed")

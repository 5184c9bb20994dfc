#!/usr/bin/env python3
"""Strings that are not UTF-8 in the raw profile: a thread name with a surrogate
(ed a0 80), an overlong form (c0 af), a code point past U+10FFFF (f4 90 80 80) and a
lead byte F5..FF, and a library loaded from a directory with a Latin-1 name (caf\\xe9).
The file stays strict JSON (Python's parser and kestrel's), each such string is written
reversibly with its "<key>_bytes" flag and decodes back to the exact bytes, and kestrel
report opens the library at its path and names its function (names_burn). Before,
they were written as is (the CLI refused the file) or replaced by U+FFFD (the library
could not be found for symbols)."""
import json
import os
import shutil
import subprocess

from rtlib import Checker, ROOT, prog, profiled_env, tmpdir, run

c = Checker()
exe = prog("prog_names")
K = os.path.join(ROOT, "build", "bin", "kestrel")
d = tmpdir()
odd = os.path.join(os.fsencode(d), b"caf\xe9 \xff")
os.mkdir(odd)
lib = os.path.join(odd, b"libnames.so")
cc = subprocess.run(["cc", "-O1", "-g", "-fno-omit-frame-pointer", "-shared", "-fPIC", "-o",
                     os.fsdecode(lib), os.path.join(ROOT, "tests", "runtime", "names_lib.c")],
                    capture_output=True, text=True)
c.check(cc.returncode == 0, "library built: " + cc.stderr)
name = b"\xed\xa0\x80-\xc0\xaf-\xf4\x90\x80\x80-\xf5\xff"
out = os.path.join(d, "p.json")
r = subprocess.run([exe, lib, name.hex()], env=profiled_env(out), capture_output=True, timeout=120)
c.check(r.returncode == 0, "status %d: %s" % (r.returncode, r.stderr))


def raw_bytes(s):
    return bytes(ord(ch) for ch in s)  # U+0080..U+00FF stand for bytes


with open(out, "rb") as f:
    text = f.read()
try:
    doc = json.loads(text.decode("utf-8"))  # strict: invalid UTF-8 raises
except ValueError as e:
    c.check(False, "not strict JSON: %s" % e)
    c.exit()
names = [t for t in doc["threads"] if t.get("name_bytes")]
c.check(len(names) == 1 and raw_bytes(names[0]["name"]) == name[:15],
        "thread name as bytes: %r" % names)
imgs = [im for im in doc["images"] if im.get("path_bytes")]
c.check(len(imgs) == 1 and raw_bytes(imgs[0]["path"]) == lib, "image path as bytes: %r" % imgs)
plain = [im for im in doc["images"] if not im.get("path_bytes")]
c.check(all("\\u00" not in json.dumps(im["path"]) for im in plain), "valid paths as they are")

rep = subprocess.run([K, "report", out], capture_output=True, timeout=120)
c.check(rep.returncode == 0, "kestrel report: %s" % rep.stderr.decode(errors="replace"))
c.check(b"names_burn" in rep.stdout, "kestrel report names the library's function: %s"
        % rep.stdout.decode(errors="replace")[-1500:])
shutil.rmtree(d, ignore_errors=True)
c.exit()

#!/usr/bin/env python3
"""Strings that are not UTF-8 in the raw profile: a thread name with a surrogate
(ed a0 80), an overlong form (c0 af), a code point past U+10FFFF (f4 90 80 80) and a
lead byte F5..FF, and a library loaded from a directory with a Latin-1 name (caf\\xe9).
The file stays strict JSON (Python's parser and kestrel's), each such string is written
reversibly with its "<key>_bytes" flag and decodes back to the exact bytes, and kestrel
report opens the library at its path and names its function (names_burn). Before,
they were written as is (the CLI refused the file) or replaced by U+FFFD (the library
could not be found for symbols). The heap profile of the same run: every string of its
pprof string table is UTF-8 (the thread name and the library's path are written as
bytes, U+0080..U+00FF standing for 0x80..0xff, and named in a comment), go tool pprof
reads it, and kestrel report opens the library at its path and names its function
(names_alloc); before, kestrel refused the file ("string 9 is not valid UTF-8 text")."""
import gzip
import json
import os
import shutil
import subprocess

from rtlib import Checker, ROOT, load, prog, profiled_env, tmpdir, run

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
heap = os.path.join(d, "h.pb.gz")
env = profiled_env(out, extra={"KESTREL_HEAP": heap, "KESTREL_HEAP_INTERVAL": "65536"})
r = subprocess.run([exe, lib, name.hex()], env=env, capture_output=True, timeout=120)
c.check(r.returncode == 0, "status %d: %s" % (r.returncode, r.stderr))


def raw_bytes(s):
    return bytes(ord(ch) for ch in s)  # U+0080..U+00FF stand for bytes


with open(out, "rb") as f:
    text = f.read()
try:
    text.decode("utf-8")  # strict: invalid UTF-8 raises
    doc = load(out)  # a streamed file's chunks joined (tests/rawjson.py)
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


def varint(b, i):
    v = s = 0
    while True:
        v |= (b[i] & 0x7f) << s
        s += 7
        i += 1
        if b[i - 1] < 0x80:
            return v, i


def strings(pb):
    """The string table of a Profile message (field 6)."""
    out, i = [], 0
    while i < len(pb):
        key, i = varint(pb, i)
        wire = key & 7
        if wire == 0:
            _, i = varint(pb, i)
        elif wire == 2:
            n, i = varint(pb, i)
            if key >> 3 == 6:
                out.append(pb[i:i + n])
            i += n
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ValueError("wire type %d" % wire)
    return out


if c.check(os.path.exists(heap), "heap: a profile"):
    table = strings(gzip.open(heap).read())
    bad = []
    for t in table:
        try:
            t.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(t)
    c.check(not bad, "heap: strings that are not UTF-8: %r" % bad)
    as_text = [t.decode("utf-8", "replace") for t in table]
    c.check(any(raw_bytes(t) == name[:15] for t in as_text if all(ord(x) < 256 for x in t)),
            "heap: the thread name as bytes: %r" % as_text)
    c.check(any(t.startswith("kestrel: strings written as bytes:") for t in as_text),
            "heap: the comment naming them: %r" % as_text)
    g = subprocess.run(["go", "tool", "pprof", "-raw", heap], capture_output=True, timeout=120)
    c.check(g.returncode == 0 and b"Mappings" in g.stdout, "heap: go tool pprof reads it: %s"
            % g.stderr.decode(errors="replace")[-400:])
    rep = subprocess.run([K, "report", "--sample-type", "inuse_space", heap], capture_output=True,
                         timeout=120)
    c.check(rep.returncode == 0, "heap: kestrel report: %s" % rep.stderr.decode(errors="replace"))
    c.check(b"names_alloc" in rep.stdout, "heap: kestrel report names the library's function: %s"
            % rep.stdout.decode(errors="replace")[-1500:])
    c.check(b"strings written as bytes" not in rep.stdout, "heap: the comment is not a note")
shutil.rmtree(d, ignore_errors=True)
c.exit()

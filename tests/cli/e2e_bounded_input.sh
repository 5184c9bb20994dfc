#!/usr/bin/env bash
# Bounded input, bounded memory: hostile files of a few hundred KB to a few MB that
# unpack or expand to gigabytes (400 M empty strings in a .pb.gz, a gzip bomb, 4 M
# empty mappings, 4 M empty image objects in a raw profile). Each must end in one
# line `kestrel: <file>: <why>` naming the limit, a status of 1, no output file, and
# a peak resident memory of a few hundred MiB (read from the child's own rusage), not
# the gigabytes it took before.
set -u
cd "$(dirname "$0")/../.."
t=$(mktemp -d /tmp/kestrel-e2e-bounded-XXXXXX)
trap 'rm -rf "$t"' EXIT

python3 - "$t" <<'PY'
import os, struct, sys, zlib
d = sys.argv[1]
def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        out += bytes([b | (0x80 if v else 0)])
        if not v:
            return out
def field(n, v):
    if isinstance(v, bytes):
        return varint(n << 3 | 2) + varint(len(v)) + v
    return varint(n << 3) + varint(v)
def gzip_repeated(path, chunk, times):
    # One chunk compressed after a full flush decodes on its own, so the stream is
    # that block repeated: a valid gzip file (CRC and size included) made in a second.
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    end = c.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(times):
        crc = zlib.crc32(chunk, crc)
    with open(path, "wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03")
        for _ in range(times):
            f.write(block)
        f.write(end + struct.pack("<II", crc, (len(chunk) * times) & 0xFFFFFFFF))
mib = 1 << 20
# 400 M empty strings: string-table fields of two bytes each, 800 MB unpacked.
gzip_repeated(d + "/strings.pb.gz", b"\x32\x00" * (mib // 2), 800)
# A gzip bomb: 2 GiB of zeros.
gzip_repeated(d + "/bomb.pb.gz", bytes(mib), 2048)
# Not compressed: a sample type and its strings, then 4 M empty mappings.
head = field(1, field(1, 1) + field(2, 2)) + field(6, b"") + field(6, b"samples") + field(6, b"count")
open(d + "/mappings.pb", "wb").write(head + b"\x1a\x00" * (4 * mib))
# A raw profile with 4 M empty image objects.
open(d + "/images.raw.json", "w").write(
    '{"version":1,"threads":[{"label":"main"}],"stacks":[[1]],"samples":[[0,0,0,0]],"images":['
    + ",".join(["{}"] * (4 * mib)) + "]}")
PY

python3 - "$t" <<'PY'
import os, re, subprocess, sys
d = sys.argv[1]
cases = {
    "strings.pb.gz": r"decompresses to more than \d+ MiB \(kestrel's limit for \d+ bytes of gzip: 64 times as much \+ 64 MiB, at most 1 GiB\)",
    "bomb.pb.gz": r"decompresses to more than \d+ MiB \(kestrel's limit for \d+ bytes of gzip: 64 times as much \+ 64 MiB, at most 1 GiB\)",
    "mappings.pb": r"would take more than 192 MiB of memory to read \(kestrel's limit for \d+ bytes of profile: 64 MiB \+ 16 bytes a byte, at most 4 GiB\)",
    "images.raw.json": r"would take more than 256 MiB of memory to read \(kestrel's limit for \d+ bytes of profile: 64 MiB \+ 16 bytes a byte, at most 4 GiB\)",
}
MAX_RSS_MIB = 400  # each case peaked at 2-11 GiB before the limits
fails = 0
def check(ok, what):
    global fails
    if not ok:
        print("FAIL:", what)
        fails += 1
for k in ["build/bin/kestrel", "build/bin/kestrel-san"]:
    for name, why in cases.items():
        path = os.path.join(d, name)
        for cmd in (["report", path], ["export", "--format", "folded", "-o", path + ".out", path]):
            p = subprocess.Popen([k] + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = p.communicate()
            err = err.decode()
            what = f"{k} {cmd[0]} {name}"
            check(p.returncode == 1, f"{what}: exit status {p.returncode}, not 1")
            check(re.fullmatch(f"kestrel: {re.escape(path)}: {why}\n", err) is not None,
                  f"{what}: the message names the limit, in one line: {err!r}")
            check(not out, f"{what}: nothing on stdout")
            check(not os.path.exists(path + ".out"), f"{what}: no output file")
            check(not [f for f in os.listdir(d) if f.startswith(".")], f"{what}: no temporary file")
    # Peak memory, of the build without sanitizers (ASan's shadow memory is not the
    # reader's): each child's own maximum resident set.
    if k == "build/bin/kestrel":
        for name in cases:
            p = subprocess.Popen([k, "report", os.path.join(d, name)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            _, status, ru = os.wait4(p.pid, 0)
            rss = ru.ru_maxrss / 1024
            print(f"{name}: peak RSS {rss:.0f} MiB")
            check(rss < MAX_RSS_MIB, f"{name}: peak RSS {rss:.0f} MiB, over {MAX_RSS_MIB} MiB")
# Special files: a FIFO with no writer and /dev/zero end in an error at once (the
# FIFO blocked the reader for ever, /dev/zero took 2.1 GB before it was refused);
# a profile through a pipe or "-" still reads.
import time
fifo = os.path.join(d, "fifo")
os.mkfifo(fifo)
small = os.path.join(d, "small.raw.json")
open(small, "w").write('{"version":1,"threads":[{"label":"main"}],"stacks":[[1]],'
                       '"samples":[[0,0,0,0]]}')
for k in ["build/bin/kestrel", "build/bin/kestrel-san"]:
    for path, why in ((fifo, r"nothing to read \(a pipe or FIFO with no writer, or empty\)"),
                      ("/dev/zero", r"is not a regular file or a pipe \(.*\)")):
        t0 = time.monotonic()
        try:
            p = subprocess.run([k, "report", path], capture_output=True, timeout=10)
            rc, err = p.returncode, p.stderr.decode()
        except subprocess.TimeoutExpired:
            rc, err = None, "(still running after 10 s)"
        took = time.monotonic() - t0
        what = f"{k} report {path}"
        check(rc == 1, f"{what}: exit status {rc}, not 1")
        check(re.fullmatch(f"kestrel: {re.escape(path)}: {why}\n", err) is not None,
              f"{what}: one line saying why: {err!r}")
        check(took < 3, f"{what}: took {took:.1f} s, not at once")
    p = subprocess.run([k, "report", "-"], input=open(small, "rb").read(), capture_output=True)
    check(p.returncode == 0 and b"1 sample" in p.stdout, f"{k} report - of a pipe: {p.stderr!r}")
    p = subprocess.run(["bash", "-c", f'"{k}" report <(cat "{small}")'], capture_output=True)
    check(p.returncode == 0 and b"1 sample" in p.stdout,
          f"{k} report <(cat FILE): {p.stderr!r}")
p = subprocess.Popen(["build/bin/kestrel", "report", "/dev/zero"], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
check(ru.ru_maxrss / 1024 < 64, f"/dev/zero: peak RSS {ru.ru_maxrss / 1024:.0f} MiB")
print("all passed" if not fails else f"{fails} failed")
sys.exit(1 if fails else 0)
PY

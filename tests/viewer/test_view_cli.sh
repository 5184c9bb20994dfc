#!/usr/bin/env bash
# kestrel view from the command line: where it writes, and bad input (a clear
# `kestrel: ...` message, a non-zero status, no output file).
set -u
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
check() { local what=$1; shift; if "$@"; then :; else echo "FAIL: $what"; fails=$((fails + 1)); fi; }

for k in build/bin/kestrel build/bin/kestrel-san; do
  "$k" view "$t/none.raw.json" >"$t/out" 2>"$t/err"; rc=$?
  check "$k: missing input exits non-zero" test $rc -ne 0
  check "$k: missing input says so" grep -q "^kestrel: $t/none.raw.json: " "$t/err"
  check "$k: no output for a missing input" test ! -e "$t/none.html"
  printf '{"version":1,"samples":[[0,0,7,0]],"stacks":[],"threads":[],"images":[]' >"$t/bad.raw.json"
  "$k" view -o "$t/bad.html" "$t/bad.raw.json" 2>"$t/err"; rc=$?
  check "$k: truncated input exits non-zero" test $rc -ne 0
  check "$k: truncated input says kestrel: ..." grep -q "^kestrel: $t/bad.raw.json: " "$t/err"
  check "$k: no partial output" bash -c '! ls "$1" "$1".* >/dev/null 2>&1' _ "$t/bad.html"
  "$k" view >/dev/null 2>"$t/err"; rc=$?
  check "$k: no INPUT is a usage error" test $rc -eq 2
  "$k" view --help | grep -q "^usage: kestrel view"
  check "$k: --help" test $? -eq 0
done

# A minimal seed-format profile: the default name, then -o.
cat >"$t/min.raw.json" <<'JSON'
{"version":1, "pid":1, "exe":"/nonexistent/prog", "rate_hz":997, "platform":"linux-x86_64",
 "start_unix_ns":0, "end_unix_ns":1000000,
 "images":[{"path":"/nonexistent/prog","base":4194304,"slide":0,"text":4194304,"text_size":4096,"arch":"x86_64"}],
 "threads":[{"fiber":0,"label":"main"}],
 "stacks":[[4194400,4194500]],
 "samples":[[1000,0,0,0],[2000,0,0,1]],
 "dropped":0}
JSON
build/bin/kestrel view "$t/min.raw.json" 2>"$t/err"; rc=$?
check "minimal profile: exit 0 ($(cat "$t/err"))" test $rc -eq 0
check "minimal profile: written as min.html" test -s "$t/min.html"
check "minimal profile: the page has the data" grep -q '"stacks":\[' "$t/min.html"
check "minimal profile: no placeholder left" bash -c '! grep -q "@KESTREL_DATA@" "$1"' _ "$t/min.html"
build/bin/kestrel view -o - "$t/min.raw.json" >"$t/stdout.html" 2>/dev/null
check "-o - writes the page to stdout" cmp -s "$t/min.html" "$t/stdout.html"
# Sources: a file is embedded only when the debug info of one of the profile's own
# images names it. A crafted pprof whose functions name /etc/passwd and /etc/shadow
# (with no mapping, and with a mapping of a real program at a real address) must not
# carry either file; a recorded program's page, and the page of its pprof export,
# carry its source.
busy=build/tests/viewer/busy
busy_id=$(readelf -n "$busy" | awk '/Build ID/ {print $3}')
busy_text=$(readelf -lW "$busy" | awk '$1 == "LOAD" && / R E / {print $2, $3; exit}')
python3 - "$t" "$(realpath "$busy")" "$busy_id" $busy_text <<'PY'
import gzip, sys
d, busy, build_id, text_off, text_vaddr = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4], 16), int(sys.argv[5], 16)
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
def pprof(mapped):
    strings = ["", "samples", "count", "read_passwd", "read_shadow", "/etc/passwd", "/etc/shadow",
               busy, build_id]
    sid = {s: i for i, s in enumerate(strings)}
    base = 0x555555554000
    m = b""
    if mapped:
        m = field(3, field(1, 1) + field(2, base + text_vaddr) + field(3, base + text_vaddr + 0x1000) +
                  field(4, text_off) + field(5, sid[busy]) + field(6, sid[build_id]))
    locs = b""
    for i, (fn, line) in enumerate([(1, 10), (2, 20)]):
        locs += field(4, field(1, i + 1) + (field(2, 1) if mapped else b"") +
                      field(3, base + text_vaddr + 0x10 * (i + 1)) + field(4, field(1, fn) + field(2, line)))
    fns = field(5, field(1, 1) + field(2, sid["read_passwd"]) + field(4, sid["/etc/passwd"]))
    fns += field(5, field(1, 2) + field(2, sid["read_shadow"]) + field(4, sid["/etc/shadow"]))
    samples = field(2, field(1, varint(1)) + field(2, varint(5)))
    samples += field(2, field(1, varint(2) + varint(1)) + field(2, varint(3)))
    st = field(1, field(1, sid["samples"]) + field(2, sid["count"]))
    tab = b"".join(field(6, s.encode()) for s in strings)
    return gzip.compress(st + samples + m + locs + fns + tab)
open(d + "/etc.pb.gz", "wb").write(pprof(False))
open(d + "/etc_mapped.pb.gz", "wb").write(pprof(True))
PY
passwd_line=$(head -1 /etc/passwd)
shadow_line=$(head -1 /etc/shadow | cut -d: -f1-2)
for k in build/bin/kestrel build/bin/kestrel-san; do
  for f in etc etc_mapped; do
    "$k" view -o "$t/$f.html" "$t/$f.pb.gz" 2>"$t/err"; rc=$?
    check "$k: $f: the crafted pprof is viewed ($(cat "$t/err"))" test $rc -eq 0
    check "$k: $f: /etc/passwd is not in the page" bash -c 'test -s "$2" && ! grep -qF -- "$1" "$2"' _ "$passwd_line" "$t/$f.html"
    check "$k: $f: /etc/shadow is not in the page" bash -c 'test -s "$2" && ! grep -qF -- "$1" "$2"' _ "$shadow_line" "$t/$f.html"
    check "$k: $f: the page says why /etc/passwd is not shown" \
      grep -qF '{"file":"/etc/passwd","missing":"not opened: /etc/passwd is named by the profile, not by the debug info' "$t/$f.html"
    check "$k: $f: the page says why /etc/shadow is not shown" \
      grep -qF '{"file":"/etc/shadow","missing":"not opened: /etc/shadow is named by the profile' "$t/$f.html"
  done
done
src_line='/* The program the viewer'"'"'s browser tests profile with `kestrel record --heap`: a main'
build/bin/kestrel record -o "$t/busy" -- "$busy" >/dev/null 2>"$t/err"; rc=$?
check "busy: recorded ($(tail -1 "$t/err"))" test $rc -eq 0
build/bin/kestrel view -o "$t/busy-pprof.html" "$t/busy.pb.gz" 2>"$t/err"; rc=$?
check "busy: its pprof export is viewed" test $rc -eq 0
for f in busy busy-pprof; do
  check "$f: the page carries busy.c, which the program's debug info names" \
    grep -qF "{\"file\":\"$(realpath tests/viewer/busy.c)\",\"text\":\"/* The program the viewer's browser tests" "$t/$f.html"
done
[ $fails -eq 0 ] && echo "all passed"
exit $((fails > 0))

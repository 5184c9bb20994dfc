#!/usr/bin/env bash
# Bad input through the CLI, with kestrel and kestrel-san: truncated files, indices out
# of range, huge counts, deep stacks, invalid UTF-8, not a profile at all. Each must
# give `kestrel: <input>: <why>` on stderr, a non-zero status, no crash (the sanitizers
# abort on one) and no output file, not even a temporary one.
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-bad-XXXXXX)
trap 'rm -rf "$t"' EXIT
mkdir "$t/in" "$t/out"

python3 - "$t/in" <<'PY'
import gzip, json, os, sys
d = sys.argv[1]
def raw(**over):
    doc = {"version": 1, "pid": 1, "exe": "/x", "rate_hz": 997, "start_unix_ns": 0,
           "end_unix_ns": 1, "images": [], "threads": [{"fiber": 0, "label": "main"}],
           "stacks": [[4096, 8192]], "samples": [[0, 0, 0, 0]], "dropped": 0}
    doc.update(over)
    return json.dumps(doc).encode()
good = raw()
files = {
    "truncated.json": good[: len(good) // 2],
    "thread_out_of_range.json": raw(samples=[[0, 3, 0, 0]]),
    "stack_out_of_range.json": raw(samples=[[0, 0, 9, 0]]),
    "negative_index.json": raw(samples=[[0, 0, -1, 0]]),
    "huge_count.json": raw(samples=[[0, 0, 0, 0, 2**64]]),
    "huge_cpu_sum.json": raw(samples=[[0, 0, 0, 0, 2**63 - 1]] * 2),
    "deep_stack.json": raw(stacks=[list(range(1, 5000))]),
    "bad_version.json": raw(version=7),
    "not_profile.json": b'{"hello": "world"}',
    "empty.json": b"",
    "garbage.pb.gz": b"\x1f\x8b\x08\x00garbage-after-a-gzip-header",
    "garbage.bin": os.urandom(64) + b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
}
# invalid UTF-8 in a thread label
files["bad_utf8.json"] = good.replace(b'"main"', b'"ma\xffin"')
for name, data in files.items():
    open(os.path.join(d, name), "wb").write(data)
PY

for k in build/bin/kestrel build/bin/kestrel-san; do
  for f in "$t"/in/*; do
    name=$(basename "$f")
    for fmt in folded pprof summary; do
      "$k" export --format "$fmt" -o "$t/out/o.$fmt" "$f" >/dev/null 2>"$t/err"; rc=$?
      if [ $rc -eq 0 ] || [ $rc -ge 128 ]; then echo "FAIL: $k $name $fmt: status $rc"; fail=1; fi
      if ! grep -q "^kestrel: $f: ." "$t/err"; then
        echo "FAIL: $k $name $fmt: message was: $(head -c 300 "$t/err")"; fail=1
      fi
      if grep -q "AddressSanitizer\|runtime error" "$t/err"; then echo "FAIL: $k $name: sanitizer"; fail=1; fi
      if [ -n "$(ls -A "$t/out")" ]; then echo "FAIL: $k $name $fmt: left $(ls -A "$t/out")"; fail=1; fi
    done
    "$k" report "$f" >"$t/stdout" 2>"$t/err"; rc=$?
    if [ $rc -ne 1 ]; then echo "FAIL: $k report $name: status $rc"; fail=1; fi
    if [ -s "$t/stdout" ]; then echo "FAIL: $k report $name printed a report"; fail=1; fi
  done
  # A missing input and a directory.
  "$k" report "$t/nonexistent" 2>"$t/err"
  grep -q "kestrel: $t/nonexistent: No such file or directory" "$t/err" || { echo "FAIL: missing"; fail=1; }
  # (A directory is read as the STEM.raw folder of a process tree: this one holds none.)
  "$k" report "$t/in" 2>"$t/err"; rc=$?
  grep -q "kestrel: $t/in: is a directory with no raw profile in it" "$t/err" || { echo "FAIL: directory"; fail=1; }
  [ $rc -eq 1 ] || { echo "FAIL: directory: status $rc"; fail=1; }
  # An existing output survives a failed export intact.
  echo previous >"$t/keep"
  "$k" export --format folded -o "$t/keep" "$t/in/truncated.json" 2>/dev/null
  [ "$(cat "$t/keep")" = previous ] || { echo "FAIL: $k overwrote an output on failure"; fail=1; }
  rm -f "$t/keep"
done
# The messages say what is wrong.
k=build/bin/kestrel
msg() { "$k" report "$t/in/$1" 2>&1 >/dev/null; }
grep -q "thread 3 out of range" <<<"$(msg thread_out_of_range.json)" || { echo "FAIL: thread msg"; fail=1; }
grep -q "stack 9 out of range" <<<"$(msg stack_out_of_range.json)" || { echo "FAIL: stack msg"; fail=1; }
grep -q "frames deep" <<<"$(msg deep_stack.json)" || { echo "FAIL: deep msg"; fail=1; }
grep -q "64 bits" <<<"$(msg huge_cpu_sum.json)" || { echo "FAIL: huge sum msg: $(msg huge_cpu_sum.json)"; fail=1; }
grep -q "version" <<<"$(msg bad_version.json)" || { echo "FAIL: version msg"; fail=1; }
grep -q "empty file" <<<"$(msg empty.json)" || { echo "FAIL: empty msg"; fail=1; }
grep -q "gzip" <<<"$(msg garbage.pb.gz)" || { echo "FAIL: gzip msg"; fail=1; }
exit $fail

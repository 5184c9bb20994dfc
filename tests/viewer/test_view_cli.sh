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
[ $fails -eq 0 ] && echo "all passed"
exit $((fails > 0))

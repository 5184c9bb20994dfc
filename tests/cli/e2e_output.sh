#!/usr/bin/env bash
# Where kestrel writes, as a user sees it, with kestrel and kestrel-san: a regular
# file is replaced whole (a symlink to one keeps the symlink); a character device or a
# FIFO is written in place and stays what it was; a directory or a block device is
# refused; every failure (a full device, a full filesystem, a directory that does not
# exist) is one line `kestrel: <path>: <why>` with the system's own reason, a non-zero
# status, and no file left behind. And `record` of a static program says why it left
# no profile.
set -u
cd "$(dirname "$0")/../.."
fails=0
check() { local what=$1; shift; if "$@"; then :; else echo "FAIL: $what"; fails=$((fails + 1)); fi; }
t=$(mktemp -d /tmp/kestrel-e2e-output-XXXXXX)
cleanup() { mountpoint -q "$t/small" 2>/dev/null && umount "$t/small"; rm -rf "$t"; }
trap cleanup EXIT

cat >"$t/p.raw.json" <<'JSON'
{"version":1, "pid":1, "exe":"/nonexistent/prog", "rate_hz":997, "start_unix_ns":0,
 "end_unix_ns":1000000, "images":[], "threads":[{"fiber":0,"label":"main"}],
 "stacks":[[4194400,4194500]], "samples":[[1000,0,0,0],[2000,0,0,0]], "dropped":0}
JSON
one_line() { test "$(wc -l <"$1")" -eq 1; }
no_temp() { ! ls -A "$1" | grep -q '^\.'; } # temporary files are .NAME.XXXXXX
node() { stat -c '%F %t,%T' "$1"; }

for k in build/bin/kestrel build/bin/kestrel-san; do
  d="$t/$(basename "$k")"
  mkdir "$d"
  "$k" export --format folded -o "$d/expected.folded" "$t/p.raw.json"
  check "$k: export to a regular file" test -s "$d/expected.folded"
  # Our own device nodes (what /dev/full and /dev/null are), so a failure cannot
  # replace the machine's.
  mknod "$d/full" c 1 7 && mknod "$d/null" c 1 3 && mknod "$d/blk" b 7 200 && mkfifo "$d/fifo"
  ln -s "$d/null" "$d/to-null"
  echo old >"$d/reg" && ln -s "$d/reg" "$d/to-reg"

  for cmd in "export --format folded" "view"; do
    "$k" $cmd -o "$d/full" "$t/p.raw.json" >/dev/null 2>"$d/err"; rc=$?
    check "$k $cmd: a full device fails" test $rc -ne 0
    check "$k $cmd: a full device says so in one line ($(cat "$d/err"))" \
      bash -c 'one_line() { test "$(wc -l <"$1")" -eq 1; }; one_line "$1" && grep -qx "kestrel: $2: No space left on device" "$1"' _ "$d/err" "$d/full"
    check "$k $cmd: the full device is still the device" test "$(node "$d/full")" = "character special file 1,7"
  done
  "$k" export --format folded -o "$d/null" "$t/p.raw.json" 2>"$d/err"; rc=$?
  check "$k: writing to a null device succeeds ($(cat "$d/err"))" test $rc -eq 0
  check "$k: the null device is not replaced" test "$(node "$d/null")" = "character special file 1,3"
  "$k" export --format folded -o "$d/to-null" "$t/p.raw.json" 2>"$d/err"; rc=$?
  check "$k: through a symlink to a device: exit 0" test $rc -eq 0
  check "$k: the symlink to the device stays a symlink" test -L "$d/to-null"
  check "$k: the device behind it stays the device" test "$(node "$d/null")" = "character special file 1,3"
  timeout 20 cat "$d/fifo" >"$d/from-fifo" &
  reader=$!
  "$k" export --format folded -o "$d/fifo" "$t/p.raw.json" 2>"$d/err"; rc=$?
  wait $reader
  check "$k: a FIFO is written: exit 0" test $rc -eq 0
  check "$k: the FIFO's reader gets the whole output" cmp -s "$d/from-fifo" "$d/expected.folded"
  check "$k: the FIFO stays a FIFO" test -p "$d/fifo"
  "$k" export --format folded -o "$d/to-reg" "$t/p.raw.json" 2>"$d/err"; rc=$?
  check "$k: through a symlink to a file: exit 0" test $rc -eq 0
  check "$k: the symlink to a file stays a symlink" test -L "$d/to-reg"
  check "$k: the file behind it holds the output" cmp -s "$d/reg" "$d/expected.folded"
  "$k" export --format folded -o "$d/blk" "$t/p.raw.json" 2>"$d/err"; rc=$?
  check "$k: a block device is refused" test $rc -ne 0
  check "$k: ... in one line that says why ($(cat "$d/err"))" \
    bash -c 'test "$(wc -l <"$1")" -eq 1 && grep -q "^kestrel: $2: is a block device" "$1"' _ "$d/err" "$d/blk"
  check "$k: the block device stays the node it was" test "$(node "$d/blk")" = "block special file 7,c8"
  "$k" export --format folded -o "$d" "$t/p.raw.json" 2>"$d/err"; rc=$?
  check "$k: a directory is refused ($(cat "$d/err"))" \
    bash -c 'test $1 -ne 0 && grep -qx "kestrel: $3: Is a directory" "$2"' _ $rc "$d/err" "$d"
  "$k" export --format folded -o "$d/none/out.folded" "$t/p.raw.json" 2>"$d/err"; rc=$?
  check "$k: a missing directory fails" test $rc -ne 0
  check "$k: ... and says which ($(cat "$d/err"))" \
    grep -qx "kestrel: $d/none/out.folded: directory $d/none does not exist" "$d/err"
  check "$k: ... in one line" one_line "$d/err"
  "$k" export --format folded "$t/p.raw.json" >/dev/full 2>"$d/err"; rc=$?
  check "$k: stdout on a full device fails in one line ($(cat "$d/err"))" \
    bash -c 'test $1 -ne 0 && test "$(wc -l <"$2")" -eq 1 && grep -qx "kestrel: stdout: No space left on device" "$2"' _ $rc "$d/err"
  check "$k: no temporary file left" no_temp "$d"
done

# A full filesystem: a small tmpfs (skipped where mounting is not allowed). The old
# file stays whole and no temporary file is left.
mkdir "$t/small"
if mount -t tmpfs -o size=12k tmpfs "$t/small" 2>/dev/null; then
  for k in build/bin/kestrel build/bin/kestrel-san; do
    echo "the old profile" >"$t/small/p.html"
    "$k" view -o "$t/small/p.html" "$t/p.raw.json" 2>"$t/err"; rc=$?
    check "$k: a full filesystem fails" test $rc -ne 0
    check "$k: ... saying no space left, in one line ($(cat "$t/err"))" \
      bash -c 'test "$(wc -l <"$1")" -eq 1 && grep -qx "kestrel: $2: No space left on device" "$1"' _ "$t/err" "$t/small/p.html"
    check "$k: ... the old file untouched" test "$(cat "$t/small/p.html")" = "the old profile"
    check "$k: ... no temporary file left" no_temp "$t/small"
  done
  umount "$t/small"
else
  echo "note: cannot mount a tmpfs here; the full-filesystem case is not run"
fi

# record: an output directory that does not exist is said before the program runs.
build/bin/kestrel record -o "$t/none/p" -- sh -c "touch $t/ran" >/dev/null 2>"$t/err"; rc=$?
check "record: a missing output directory fails" test $rc -ne 0
check "record: ... saying which, in one line ($(cat "$t/err"))" \
  bash -c 'test "$(wc -l <"$1")" -eq 1 && grep -qx "kestrel: $2/none/p: directory $2/none/ does not exist" "$1"' _ "$t/err" "$t"
check "record: ... before running the program" test ! -e "$t/ran"

# record of a static program: preloading cannot reach it, and kestrel says so.
printf 'int main(void) { volatile long x = 0; for (long i = 0; i < 1000000; i++) x += i; return 3; }\n' >"$t/static.c"
if cc -static -O1 -o "$t/static" "$t/static.c" 2>/dev/null; then
  check "the test's static program has no PT_INTERP" bash -c '! readelf -lW "$1" | grep -q INTERP' _ "$t/static"
  build/bin/kestrel record -o "$t/st" -- "$t/static" >/dev/null 2>"$t/err"; rc=$?
  check "record static: the program's status passes through" test $rc -eq 3
  check "record static: says the program is static and what to do ($(cat "$t/err"))" \
    grep -q "^kestrel: $t/st\.raw/[0-9]*\.raw\.json: the program left no profile: $t/static is statically linked, and preloading cannot reach a static program; .kestrel record --attach -- PROGRAM. (or -p PID) samples it from outside$" "$t/err"
  check "record static: one line" one_line "$t/err"
  cc -O1 -o "$t/dynamic" "$t/static.c"
  build/bin/kestrel record -o "$t/dy" -- "$t/dynamic" >/dev/null 2>"$t/err"; rc=$?
  check "record dynamic: the same program linked dynamically is profiled" \
    bash -c 'test $1 -eq 3 && ! grep -q "statically linked" "$2" && ls "$3"/dy.raw/*.raw.json >/dev/null' _ $rc "$t/err" "$t"
else
  echo "note: no static libc here; the static-program case is not run"
fi

[ $fails -eq 0 ] && echo "all passed"
exit $((fails > 0))

#!/usr/bin/env bash
# Programs that end hard (docs/raw-format.md, "Streamed"): the runtime writes its
# profile as the program runs, a chunk about once a second, so a process killed with
# SIGKILL, or ended by a raw exit_group (every Go program: os.Exit), leaves all but its
# last chunk, and `kestrel record` reports it and exits with the program's status. Also:
# syscall(SYS_exit_group) through libc writes the whole profile; a file cut inside a
# chunk is read to its last whole chunk, the cut said; a setuid program run by another
# user (AT_SECURE: the loader ignores LD_PRELOAD) gives its status and one line.
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-hard-end-XXXXXX)
chmod 755 "$t"
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL: $what"; fail=1; fi
}
k=$PWD/build/bin/kestrel
cc -O1 -g -fno-omit-frame-pointer -o "$t/spin" tests/cli/hard_end/spin.c || exit 1

# raw FILE: chunks, whether closed, bytes cut, samples, the last sample's time (s).
raw_facts() {
  python3 - "$1" <<'PY'
import sys
sys.path.insert(0, "tests")
import rawjson
objs, cut = rawjson.chunks(sys.argv[1])
d = rawjson.join(objs)
last = max((s[0] for s in d["samples"]), default=0) / 1e9
print(len(objs), int(bool(objs and objs[-1].get("closing"))), cut, len(d["samples"]), "%.2f" % last)
PY
}

# ---- SIGKILL after 3 s: the chunks of the first two seconds or more ----
"$k" record -o "$t/kill" --report="$t/kill.report" -- "$t/spin" 30 "$t/kill.pid" wait \
  >/dev/null 2>"$t/kill.err" &
kpid=$!
for _ in $(seq 50); do [ -s "$t/kill.pid" ] && break; sleep 0.1; done
sleep 3
kill -KILL "$(cat "$t/kill.pid")"
wait $kpid; rc=$?
check "SIGKILL: kestrel exits as the program did (137, got $rc)" test $rc -eq 137
f=$(ls "$t"/kill.raw/*.raw.json 2>/dev/null | head -1)
check "SIGKILL: a raw profile is left ($(cat "$t/kill.err" | head -c 300))" test -n "$f"
read -r n closed cut samples last <<<"$(raw_facts "$f")"
check "SIGKILL: 2 or 3 chunks, none closing ($n, closing $closed)" \
  bash -c '[ "$1" -ge 2 ] && [ "$1" -le 3 ] && [ "$2" -eq 0 ]' _ "$n" "$closed"
check "SIGKILL: its samples reach past 1.9 s of the 3 s (last at $last s, $samples samples)" \
  python3 -c "import sys; sys.exit(not (1.9 <= $last <= 3.2 and $samples >= 100))"
check "SIGKILL: the report says what was lost" \
  grep -q "ended without writing the end of its profile (killed, or ended by a raw exit_group): its first $n chunks are read" "$t/kill.report"
check "SIGKILL: the report names spin_hard" grep -q "spin_hard" "$t/kill.report"

# ---- a file cut inside a chunk: read to its last whole chunk, the cut said ----
head -c $(( $(stat -c %s "$f") - 100 )) "$f" >"$t/cut.raw.json"
"$k" report "$t/cut.raw.json" >"$t/cut.report" 2>&1; rc=$?
check "cut file: read (exit $rc)" test $rc -eq 0
check "cut file: the report says how many bytes were not read" \
  grep -q "its first $((n - 1)) chunks are read, .*; the last [0-9]* bytes, a chunk cut short as it was written, are not" "$t/cut.report"
head -c 300 "$f" >"$t/cut0.raw.json"
"$k" report "$t/cut0.raw.json" >"$t/cut0.out" 2>&1; rc=$?
check "cut inside the first chunk: an error in one line (exit $rc)" \
  bash -c '[ "$1" -ne 0 ] && [ "$(wc -l <"$2")" -eq 1 ] && grep -q "cut inside its first chunk" "$2"' _ $rc "$t/cut0.out"

# ---- a raw exit_group (the instruction): chunks, and status 5 ----
"$k" record -o "$t/raw" --report="$t/raw.report" -- "$t/spin" 2.5 "$t/raw.pid" raw >/dev/null 2>"$t/raw.err"; rc=$?
check "raw exit_group: kestrel exits 5 ($rc)" test $rc -eq 5
f=$(ls "$t"/raw.raw/*.raw.json 2>/dev/null | head -1)
read -r n closed cut samples last <<<"$(raw_facts "${f:-/dev/null}")"
check "raw exit_group: 2 chunks, none closing ($n, $closed)" bash -c '[ "$1" -eq 2 ] && [ "$2" -eq 0 ]' _ "$n" "$closed"
check "raw exit_group: samples to 1.9 s or more (last at $last s)" python3 -c "import sys; sys.exit(not $last >= 1.9)"

# ---- syscall(SYS_exit_group) through libc: the whole profile, status 7 ----
"$k" record -o "$t/eg" --report="$t/eg.report" -- "$t/spin" 2.5 "$t/eg.pid" exit_group >/dev/null 2>"$t/eg.err"; rc=$?
check "syscall(SYS_exit_group, 7): kestrel exits 7 ($rc)" test $rc -eq 7
f=$(ls "$t"/eg.raw/*.raw.json 2>/dev/null | head -1)
read -r n closed cut samples last <<<"$(raw_facts "${f:-/dev/null}")"
check "syscall(SYS_exit_group): the closing chunk written ($n chunks, closing $closed)" \
  bash -c '[ "$1" -ge 3 ] && [ "$2" -eq 1 ]' _ "$n" "$closed"
check "syscall(SYS_exit_group): samples to the end (last at $last s)" python3 -c "import sys; sys.exit(not $last >= 2.3)"
check "syscall(SYS_exit_group): no word of a loss" bash -c '! grep -q "ended without" "$1"' _ "$t/eg.report"

# ---- a Go program (cgo, dynamic) ends by os.Exit: a raw exit_group ----
if command -v go >/dev/null; then
  mkdir "$t/go" && cp tests/cli/hard_end/gospin.go "$t/go/"
  (cd "$t/go" && go mod init gospin >/dev/null 2>&1 && CGO_ENABLED=1 go build -o gospin .) >"$t/go.build" 2>&1
  check "the Go program is linked dynamically" bash -c 'readelf -lW "$1" | grep -q INTERP' _ "$t/go/gospin"
  "$k" record -o "$t/g" --report="$t/g.report" -- "$t/go/gospin" 2.5 >/dev/null 2>"$t/g.err"; rc=$?
  check "Go: kestrel exits 0 as the program did ($rc: $(head -c 300 "$t/g.err"))" test $rc -eq 0
  f=$(ls "$t"/g.raw/*.raw.json 2>/dev/null | head -1)
  read -r n closed cut samples last <<<"$(raw_facts "${f:-/dev/null}")"
  check "Go: 2 chunks, none closing ($n, $closed)" bash -c '[ "$1" -eq 2 ] && [ "$2" -eq 0 ]' _ "$n" "$closed"
  check "Go: the report names main.spinGo" grep -q "main.spinGo" "$t/g.report"
  check "Go: no 'left no profile'" bash -c '! grep -q "left no profile" "$1"' _ "$t/g.err"
else
  echo "FAIL: go is not installed (scripts/deps.sh)"; fail=1
fi

# ---- a setuid program run by another user: its status, and one line ----
printf 'int main(void) { return 4; }\n' >"$t/suid.c"
cc -o "$t/suid" "$t/suid.c" && chmod 4755 "$t/suid"
mkdir -m 777 "$t/nb"
(cd "$t/nb" && setpriv --reuid=nobody --regid=nogroup --clear-groups "$k" record -o "$t/nb/s" -- "$t/suid") \
  >/dev/null 2>"$t/suid.err"; rc=$?
check "setuid: kestrel exits 4 as the program did ($rc)" test $rc -eq 4
check "setuid: one line that names the reason ($(cat "$t/suid.err"))" \
  bash -c '[ "$(wc -l <"$1")" -eq 1 ] && grep -q "is set-user-ID or set-group-ID, and the loader ignores preloading there" "$1"' _ "$t/suid.err"
check "setuid: no report or export file ($(ls "$t/nb"))" \
  bash -c '[ -z "$(find "$1" -maxdepth 1 -name "s.*" ! -name s.raw)" ]' _ "$t/nb"

exit $fail

#!/usr/bin/env bash
# kestrel record and run end to end, through build/bin/kestrel and kestrel-san: the
# demo example under the runtime, every export written and parsed, the report naming
# the demo's hot functions at their lines; exit statuses passed through (a code, a
# death by signal); `run` of a C file; --heap; --state; a moved program with
# --binary. Also the ordinary example run with profiling off: same output, no files.
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-record-XXXXXX)
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fail=1; fi
}

# Profiling off: the program alone, then with the runtime preloaded but inactive.
out=$(build/examples/demo 1); check "demo runs" grep -q "demo: done" <<<"$out"
mkdir "$t/off" && (cd "$t/off" && LD_PRELOAD="$OLDPWD/build/lib/libkestrel.so" "$OLDPWD/build/examples/demo" 1) >"$t/off.out"
check "demo with an inactive runtime prints the same" diff <(echo "$out") "$t/off.out"
check "an inactive runtime writes nothing" test -z "$(ls -A "$t/off")"

# Every export parses; the profile.json's totals match the report's sample count.
check_exports() { # STEM
  python3 - "$1" <<'PY' || return 1
import glob, gzip, json, sys
stem = sys.argv[1]
ss = json.load(open(stem + ".speedscope.json"))
assert ss["$schema"].startswith("https://www.speedscope.app/"), "speedscope schema"
assert ss["shared"]["frames"] and ss["profiles"], "speedscope content"
cp = json.load(open(stem + ".cpuprofile"))
assert cp["nodes"] and cp["samples"] and len(cp["samples"]) == len(cp["timeDeltas"])
summ = json.load(open(stem + ".profile.json"))
n = summ["totals"]["samples"]
assert n > 0 and summ["functions"], "summary content"
folded = 0
for line in open(stem + ".folded"):
    stack, count = line.rstrip("\n").rsplit(" ", 1)
    assert stack.split(";")[0].rsplit("-", 1)[1].isdigit(), "thread root " + stack
    folded += int(count)
assert folded == n, "folded counts %d, summary %d" % (folded, n)
raw = gzip.open(stem + ".pb.gz").read()
assert len(raw) > 100, "pprof size"
PY
}

for k in build/bin/kestrel build/bin/kestrel-san; do
  s="$t/$(basename "$k")"
  mkdir -p "$s"
  "$k" record -o "$s/demo" --report="$s/report" -- build/examples/demo 1 >"$s/out" 2>"$s/err"; rc=$?
  check "$k record exits 0 ($rc): $(head -c 300 "$s/err")" test $rc -eq 0
  check "$k program output passed through" grep -q "demo: done" "$s/out"
  check "$k the program's output alone on stdout" diff <(echo "$out") "$s/out"
  for suffix in speedscope.json cpuprofile folded profile.json pb.gz; do
    check "$k wrote $suffix" test -s "$s/demo.$suffix"
  done
  if "$k" export --help | grep -q " html"; then check "$k wrote html" test -s "$s/demo.html"; fi
  check "$k raw profile kept" test -s "$(ls "$s"/demo.raw/*.raw.json | head -1)"
  check "$k exports parse" check_exports "$s/demo"
  check "$k report header" grep -qE "samples · [0-9]+ Hz requested, [0-9.]+ Hz achieved .* 4 threads" "$s/report"
  check "$k report: mix_bytes at demo.c" grep -qE " mix_bytes +demo\.c:[0-9]+" "$s/report"
  check "$k report: waiting time" grep -qE "waiting [0-9.]+% ±" "$s/report"
  check "$k folded: hash_strings calls mix_bytes" grep -q "worker_hash;hash_strings;mix_bytes " "$s/demo.folded"
  # The report again from the raw file and from the symbolized pprof: same hot function.
  raw=$(ls "$s"/demo.raw/*.raw.json | head -1)
  "$k" report "$raw" >"$s/again" 2>&1
  check "$k report of the raw profile" grep -qE " mix_bytes +demo\.c:" "$s/again"
  "$k" report "$s/demo.pb.gz" >"$s/pprof" 2>&1
  check "$k report of our pprof" grep -qE " mix_bytes +demo\.c:" "$s/pprof"
done

k=build/bin/kestrel
# Exit statuses: a code, and deaths by signal the shell sees as such.
"$k" record -o "$t/x" -- sh -c 'exit 3' >/dev/null 2>&1; rc=$?
check "exit code 3 passed through ($rc)" test $rc -eq 3
"$k" record -o "$t/x" -- sh -c 'kill -TERM $$' >/dev/null 2>&1; rc=$?
check "death by SIGTERM passed through ($rc)" test $rc -eq 143
"$k" record -o "$t/x" -- sh -c 'kill -SEGV $$' >/dev/null 2>&1; rc=$?
check "death by SIGSEGV passed through ($rc)" test $rc -eq 139
"$k" record -o "$t/x" -- sh -c 'kill -KILL $$' >/dev/null 2>"$t/err"; rc=$?
check "death by SIGKILL passed through ($rc)" test $rc -eq 137
check "SIGKILL leaves no profile, and kestrel says so" grep -q "left no profile (killed by SIGKILL)" "$t/err"
# A program that crashes leaves the profile of what it did until the crash.
cat >"$t/crash.c" <<'EOF'
volatile unsigned long sink;
volatile int *nowhere;
__attribute__((noinline)) void spin_then_crash(void)
{
    for (unsigned long i = 0; i < 400000000ul; i++)
        sink += i ^ (sink >> 3);
    *nowhere = 1;
}
int main(void) { spin_then_crash(); return 0; }
EOF
(ulimit -c 0; "$k" run -o "$t/crash" --report="$t/crash.out" "$t/crash.c" >/dev/null 2>"$t/err"); rc=$?
check "a crash by SIGSEGV passed through ($rc)" test $rc -eq 139
check "... with the report of its run" grep -qE " spin_then_crash +crash\.c:[0-9]+" "$t/crash.out"
"$k" record -o "$t/missing" -- /nonexistent/program >/dev/null 2>"$t/err"; rc=$?
check "a missing program is 127 ($rc)" test $rc -eq 127
check "... with one line that says why" diff <(echo "kestrel: /nonexistent/program: No such file or directory") "$t/err"
check "... and leaves nothing behind" test -z "$(ls -A "$t" | grep "^missing")"

# Execs that fail: the program goes on and exits 0, profiled to its end (CPU with each
# engine, and the heap): one foreseen to fail (no such file) and one that fails in the
# kernel (an executable file that is no program: ENOEXEC). Before, record said "left no
# profile" of such a program.
cat >"$t/execfail.c" <<'C'
#include <stdlib.h>
#include <unistd.h>
static void *volatile kept[32];
__attribute__((noinline)) unsigned spin(unsigned n) { unsigned x = 1; while (n--) x = x * 1103515245u + 12345u; return x; }
__attribute__((noinline)) unsigned after_exec(void) { /* its own loop: no leaf below it */
  for (int i = 0; i < 32; i++) kept[i] = malloc(1 << 20);
  unsigned x = 1, n = 150000000u;
  while (n--) x = x * 1103515245u + 12345u;
  return x;
}
int main(int argc, char **argv) {
  unsigned x = spin(100000000u);
  execl("/nonexistent/kestrel-no-such-program", "x", (char *)0);
  if (argc > 1) execl(argv[1], argv[1], (char *)0);
  return (x ^ after_exec()) == 42;
}
C
cc -O1 -g -fno-omit-frame-pointer -o "$t/execfail" "$t/execfail.c"
printf '\177ELF not a program\n' >"$t/noexec" && chmod 755 "$t/noexec"
for engine in perf signal; do
  "$k" record --engine "$engine" --heap --heap-interval=65536 -o "$t/ef-$engine" --report=/dev/null -- "$t/execfail" "$t/noexec" >/dev/null 2>"$t/err"; rc=$?
  check "record of failed execs, $engine engine: status 0 ($rc)" test $rc -eq 0
  check "... no word of a missing profile ($(head -c 300 "$t/err"))" bash -c '! grep -q "left no profile" "$1"' _ "$t/err"
  "$k" report "$t/ef-$engine.raw" >"$t/ef-cpu.out" 2>&1
  check "... what ran after the execs is in the CPU profile" grep -qE " after_exec +execfail\.c:[0-9]+" "$t/ef-cpu.out"
  "$k" report --sample-type inuse_space "$t/ef-$engine.heap.pb.gz" >"$t/ef-heap.out" 2>&1
  check "... and in the heap profile ($(head -c 300 "$t/ef-heap.out"))" grep -qE " after_exec +execfail\.c:[0-9]+" "$t/ef-heap.out"
done

"$k" record -o /nonexistent/dir/x -- true >/dev/null 2>"$t/err"; rc=$?
check "an unwritable stem is an error before the run ($rc)" test $rc -eq 1
check "... that names the directory" grep -qx "kestrel: /nonexistent/dir/x: directory /nonexistent/dir/ does not exist" "$t/err"

# kestrel run: compile and record one C file, with the heap profiled too.
cat >"$t/keep.c" <<'C'
#include <stdlib.h>
#include <string.h>
static void *kept[64];
__attribute__((noinline)) void *hold_blocks(int i) { return memset(malloc(1 << 20), i, 1 << 20); }
__attribute__((noinline)) unsigned spin(unsigned n) { unsigned x = 1; while (n--) x = x * 1103515245u + 12345u; return x; }
int main(void) {
  for (int i = 0; i < 64; i++) kept[i] = hold_blocks(i);
  return spin(300000000u) == 42;
}
C
(cd "$t" && "$OLDPWD/$k" run --heap --heap-interval=65536 --report=run.out keep.c >/dev/null 2>"$t/run.err"); rc=$?
check "run exits with the program's status ($rc): $(head -c 300 "$t/run.err")" test $rc -eq 0
check "run: exports named after the file" test -s "$t/keep.folded"
check "run: spin is hot" grep -qE " spin +keep\.c:[0-9]+" "$t/run.out"
check "run: heap report" grep -q "inuse_space" "$t/run.out"
check "run: heap exports" test -s "$t/keep.heap.pb.gz"
# 64 MiB were kept: hold_blocks holds all of the in-use space.
check "run: hold_blocks holds the heap" grep -qE "100\.0% +0\.0 +100\.0% +6[0-9]\.[0-9] MiB .* hold_blocks +keep\.c" "$t/run.out"

# run: $CFLAGS reach the compiler after kestrel's own flags; without them it fails.
printf '#include <stdio.h>\nint main(void) { printf("n=%%d\\n", N); return 0; }\n' >"$t/flags.c"
out=$(cd "$t" && CFLAGS="-DN=42  -O1" "$OLDPWD/$k" run -o "$t/flags" flags.c 2>"$t/flags.err")
check "run: \$CFLAGS defines N ($(head -c 300 "$t/flags.err"))" grep -qx "n=42" <<<"$out"
(cd "$t" && CFLAGS= "$OLDPWD/$k" run -o "$t/flags" flags.c >/dev/null 2>"$t/flags.err"); rc=$?
check "run: without \$CFLAGS the same file does not compile ($rc)" test $rc -eq 1
check "run: ... and says so" grep -q "kestrel: flags.c: compilation failed" "$t/flags.err"

# A moved program: hex and a warning without --binary, names with it.
mkdir "$t/mv" && cp build/examples/demo "$t/mv/demo"
"$k" record --state waiting -o "$t/mv/p" --report="$t/mv/rec" -- "$t/mv/demo" 1 >/dev/null 2>&1
raw=$(ls "$t"/mv/p.raw/*.raw.json | head -1)
# record --state: the report's table counts one state; the exports hold every sample.
check "record --state waiting: the report says so" \
  grep -q "the table below counts the waiting (off-CPU) samples only" "$t/mv/rec"
check "record --state waiting: the folded export holds the waiting samples" python3 - "$raw" "$t/mv/p.folded" <<'PY'
import json, sys
sys.path.insert(0, "tests")
from rawjson import load
n = sum(1 for s in load(sys.argv[1])["samples"] if s[3] == 1)
folded = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]) if l.strip())
sys.exit(0 if n == folded and n > 0 else f"raw {n} waiting samples, folded {folded}")
PY
mv "$t/mv/demo" "$t/mv/demo.moved"
"$k" report "$raw" >"$t/mv/out" 2>"$t/mv/err"
check "moved: a warning names --binary" grep -q "missing; its frames are named by address (--binary" "$t/mv/err"
check "moved: no demo names" bash -c '! grep -q mix_bytes "$1"' _ "$t/mv/out"
"$k" report --binary "$t/mv/demo.moved" "$raw" >"$t/mv/out" 2>"$t/mv/err"
check "moved: --binary names them" grep -qE " mix_bytes +demo\.c:" "$t/mv/out"
exit $fail

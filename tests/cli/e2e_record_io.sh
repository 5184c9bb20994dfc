#!/usr/bin/env bash
# kestrel record leaves the program's own input and output alone and writes where it
# was asked: Debian's gzip and xz writing binary data to stdout give the same bytes as
# without kestrel; the report goes to the terminal when there is one (a pty made by
# script(1)), else to stderr, or to --report's file; programs that change directory
# (for a while, for good, into one nobody can write) leave their profile in STEM.raw/;
# a program that takes no sample is not said to have achieved a rate.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
k=$root/build/bin/kestrel
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-record-io-XXXXXX)
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fail=1; fi
}

# Binary data on stdout, bytes and all, and the report on stderr (no terminal: setsid).
seq 1 3000000 >"$t/data"
gzip -6 -c "$t/data" >"$t/ref.gz"
setsid -w "$k" record -o "$t/gz" -- gzip -6 -c "$t/data" >"$t/out.gz" 2>"$t/gz.err"; rc=$?
check "gzip under record exits 0 ($rc): $(head -c 300 "$t/gz.err")" test $rc -eq 0
check "gzip's stdout is byte for byte its output without kestrel" cmp -s "$t/ref.gz" "$t/out.gz"
check "... and gzip -t accepts it" gzip -t "$t/out.gz"
check "without a terminal the report is on stderr" grep -qE "^  wall .* samples · " "$t/gz.err"
check "... after kestrel's own lines" grep -q "^kestrel: wrote $t/gz\.\*" "$t/gz.err"
check "the raw profile is in STEM.raw/" test -s "$(ls "$t"/gz.raw/*.raw.json | head -1)"
check "no raw file beside the exports" bash -c '! ls "$1"/*.raw.json 2>/dev/null | grep -q .' _ "$t"

xz -3 -T1 -c "$t/data" >"$t/ref.xz"
"$k" record -o "$t/xz" --report="$t/xz.report" -- xz -3 -T1 -c "$t/data" >"$t/out.xz" 2>"$t/xz.err"; rc=$?
check "xz under record exits 0 ($rc)" test $rc -eq 0
check "xz's stdout is byte for byte its output without kestrel" cmp -s "$t/ref.xz" "$t/out.xz"
check "--report writes the report to its file" grep -qE "^  wall .* samples · " "$t/xz.report"
check "... and not to stderr" bash -c '! grep -q "^  wall " "$1"' _ "$t/xz.err"

# The program's stderr is its own too: a program writing to both, in order.
cat >"$t/both.sh" <<'EOF'
for i in 1 2 3; do echo "out $i"; echo "err $i" >&2; done
EOF
setsid -w "$k" record -o "$t/both" --report="$t/both.report" -- sh "$t/both.sh" >"$t/both.out" 2>"$t/both.err"
check "stdout untouched" diff <(printf 'out 1\nout 2\nout 3\n') "$t/both.out"
check "stderr: the program's lines in order, kestrel's prefixed" \
  diff <(printf 'err 1\nerr 2\nerr 3\n') <(grep -v '^kestrel: ' "$t/both.err")

# With a terminal (script(1) gives the run a pty), the report goes there even with
# stdout and stderr redirected.
script -qec "$k record -o $t/tty -- gzip -1 -c $t/data >$t/tty.gz 2>$t/tty.err" "$t/typescript" \
  >/dev/null 2>&1 </dev/null; rc=$?
check "record under a pty exits 0 ($rc)" test $rc -eq 0
check "the report went to the terminal" grep -qE "wall .* samples · " "$t/typescript"
check "... not to stderr" bash -c '! grep -q "wall " "$1"' _ "$t/tty.err"
check "... and gzip's stdout is still its own" cmp -s <(gzip -1 -c "$t/data") "$t/tty.gz"

# Programs that change directory.
cat >"$t/cd.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void spin(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i ^ (sink >> 3);
}
int main(int argc, char **argv)
{
    char here[4096];
    if (!getcwd(here, sizeof here)) return 2;
    if (chdir(argv[1])) return perror(argv[1]), 2;
    spin(20000000);
    pid_t c = fork(); /* a child that ends while in that directory */
    if (c == 0) {
        spin(20000000);
        exit(0);
    }
    waitpid(c, NULL, 0);
    if (argc > 2 && chdir(here)) return 2; /* "back": and return */
    spin(20000000);
    return 0;
}
EOF
cc -O2 -g -fno-omit-frame-pointer -o "$t/cd" "$t/cd.c"
mkdir -p "$t/run" "$t/ro" && chmod 555 "$t/ro"
# Into a directory nobody can write (/proc) and back; into another one for good; run
# from a directory other than the stem's.
(cd "$t/run" && "$k" record -o ../cdback --report=../cdback.report -- ../cd /proc back) >/dev/null 2>"$t/cdback.err"; rc=$?
check "a program that went into /proc and back: exit 0 ($rc): $(head -c 300 "$t/cdback.err")" test $rc -eq 0
check "... both processes' profiles in STEM.raw/" test "$(ls "$t"/cdback.raw/*.raw.json 2>/dev/null | wc -l)" -eq 2
check "... reported" grep -qE " spin +cd\.c:[0-9]+" "$t/cdback.report"
(cd "$t/run" && "$k" record -o ../cdgone --report=../cdgone.report -- ../cd "$t/ro") >/dev/null 2>"$t/cdgone.err"; rc=$?
check "a program that moved to another directory for good: exit 0 ($rc): $(head -c 300 "$t/cdgone.err")" test $rc -eq 0
check "... both profiles in STEM.raw/" test "$(ls "$t"/cdgone.raw/*.raw.json 2>/dev/null | wc -l)" -eq 2
check "... none in the directory it went to" test -z "$(ls -A "$t/ro")"
check "... none in the one it ran from" test -z "$(ls -A "$t/run")"
# The runtime alone, given a relative path, writes it where the process started.
(cd "$t/run" && KESTREL_PROFILE=rel.%p.json LD_PRELOAD="$root/build/lib/libkestrel.so" ../cd /) >/dev/null 2>&1
check "the runtime takes a relative KESTREL_PROFILE from its starting directory" \
  test "$(ls "$t"/run/rel.*.json 2>/dev/null | wc -l)" -eq 2

# No sample: no rate is said to be achieved.
"$k" record -o "$t/true" --report="$t/true.report" -- true 2>"$t/true.err"; rc=$?
check "record true exits 0 ($rc): $(cat "$t/true.err")" test $rc -eq 0
check "0 samples: no rate achieved" bash -c '! grep -q "Hz achieved" "$1"' _ "$t/true.report"
check "... it says no on-CPU sample was taken" grep -q "no on-CPU sample taken" "$t/true.report"

exit $fail

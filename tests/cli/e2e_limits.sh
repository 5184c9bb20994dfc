#!/usr/bin/env bash
# A program under RLIMIT_NOFILE set before it starts (prlimit) has what it has
# unprofiled (tests/cli/limits/limits.c: threads made, MiB allocated, files opened): under
# a descriptor limit below 1024 exactly as many files (`auto` takes the signal engine,
# which keeps no descriptor, and says why through kestrel); at 1024 the perf engine's few.
# A program that holds every descriptor at its end is told why it left no profile.
# (RLIMIT_AS is not checked here: the engines' per-thread tables still take 55 to 71 MB
# at start; BENCHMARKS.md.)
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-limits-XXXXXX)
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL: $what"; fail=1; fi
}
k=$PWD/build/bin/kestrel
cc -O1 -pthread -o "$t/limits" tests/cli/limits/limits.c || exit 1
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$2"; }

for n in 8 16 64 1024; do
  plain=$(prlimit --nofile=$n -- "$t/limits")
  prof=$("$k" record -o "$t/nf$n" --report=/dev/null -- prlimit --nofile=$n -- "$t/limits" 2>"$t/nf$n.err"); rc=$?
  check "NOFILE $n: exit 0 ($rc)" test $rc -eq 0
  pf=$(field files "$plain"); kf=$(field files "$prof")
  if [ $n -lt 1024 ]; then
    check "NOFILE $n: the same files as unprofiled ($kf of $pf)" test "$kf" = "$pf"
    check "NOFILE $n: kestrel says the signal engine is used and why" \
      grep -q "kestrel: pid [0-9]* (limits): auto chose the signal engine: the perf engine is unavailable (the descriptor limit (RLIMIT_NOFILE) is below 1024" "$t/nf$n.err"
  else
    check "NOFILE $n: at most 8 files fewer than unprofiled ($kf of $pf)" test "$kf" -ge $((pf - 8))
  fi
  check "NOFILE $n: profiled ($(ls "$t/nf$n.raw" | tr '\n' ' '))" \
    bash -c 'ls "$1"/*.raw.json >/dev/null 2>&1' _ "$t/nf$n.raw"
done

# A program that holds every descriptor when it ends: no profile can be written, and
# kestrel says why in one line, with the program's status.
printf '#include <fcntl.h>\nint main(void) { while (open("/dev/null", O_RDONLY) >= 0) ; return 3; }\n' >"$t/hold.c"
cc -o "$t/hold" "$t/hold.c"
(ulimit -n 16; "$k" record -o "$t/hold" -- "$t/hold" >/dev/null 2>"$t/hold.err"); rc=$?
check "every descriptor held: kestrel exits 3 as the program did ($rc)" test $rc -eq 3
check "every descriptor held: kestrel says why ($(tail -1 "$t/hold.err"))" \
  grep -q "the program left no profile; under a descriptor limit of 16 (RLIMIT_NOFILE), a program that holds every descriptor when it ends leaves none to write it" "$t/hold.err"
exit $fail

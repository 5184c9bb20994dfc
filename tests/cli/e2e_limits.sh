#!/usr/bin/env bash
# A program under RLIMIT_NOFILE and RLIMIT_AS set before it starts (prlimit) has what
# it has unprofiled (tests/cli/limits/limits.c: threads made, MiB allocated, files
# opened): exactly as many files at any descriptor limit. Where the hard limit is the
# soft one (8, 16, 64, 1024) `auto` takes the signal engine, which keeps no descriptor,
# and says why through kestrel; where the hard limit leaves room above the soft one
# (64 and 1024 under 4096) the perf engine runs, its descriptors above the soft limit,
# out of the program's reach. Under an address-space limit of 200 or 300 MB, with either engine,
# heap profiling on or off: a program that leaves the runtime its room unused (10 MiB
# and a 32nd of the limit: 16 MiB of 200 MB, 19 of 300) makes the same threads and
# allocates the same MiB as unprofiled, and one that allocates until malloc fails gets
# at most that much less (the runtime's own: its tables sized to the threads it has,
# its rings and heap tables to the limit; its per-thread tables alone were 126 MB
# before they were mapped as threads register).
# A program that holds every descriptor at its end still has its profile written.
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

# `auto`, whatever engine the environment asks for.
for n in 8 16 64 1024; do
  plain=$(prlimit --nofile=$n -- "$t/limits")
  prof=$(env -u KESTREL_PROFILE_ENGINE "$k" record -o "$t/nf$n" --report=/dev/null -- prlimit --nofile=$n -- "$t/limits" 2>"$t/nf$n.err"); rc=$?
  check "NOFILE $n: exit 0 ($rc)" test $rc -eq 0
  pf=$(field files "$plain"); kf=$(field files "$prof")
  check "NOFILE $n: the same files as unprofiled ($kf of $pf)" test "$kf" = "$pf"
  if [ $n -lt 1024 ]; then
    why="is below 1024"
  else
    why="is its hard limit too"
  fi
  check "NOFILE $n: kestrel says the signal engine is used and why" \
    grep -q "kestrel: pid [0-9]* (limits): auto chose the signal engine: the perf engine is unavailable (the descriptor limit (RLIMIT_NOFILE) $why" "$t/nf$n.err"
  check "NOFILE $n: profiled ($(ls "$t/nf$n.raw" | tr '\n' ' '))" \
    bash -c 'ls "$1"/*.raw.json >/dev/null 2>&1' _ "$t/nf$n.raw"
done

# Room above the soft limit: the perf engine, its descriptors out of reach, auto or asked.
for n in 64:4096 1024:4096; do
  plain=$(prlimit --nofile=$n -- "$t/limits")
  pf=$(field files "$plain")
  for eng in auto perf; do
    o="$t/nf${n%%:*}$eng"
    prof=$(KESTREL_PROFILE_ENGINE=$eng "$k" record -o "$o" --report=/dev/null -- prlimit --nofile=$n -- "$t/limits" 2>"$o.err"); rc=$?
    kf=$(field files "$prof")
    check "NOFILE $n, $eng: exit 0 ($rc)" test $rc -eq 0
    check "NOFILE $n, $eng: the same files as unprofiled ($kf of $pf)" test "$kf" = "$pf"
    check "NOFILE $n, $eng: sampled by the perf engine" \
      bash -c 'grep -q "\"engine\": *\"perf\"" "$1"/*.raw.json' _ "$o.raw"
  done
done

for mb in 200 300; do
  plain=$(prlimit --as=$((mb << 20)) -- "$t/limits")
  pt=$(field threads "$plain"); pm=$(field mib "$plain")
  room=$((10 + mb / 32))
  want=$((pm - room))
  capped=$(prlimit --as=$((mb << 20)) -- "$t/limits" $want)
  for eng in signal perf; do
    for heap in "" --heap; do
      w="AS $mb MB, $eng${heap:+, heap}"
      o="$t/as$mb$eng$heap"
      # The limit is kestrel's too: set before anything starts, as `ulimit -v` would.
      prof=$(KESTREL_PROFILE_ENGINE=$eng prlimit --as=$((mb << 20)) -- \
        "$k" record $heap -o "$o.c" --report=/dev/null -- "$t/limits" $want 2>"$o.c.err"); rc=$?
      check "$w: exit 0 ($rc: $(head -c 200 "$o.c.err"))" test $rc -eq 0
      check "$w: $want MiB asked, as unprofiled ($prof / $capped)" \
        test "$(field threads "$prof")/$(field mib "$prof")" = "$(field threads "$capped")/$(field mib "$capped")"
      check "$w: profiled ($(ls "$o.c.raw" | tr '\n' ' '))" \
        bash -c 'ls "$1"/*.raw.json >/dev/null 2>&1 && { [ -z "$2" ] || ls "$1"/*.heap.pb.gz >/dev/null 2>&1; }' _ "$o.c.raw" "$heap"
      prof=$(KESTREL_PROFILE_ENGINE=$eng prlimit --as=$((mb << 20)) -- \
        "$k" record $heap -o "$o.m" --report=/dev/null -- "$t/limits" 2>"$o.m.err"); rc=$?
      check "$w: until malloc fails: exit 0 ($rc)" test $rc -eq 0
      check "$w: the same threads as unprofiled ($(field threads "$prof") of $pt)" \
        test "$(field threads "$prof")" = "$pt"
      km=$(field mib "$prof")
      check "$w: MiB allocated short by at most $room ($km of $pm)" test "${km:-0}" -ge $want
    done
  done
done

# A program that holds every descriptor when it ends: the runtime's engine thread writes
# its profile from a descriptor table of its own (src/runtime/rtthread.h, RT_OWN_FDS),
# and kestrel exits with the program's status.
printf '#include <fcntl.h>\nint main(void) { while (open("/dev/null", O_RDONLY) >= 0) ; return 3; }\n' >"$t/hold.c"
cc -o "$t/hold" "$t/hold.c"
(ulimit -n 16; "$k" record -o "$t/hold" --report="$t/hold.txt" -- "$t/hold" >/dev/null 2>"$t/hold.err"); rc=$?
check "every descriptor held: kestrel exits 3 as the program did ($rc)" test $rc -eq 3
check "every descriptor held: its profile is written ($(ls "$t/hold.raw" 2>&1 | tr '\n' ' '))" \
  bash -c 'ls "$1"/*.raw.json >/dev/null 2>&1 && grep -q "hold (pid" "$2"' _ "$t/hold.raw" "$t/hold.txt"
exit $fail

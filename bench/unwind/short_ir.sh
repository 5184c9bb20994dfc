#!/bin/sh
# bench/unwind/short_ir.sh LIB ENGINE MODE COMMAND... — the user-mode instructions
# (valgrind's cachegrind) of COMMAND and every process it starts, summed, profiled by
# LIB (a libkestrel.so) with ENGINE (perf, signal) and --unwind MODE (fp, cfi, auto) at
# 997 Hz; ENGINE "none" runs it unprofiled. Instruction counts repeat where the time of
# a short process on a shared machine does not (BENCHMARKS.md, `## Stack unwinding`).
# The engine thread's ticks follow the wall clock, so a process that sleeps counts a few
# hundred thousand instructions more or less from one run to the next.
set -e
lib=$1 eng=$2 mode=$3
shift 3
d=$(mktemp -d "${TMPDIR:-/tmp}/kestrel-shortir.XXXXXX")
trap 'rm -rf "$d"' EXIT
if [ "$eng" = none ]; then
    valgrind --tool=cachegrind --cache-sim=no --trace-children=yes \
        --cachegrind-out-file="$d/cg.%p" "$@" >/dev/null 2>"$d/err"
else
    LD_PRELOAD=$lib KESTREL_PROFILE=$d/p.json KESTREL_PROFILE_ENGINE=$eng \
        KESTREL_PROFILE_UNWIND=$mode KESTREL_PROFILE_HZ=997 \
        valgrind --tool=cachegrind --cache-sim=no --trace-children=yes \
        --cachegrind-out-file="$d/cg.%p" "$@" >/dev/null 2>"$d/err"
fi
cat "$d"/cg.* | awk '/^summary/ { s += $2 } END { print s }'

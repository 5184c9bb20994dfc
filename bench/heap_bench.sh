#!/usr/bin/env bash
# The heap profiler's cost against the program without it and against its peers, in
# one run: each round runs every configuration once on a workload (interleaved, so a
# change in the machine's load hits all of them alike), ROUNDS rounds, then medians.
#
#   plain           the workload, glibc malloc
#   preloaded       libkestrel.so preloaded, no profile started
#   + idle thread   the same with one idle thread (bench/heap_idle_thread.c): what a
#                   second thread costs glibc malloc, apart from the profiler
#   kestrel 512K    KESTREL_HEAP, the default interval (file written at exit)
#   kestrel 64K     KESTREL_HEAP_INTERVAL=65536
#   ... fp          the same two with KESTREL_PROFILE_UNWIND=fp: the frame-pointer walk
#                   instead of the default CFI one (the workload keeps frame pointers;
#                   libc does not)
#   heaptrack       heaptrack -o FILE (records every allocation)
#   jemalloc        libjemalloc.so.2 preloaded, no profiling
#   jemalloc prof   MALLOC_CONF=prof:true,prof_accum:true,lg_prof_sample:19 (+ prof_final
#                   and prof_prefix so that it writes its profile at exit, as kestrel does)
#   kestrel+je 512K kestrel in front of jemalloc
#
# Wall and peak RSS from GNU time, CPU (all processes of a run) from perf stat's
# task-clock (this machine has no hardware counters to count instructions); ratios are
# of medians against plain (glibc rows) or jemalloc (jemalloc rows). Usage:
#   bench/heap_bench.sh [ROUNDS] [LOOP_OPS] [MIXED_REQUESTS]
# HEAP_CONFIGS="plain k512 k512fp" runs only those configurations (and then skips the
# instruction counts, the accuracy and the limits).
#
# Last, the profiler's memory at its limits: 70,000 allocations from as many distinct
# stacks (heap_work stacks) fill the tables; peak RSS against the same run unprofiled.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5} LOOP_OPS=${2:-10000000} MIXED=${3:-200000}
WORK=$PWD/build/bench/heap_work
LIB=$PWD/build/lib/libkestrel.so
JE=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 2>/dev/null || true)
for f in "$WORK" "$LIB" "$JE" /usr/bin/heaptrack /usr/bin/time /usr/bin/perf; do
    [ -e "$f" ] || { echo "kestrel: heap bench: missing ${f:-libjemalloc.so.2} (make bench installs it)" >&2; exit 1; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
IDLE=$PWD/build/bench/libheap_idle_thread.so
ALL_CONFIGS=(plain preloaded mt k512 k512fp k64 k64fp heaptrack je jeprof kje512)
read -r -a CONFIGS <<<"${HEAP_CONFIGS:-${ALL_CONFIGS[*]}}"
declare -A NAME=([plain]="plain (glibc)" [preloaded]="preloaded, not started"
    [mt]="preloaded + an idle thread" [k512]="kestrel 512 KiB"
    [k64]="kestrel 64 KiB" [k512fp]="kestrel 512 KiB, fp unwinding"
    [k64fp]="kestrel 64 KiB, fp unwinding" [heaptrack]="heaptrack" [je]="jemalloc" [jeprof]="jemalloc prof, 512 KiB"
    [kje512]="kestrel 512 KiB on jemalloc")

# The command line of one configuration, into CMD.
command_of() { # config workload count out
    local c=$1 out=$4 work=("$WORK" "$2" "$3")
    case $c in
    plain) CMD=(env "${work[@]}") ;;
    preloaded) CMD=(env LD_PRELOAD="$LIB" "${work[@]}") ;;
    mt) CMD=(env LD_PRELOAD="$LIB $IDLE" "${work[@]}") ;;
    k512) CMD=(env LD_PRELOAD="$LIB" KESTREL_HEAP="$out/k.pb.gz" "${work[@]}") ;;
    k64) CMD=(env LD_PRELOAD="$LIB" KESTREL_HEAP="$out/k.pb.gz" KESTREL_HEAP_INTERVAL=65536 "${work[@]}") ;;
    k512fp) CMD=(env LD_PRELOAD="$LIB" KESTREL_HEAP="$out/k.pb.gz" KESTREL_PROFILE_UNWIND=fp "${work[@]}") ;;
    k64fp) CMD=(env LD_PRELOAD="$LIB" KESTREL_HEAP="$out/k.pb.gz" KESTREL_HEAP_INTERVAL=65536
        KESTREL_PROFILE_UNWIND=fp "${work[@]}") ;;
    heaptrack) CMD=(heaptrack -o "$out/ht" "${work[@]}") ;;
    je) CMD=(env LD_PRELOAD="$JE" "${work[@]}") ;;
    jeprof) CMD=(env LD_PRELOAD="$JE"
        MALLOC_CONF="prof:true,prof_accum:true,lg_prof_sample:19,prof_final:true,prof_prefix:$out/je"
        "${work[@]}") ;;
    kje512) CMD=(env LD_PRELOAD="$LIB $JE" KESTREL_HEAP="$out/k.pb.gz" "${work[@]}") ;;
    esac
}

measure() { # config workload count round
    local out=$T/$1.$2.$4
    mkdir -p "$out"
    command_of "$1" "$2" "$3" "$out"
    # CPU from perf's task-clock (every process of the run, to the microsecond); wall
    # and peak RSS of the run's own processes from GNU time inside it
    perf stat -x, -o "$T/perf" -e task-clock -- \
        /usr/bin/time -f "%e %M" -o "$T/time" "${CMD[@]}" >"$out/stdout" 2>"$out/stderr"
    # each configuration must have done what it claims: same checksum, its profile
    local sum; sum=$(grep -E '^[0-9]+$' "$out/stdout" | tail -1)
    [ "$sum" = "$(cat "$T/sum.$2")" ] || { echo "kestrel: heap bench: $1/$2 computed '$sum'" >&2; exit 1; }
    case $1 in
    k512* | k64* | kje512) [ -s "$out/k.pb.gz" ] || { echo "kestrel: heap bench: $1 wrote no profile" >&2; exit 1; } ;;
    heaptrack) ls "$out"/ht* >/dev/null 2>&1 || { echo "kestrel: heap bench: heaptrack wrote nothing" >&2; exit 1; } ;;
    jeprof) ls "$out"/je.*.heap >/dev/null 2>&1 || { echo "kestrel: heap bench: jemalloc wrote no profile (built without --enable-prof?): $(cat "$out/stderr")" >&2; exit 1; } ;;
    esac
    local cpu; cpu=$(awk -F, '$3 == "task-clock" {print $1 / 1000}' "$T/perf")
    awk -v c="$1" -v w="$2" -v cpu="$cpu" '{printf "%s %s %.3f %.4f %d\n", w, c, $1, cpu, $2}' \
        "$T/time" >>"$T/results"
    rm -rf "$out"
}

samples() { gzip -dc "$1" | grep -ao 'kestrel heap profile: [0-9]* samples' | grep -o '[0-9]*' | head -1; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
for w in loop mixed; do
    n=$([ $w = loop ] && echo "$LOOP_OPS" || echo "$MIXED")
    "$WORK" "$w" "$n" >"$T/sum.$w"
    for r in $(seq "$ROUNDS"); do
        for c in "${CONFIGS[@]}"; do measure "$c" "$w" "$n" "$r"; done
        # samples taken: one more kestrel run per round keeps its file
        env LD_PRELOAD="$LIB" KESTREL_HEAP="$T/s.$w.$r.pb.gz" "$WORK" "$w" "$n" >/dev/null
        echo "$w $(samples "$T/s.$w.$r.pb.gz")" >>"$T/samples"
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
for w in loop mixed; do
    n=$([ $w = loop ] && echo "$LOOP_OPS malloc/free pairs of 16..2048 B through a ring of 4096" || echo "$MIXED requests")
    echo
    echo "### $w: $n; $ROUNDS interleaved rounds, medians (min..max)"
    echo
    echo "| configuration | wall s | wall × | CPU s | CPU × | peak RSS MiB | RSS × |"
    echo "|---|---|---|---|---|---|---|"
    for c in "${CONFIGS[@]}"; do
        ref=$([ "${c:0:2}" = je ] || [ "$c" = kje512 ] && echo je || echo plain)
        row=""
        for col in 3 4 5; do
            v=$(awk -v w=$w -v c=$c -v k=$col '$1 == w && $2 == c {print $k}' "$T/results" | median)
            lo=$(awk -v w=$w -v c=$c -v k=$col '$1 == w && $2 == c {print $k}' "$T/results" | sort -n | head -1)
            hi=$(awk -v w=$w -v c=$c -v k=$col '$1 == w && $2 == c {print $k}' "$T/results" | sort -n | tail -1)
            base=$(awk -v w=$w -v c=$ref -v k=$col '$1 == w && $2 == c {print $k}' "$T/results" | median)
            if [ $col = 5 ]; then
                row+=$(awk -v v="$v" -v lo="$lo" -v hi="$hi" -v b="$base" 'BEGIN {printf "| %.1f (%.1f..%.1f) | %.2f ", v / 1024, lo / 1024, hi / 1024, v / b}')
            else
                row+=$(awk -v v="$v" -v lo="$lo" -v hi="$hi" -v b="$base" 'BEGIN {printf "| %.3f (%.3f..%.3f) | %.3f ", v, lo, hi, v / b}')
            fi
        done
        echo "| ${NAME[$c]} $row|"
    done
    echo
    echo "kestrel samples at 512 KiB per run: $(awk -v w=$w '$1 == w {printf "%s ", $2}' "$T/samples")"
done

[ -n "${HEAP_CONFIGS:-}" ] && exit 0

# User-mode instructions, deterministic where CPU time is not on a loaded machine
# (no hardware counters here: valgrind's cachegrind counts them). A profiled run
# still varies a little (which allocations are sampled changes glibc's free lists),
# so the loop runs three times and the median is shown with its range; mixed once.
if command -v valgrind >/dev/null; then
    echo
    echo "### user-mode instructions (cachegrind): loop of $((LOOP_OPS / 10)) pairs (median of 3, min..max), mixed of $((MIXED / 4)) requests (one run)"
    echo
    echo "| configuration | loop instructions | × | mixed instructions | × |"
    echo "|---|---|---|---|---|"
    declare -A IR IRR
    for c in plain preloaded mt k512 k512fp k64 k64fp je jeprof kje512; do
        for w in loop mixed; do
            n=$([ $w = loop ] && echo $((LOOP_OPS / 10)) || echo $((MIXED / 4)))
            mkdir -p "$T/vg"
            command_of "$c" "$w" "$n" "$T/vg"
            # valgrind runs the program itself: the environment goes in front of it
            envs=() prog=()
            for a in "${CMD[@]:1}"; do
                if [ ${#prog[@]} = 0 ] && [[ $a == *=* ]]; then envs+=("$a"); else prog+=("$a"); fi
            done
            for r in $([ $w = loop ] && echo 1 2 3 || echo 1); do
                env "${envs[@]}" valgrind --tool=cachegrind --cache-sim=no \
                    --cachegrind-out-file=/dev/null "${prog[@]}" 2>&1 >/dev/null |
                    awk '/I *refs:/ {gsub(",", "", $NF); print $NF}'
            done | sort -n >"$T/ir"
            IR[$c.$w]=$(median <"$T/ir")
            IRR[$c.$w]=$(awk 'NR == 1 {lo = $1} {hi = $1} END {if (NR > 1) printf " (%s..%s)", lo, hi}' "$T/ir")
            rm -rf "$T/vg"
        done
        ref=$([ "${c:0:2}" = je ] || [ "$c" = kje512 ] && echo je || echo plain)
        echo "| ${NAME[$c]} | ${IR[$c.loop]}${IRR[$c.loop]} | $(awk -v a="${IR[$c.loop]}" -v b="${IR[$ref.loop]}" 'BEGIN {printf "%.4f", a / b}') |" \
            "${IR[$c.mixed]} | $(awk -v a="${IR[$c.mixed]}" -v b="${IR[$ref.mixed]}" 'BEGIN {printf "%.4f", a / b}') |"
    done
fi

echo
echo "### in-use bytes per site against the truth (build/bench/heap_accuracy ${ACC_RUNS:-2000} 524288)"
echo
"$PWD/build/bench/heap_accuracy" "${ACC_RUNS:-2000}" 524288

echo
echo "### memory at the limits: 70,000 distinct stacks of 28 frames, 64 KiB interval"
echo
for r in 1 2 3; do
    /usr/bin/time -f "%M" -o "$T/time" "$WORK" stacks 70000 >/dev/null
    plain=$(cat "$T/time")
    /usr/bin/time -f "%M" -o "$T/time" env LD_PRELOAD="$LIB" KESTREL_HEAP="$T/lim.pb.gz" \
        KESTREL_HEAP_INTERVAL=65536 "$WORK" stacks 70000 >/dev/null
    prof=$(cat "$T/time")
    echo "- peak RSS $(awk -v a="$prof" -v b="$plain" 'BEGIN {printf "%.1f MiB profiled, %.1f MiB not: the profiler %.1f MiB", a / 1024, b / 1024, (a - b) / 1024}')"
done
go tool pprof -raw "$T/lim.pb.gz" 2>/dev/null | sed -n 's/^Comment: \(.*\)/- its comment: `\1`/p'

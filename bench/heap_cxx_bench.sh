#!/usr/bin/env bash
# The heap profiler's cost on C++ operator new/delete (bench/heap_cxx_work.cc: new/delete
# pairs of 16..2048 B through a ring of 4,096, one in eight aligned), the program linked
# against glibc's malloc, tcmalloc or jemalloc; beside heaptrack (glibc) and jemalloc's
# own profiler. Every configuration runs once per round, ROUNDS interleaved rounds, then
# medians (min..max) of user+system CPU and wall (GNU time), and ratios against the same
# program run plain. Then user-mode instructions (cachegrind, deterministic) of a run of
# N/10 pairs for the configurations that show what kestrel's code costs.
#
#   plain         the program alone
#   preloaded     libkestrel.so preloaded, no profile started
#   kestrel 512K  KESTREL_HEAP, the default interval
#   heaptrack     heaptrack -o FILE (glibc only)
#   je prof       MALLOC_CONF=prof:true,prof_accum:true,lg_prof_sample:19,prof_final:true
#                 (jemalloc only; writes its profile at exit, as kestrel does)
#
# KESTREL_BASE_LIB=/path/libkestrel.so adds the same preloaded and kestrel rows with that
# library (an earlier build) for comparison.
#
# Usage: bench/heap_cxx_bench.sh [ROUNDS] [N]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-7} N=${2:-10000000}
LIB=$PWD/build/lib/libkestrel.so
BASE=${KESTREL_BASE_LIB:-}
for f in "$LIB" /usr/bin/heaptrack /usr/bin/time /usr/bin/valgrind build/bench/heap_cxx_work_glibc \
    build/bench/heap_cxx_work_tcmalloc build/bench/heap_cxx_work_jemalloc; do
    [ -e "$f" ] || { echo "kestrel: heap cxx bench: missing $f (make bench builds it)" >&2; exit 1; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
want=$(build/bench/heap_cxx_work_glibc "$N")

CONFIGS=()
for a in glibc tcmalloc jemalloc; do
    CONFIGS+=("$a:plain" "$a:preloaded")
    [ -n "$BASE" ] && CONFIGS+=("$a:preloaded-base")
    CONFIGS+=("$a:k512")
    [ -n "$BASE" ] && CONFIGS+=("$a:k512-base")
done
CONFIGS+=("glibc:heaptrack" "jemalloc:jeprof")

command_of() { # alloc:config n out -> CMD
    local a=${1%%:*} c=${1#*:} n=$2 out=$3 prog=$PWD/build/bench/heap_cxx_work_${1%%:*}
    case $c in
    plain) CMD=(env "$prog" "$n") ;;
    preloaded) CMD=(env LD_PRELOAD="$LIB" "$prog" "$n") ;;
    preloaded-base) CMD=(env LD_PRELOAD="$BASE" "$prog" "$n") ;;
    k512) CMD=(env LD_PRELOAD="$LIB" KESTREL_HEAP="$out/k.pb.gz" "$prog" "$n") ;;
    k512-base) CMD=(env LD_PRELOAD="$BASE" KESTREL_HEAP="$out/k.pb.gz" "$prog" "$n") ;;
    heaptrack) CMD=(heaptrack -o "$out/ht" "$prog" "$n") ;;
    jeprof) CMD=(env MALLOC_CONF="prof:true,prof_accum:true,lg_prof_sample:19,prof_final:true,prof_prefix:$out/je" "$prog" "$n") ;;
    esac
    : "$a"
}

for r in $(seq "$ROUNDS"); do
    for cfg in "${CONFIGS[@]}"; do
        out=$T/run && rm -rf "$out" && mkdir -p "$out"
        command_of "$cfg" "$N" "$out"
        if ! /usr/bin/time -f "%e %U %S" -o "$T/time" "${CMD[@]}" >"$T/stdout" 2>"$T/stderr"; then
            # An earlier build may crash where this one is fixed: said in its row.
            case $cfg in *-base) echo "$cfg failed" >>"$T/results"; continue ;; esac
            echo "kestrel: heap cxx bench: $cfg failed: $(tail -3 "$T/stderr")" >&2
            exit 1
        fi
        grep -qx "$want" "$T/stdout" || { echo "kestrel: heap cxx bench: $cfg: wrong checksum" >&2; exit 1; }
        case $cfg in *k512*) [ -s "$out/k.pb.gz" ] || { echo "kestrel: heap cxx bench: $cfg wrote no profile" >&2; exit 1; } ;; esac
        read -r wall u s <"$T/time"
        echo "$cfg $wall $(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.3f", u+s}')" >>"$T/results"
    done
done

echo "### $N new/delete pairs of 16..2048 B (one in eight aligned to 64) through a ring of 4096; $ROUNDS interleaved rounds, medians (min..max)"
echo
echo "| program | configuration | CPU s | CPU × | wall s |"
echo "|---|---|---|---|---|"
python3 - "$T/results" "${CONFIGS[@]}" <<'PY'
import statistics, sys
rows = {}
failed = set()
for line in open(sys.argv[1]):
    cfg, wall, *cpu = line.split()
    if wall == "failed":
        failed.add(cfg)
        continue
    rows.setdefault(cfg, []).append((float(wall), float(cpu[0])))
name = {"plain": "plain", "preloaded": "preloaded, not started",
        "preloaded-base": "preloaded, not started (before)", "k512": "kestrel 512 KiB",
        "k512-base": "kestrel 512 KiB (before)", "heaptrack": "heaptrack",
        "jeprof": "jemalloc prof, 512 KiB"}
for cfg in sys.argv[2:]:
    a, c = cfg.split(":")
    if cfg not in rows:
        print("| %s | %s | crashed | | |" % (a, name[c]))
        continue
    cpu = [x[1] for x in rows[cfg]]
    wall = [x[0] for x in rows[cfg]]
    base = statistics.median(x[1] for x in rows[a + ":plain"])
    m = statistics.median(cpu)
    print("| %s | %s | %.3f (%.3f..%.3f) | %.3f | %.3f |" % (a, name[c], m, min(cpu), max(cpu), m / base,
                                                            statistics.median(wall)))
PY

# Instructions: user mode, deterministic (cachegrind), each configuration at N/20 and N/10
# pairs: per pair, the difference over the pairs added; at start, what is left of the first.
echo
echo "User-mode instructions (cachegrind) per new/delete pair, and at start (process and profiler"
echo "start and exit, from runs of $((N / 20)) and $((N / 10)) pairs):"
echo
echo "| program | configuration | per pair | × plain | at start (M) |"
echo "|---|---|---|---|---|"
IC=()
for a in glibc tcmalloc jemalloc; do
    IC+=("$a:plain" "$a:preloaded")
    [ -n "$BASE" ] && IC+=("$a:preloaded-base")
    IC+=("$a:k512")
    [ -n "$BASE" ] && IC+=("$a:k512-base")
done
IC+=("jemalloc:jeprof")
declare -A PLAIN
refs() { # config n -> instructions, or empty when it crashed
    local out=$T/run envs=() prog=()
    rm -rf "$out" && mkdir -p "$out"
    command_of "$1" "$2" "$out"
    # valgrind runs the program; the environment (LD_PRELOAD, KESTREL_*) goes to it.
    for x in "${CMD[@]:1}"; do
        if [ ${#prog[@]} = 0 ] && [[ $x == *=* ]]; then envs+=("$x"); else prog+=("$x"); fi
    done
    env "${envs[@]}" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "${prog[@]}" >/dev/null 2>"$T/cg" || true
    grep -q "Process terminating" "$T/cg" && return # it crashed: no count
    sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$T/cg" | tr -d ,
}
n1=$((N / 20)) n2=$((N / 10))
for cfg in "${IC[@]}"; do
    i1=$(refs "$cfg" $n1) i2=$(refs "$cfg" $n2)
    if [ -z "$i1" ] || [ -z "$i2" ]; then
        echo "| ${cfg%%:*} | ${cfg#*:} | crashed | | |"
        continue
    fi
    per=$(awk -v a="$i1" -v b="$i2" -v n1=$n1 -v n2=$n2 'BEGIN{printf "%.1f", (b - a) / (n2 - n1)}')
    [ "${cfg#*:}" = plain ] && PLAIN[${cfg%%:*}]=$per
    awk -v a="${cfg%%:*}" -v c="${cfg#*:}" -v per="$per" -v p="${PLAIN[${cfg%%:*}]}" -v i1="$i1" -v n1=$n1 \
        'BEGIN{printf "| %s | %s | %.1f | %.3f | %.1f |\n", a, c, per, per / p, (i1 - per * n1) / 1e6}'
done

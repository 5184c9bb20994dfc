#!/usr/bin/env bash
# The CLI benchmark (figures -> BENCHMARKS.md `## CLI`).
#
# Input: a real libkestrel recording. bench/cli/gen_program.py writes a program of
# 3,000 functions over 8 compilation units (with inlined helpers), built with
# -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer; it runs under
# libkestrel (KESTREL_PROFILE, 10 kHz, 4 working threads, the main one among them,
# and 1 sleeping one) until the raw profile holds at least 1,000,000 samples over at least
# 50,000 distinct stacks, none past the runtime's stack table. The same program runs under `perf record -g` for the peer.
# Both are cached in build/bench/cli/prog/ (delete it to record again).
#
# Then, interleaved over ROUNDS rounds, with medians:
#   - every export and the report in one process, as `kestrel record` writes them
#     after the run (export_bench all): wall, CPU and peak RSS, phase by phase;
#   - `kestrel export --format F` for each format and `kestrel report`, one process each;
#   - symbolizing the profile's unique addresses in the program: kestrel's symbolizer
#     (export_bench symbolize) against piping the same addresses, adjusted the same
#     way, to `llvm-symbolizer` and to `addr2line -i -f -C`; kestrel's answers are
#     compared with llvm-symbolizer's, address by address;
#   - `perf report --stdio` on the perf.data of the same program.
# Usage: bench/cli/run.sh [ROUNDS]   (default 5)
set -euo pipefail
rounds=${1:-5}
B=build/bench/cli
P=$B/prog
K=build/bin/kestrel
LIB=$PWD/build/lib/libkestrel.so
MIN_SAMPLES=1000000 MIN_STACKS=50000
mkdir -p "$B/out" "$P"
for t in llvm-symbolizer addr2line perf; do
  command -v "$t" >/dev/null || { echo "bench/cli: $t is missing (scripts/deps.sh --bench)" >&2; exit 1; }
done

# --- the program ------------------------------------------------------------------
if [ ! -x "$P/program" ] || [ bench/cli/gen_program.py -nt "$P/program" ] ||
   [ bench/cli/program_main.c -nt "$P/program" ]; then
  echo "bench/cli: building the program (3,000 functions)" >&2
  rm -rf "$P/src" "$P"/*.o
  python3 bench/cli/gen_program.py "$P/src" 3000 8
  ls "$P"/src/*.c bench/cli/program_main.c | xargs -P2 -I{} sh -c \
    'cc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -Wall -Werror \
        -I'"$P/src"' -c {} -o '"$P"'/$(basename {} .c).o'
  cc -pthread -o "$P/program" "$P"/*.o
  rm -f "$P/raw.json" "$P/perf.data"
fi

# --- the recording ----------------------------------------------------------------
# program SECONDS WORKERS WAITERS ITEMS: ITEMS bounds the distinct call paths, and so
# the stacks (the runtime keeps 65,536 at most).
enough() {
  local s
  s=$(python3 bench/cli/raw_stats.py "$1")
  echo "bench/cli: $1: $s" >&2
  awk -v s="$s" -v ms=$MIN_SAMPLES -v mt=$MIN_STACKS 'BEGIN {
    split(s, w, " "); for (i in w) { split(w[i], kv, "="); v[kv[1]] = kv[2] }
    exit !(v["samples"] >= ms && v["stacks"] >= mt) }'
}
# A recording that overflowed the runtime's stack table (65,536 stacks; the rest are
# counted in its "other stacks" bucket) is recorded again with fewer paths, unless it
# is the last try.
if [ ! -f "$P/raw.json" ] || [ "$P/program" -nt "$P/raw.json" ]; then
  secs=60 items=320
  for attempt in 1 2 3 4 5; do
    echo "bench/cli: recording the program for $secs s under libkestrel (10 kHz, $items paths)" >&2
    env LD_PRELOAD="$LIB" KESTREL_PROFILE="$P/raw.try.json" KESTREL_PROFILE_HZ=10000 \
      "$P/program" "$secs" 4 1 "$items" > /dev/null
    read -r n_samples n_stacks n_other < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r["samples"]), len(r["stacks"]), r.get("past_limits", {}).get("other_stacks_samples", 0))' "$P/raw.try.json")
    if enough "$P/raw.try.json" && { [ "$n_other" -eq 0 ] || [ $attempt -eq 5 ]; }; then
      mv "$P/raw.try.json" "$P/raw.json"; echo "$items" > "$P/paths"; break
    fi
    # Too few samples: longer (the machine was busy); too few stacks: more paths;
    # stacks past the table: fewer.
    [ "$n_samples" -ge $MIN_SAMPLES ] || secs=$(( secs * (MIN_SAMPLES * 11 / 10) / n_samples + 1 ))
    [ "$n_stacks" -ge $MIN_STACKS ] || items=$(( items + 80 ))
    [ "$n_other" -eq 0 ] || items=$(( items * 85 / 100 ))
  done
  [ -f "$P/raw.json" ] || { echo "bench/cli: no recording reached $MIN_SAMPLES samples and $MIN_STACKS stacks" >&2; exit 1; }
fi
raw_stats=$(python3 bench/cli/raw_stats.py "$P/raw.json")
enough "$P/raw.json" || { echo "bench/cli: $P/raw.json is too small; delete it" >&2; exit 1; }
if [ ! -f "$P/addrs.txt" ] || [ "$P/raw.json" -nt "$P/addrs.txt" ]; then
  python3 bench/cli/addresses.py "$P/raw.json" "$(realpath "$P/program")" "$P/sym.raw.json" \
    > "$P/addrs.txt"
fi

# perf samples on-CPU time only, at most 10 kHz of it per thread here; -F 50000 gives
# it as many samples as the raw profile holds in about 20 CPU seconds.
perf_samples() { perf report -i "$1" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}'; }
if [ ! -f "$P/perf.data" ] || [ "$P/raw.json" -nt "$P/perf.data" ]; then
  secs=15
  for attempt in 1 2 3; do
    echo "bench/cli: recording the program for $secs s under perf record -g" >&2
    perf record -q -F 50000 -g -o "$P/perf.try.data" -- "$P/program" "$secs" 4 1 "$(cat "$P/paths")" \
      > /dev/null 2>&1
    n=$(perf_samples "$P/perf.try.data")
    if [ "${n:-0}" -ge $MIN_SAMPLES ]; then mv "$P/perf.try.data" "$P/perf.data"; break; fi
    secs=$(( secs * (MIN_SAMPLES * 12 / 10) / (${n:-0} + 1) + 1 ))
  done
  [ -f "$P/perf.data" ] || mv "$P/perf.try.data" "$P/perf.data"
fi
perf_n=$(perf_samples "$P/perf.data")

# --- the rounds -------------------------------------------------------------------
# timed NAME [--stdin FILE] CMD...: appends "wall_s rss_kib cpu_s" to $B/times.NAME;
# the command's output is kept in $B/out.tmp.
timed() {
  local name=$1; shift
  local in=/dev/null
  if [ "$1" = --stdin ]; then in=$2; shift 2; fi
  python3 bench/cli/timed.py --stdin "$in" -- sh -c '"$@" > "'"$B/out.tmp"'"' sh "$@" \
    >> "$B/times.$name"
}
formats="speedscope cpuprofile folded summary pprof html"
rm -f "$B"/times.*
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$rounds"); do
  echo "bench/cli: round $r of $rounds" >&2
  timed all build/bench/cli/export_bench all "$P/raw.json" "$B/out"
  cp "$B/out.tmp" "$B/phases.$r"
  for f in $formats; do
    timed "export_$f" "$K" export --format "$f" -o "$B/out/k.$f" "$P/raw.json"
  done
  timed report "$K" report "$P/raw.json"
  timed sym_proc build/bench/cli/export_bench symbolize "$P/sym.raw.json" "$B/kestrel.symbols"
  awk '$1=="symbolize"{print $2, 0, $3}' "$B/out.tmp" >> "$B/times.sym_kestrel"
  timed llvm --stdin "$P/addrs.txt" llvm-symbolizer --obj="$P/program"
  cp "$B/out.tmp" "$B/llvm.symbols"
  timed addr2line --stdin "$P/addrs.txt" addr2line -i -f -C -e "$P/program"
  timed perf_report perf report -i "$P/perf.data" --stdio
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
agreement=$(python3 bench/cli/compare_symbols.py "$B/kestrel.symbols" "$B/llvm.symbols" | head -1)

med() { sort -n | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
col() { awk -v c="$2" '{print $c}' "$B/times.$1" | med; }
mib() { awk "BEGIN{printf \"%.0f\", $(col "$1" 2)/1024}"; }
ratio() { awk "BEGIN{printf \"%.1f\", $1/$2}"; }
# The median of one phase over the rounds' phase files: column 2 wall, 3 CPU.
phase() { cat "$B"/phases.* | awk -v p="$1" -v c="$2" '$1==p{print $c}' | med; }
sym_k=$(col sym_kestrel 1); sym_kc=$(col sym_kestrel 3)
llvm_c=$(col llvm 3); a2l_c=$(col addr2line 3); symp_c=$(col sym_proc 3)
n_addr=$(wc -l < "$P/addrs.txt")
kv() { echo "$raw_stats" | tr ' ' '\n' | awk -F= -v k="$1" '$1==k{print $2}'; }

section=$(cat <<EOT
## CLI

Command: \`bench/cli/run.sh $rounds\` (run by \`make bench\`). Medians of $rounds interleaved
rounds. This machine has 2 cores shared with other builds: load average before
$load_before, after $load_after. Wall seconds, and CPU seconds (user + system) beside
them: every process here is single-threaded, so on a shared machine its CPU time is
the better estimate of its wall time alone.

Input: a real recording. \`bench/cli/gen_program.py\` writes a C program of 3,000
functions over 8 compilation units that call each other along data-dependent paths
(each does some work in \`static inline\` helpers, some inlined inside others, then
calls one of four callees chosen by its data), built with \`-O2 -g
-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer\`; libkestrel recorded it
(\`KESTREL_PROFILE\`, \`KESTREL_PROFILE_HZ=10000\`, 4 working threads, the main thread
among them, and 1 that sleeps at its leaves) in one run: $(kv samples) samples
($(kv running) running, $(kv waiting) waiting) over $(kv stacks) distinct stacks,
$(kv threads) threads, $(kv addresses) distinct addresses, stacks up to $(kv max_depth) frames,
$(kv engine) engine, $(kv other_stacks_samples) samples past the runtime's stack table, $(kv dropped) dropped.

| what | median wall (s) | median CPU (s) | peak RSS (MiB) | goal |
| --- | ---: | ---: | ---: | --- |
| every export and the report in one process (read, symbolize, aggregate, the 6 writers, the report: what \`record\` does after the run) | $(col all 1) | $(col all 3) | $(mib all) | < 3 s, < 500 MiB |
$(for f in $formats; do
  printf '| `kestrel export --format %s` (one process: read, symbolize, aggregate, write) | %s | %s | %s | |\n' \
    "$f" "$(col "export_$f" 1)" "$(col "export_$f" 3)" "$(mib "export_$f")"
done)
| \`kestrel report\` (one process) | $(col report 1) | $(col report 3) | $(mib report) | |
| peer: \`perf report --stdio\` on a perf.data of the same program (\`perf record -F 50000 -g\`, $perf_n samples) | $(col perf_report 1) | $(col perf_report 3) | $(mib perf_report) | |

Phases of the one-process run (\`export_bench all\`), medians of wall and CPU seconds:
$(for ph in read symbolize aggregate speedscope cpuprofile folded summary pprof html report; do
  printf '%s %s/%s; ' "$ph" "$(phase $ph 2)" "$(phase $ph 3)"; done | sed 's/; $//').

Symbolizing the profile's $n_addr unique addresses in the program (return addresses − 1,
inlined calls expanded, C++ demangling on, in all three; kestrel reads them as a raw
profile of one-frame stacks, the peers as a list on stdin). Same information from
each: function, file, line and the inline chain; kestrel against llvm-symbolizer,
address by address: $agreement.

| symbolizer | median wall (s) | median CPU (s) | kestrel's speed relative to it (CPU) |
| --- | ---: | ---: | ---: |
| kestrel (libdw, and its own line-table reader): its symbolize phase, in process | $sym_k | $sym_kc | |
| kestrel: the whole process (\`export_bench symbolize\`: start, read the JSON, symbolize) | $(col sym_proc 1) | $symp_c | |
| \`llvm-symbolizer --obj=BIN < addrs\` (whole process) | $(col llvm 1) | $llvm_c | $(ratio "$llvm_c" "$sym_kc")x phase, $(ratio "$llvm_c" "$symp_c")x process (goal ≥ 5x) |
| \`addr2line -i -f -C -e BIN < addrs\` (whole process) | $(col addr2line 1) | $a2l_c | $(ratio "$a2l_c" "$sym_kc")x phase, $(ratio "$a2l_c" "$symp_c")x process |

What was slow, found with \`perf record -g\` on \`export_bench\` (on earlier recordings
of this program, before the changes that went with this benchmark): libdwfl's address-to-symbol lookup, called
for every address, scans the whole ELF symbol table (1.5 s CPU for 35,000 addresses,
most of the symbolizer's time: now a sorted table, asked only when DWARF names no
function); walking each function's inline scopes and looking up each DIE's name again
for every address (now once per function and per DIE); rehashing every frame's
strings when the frame table grew (now each hash is kept, each string once); and
jansson's node per number in the reader (0.9 s and 370 MiB of the 486 MiB peak: now
the two big arrays are scanned directly).

Then, at 0.041 s CPU for the phase (3.4x llvm-symbolizer), libdw's decoding of the line
tables was about 17 ms of it: \`dwarf_getsrclines\` allocates a list node per row of this
program's 300,000 and sorts them all, and \`dwarf_getsrcfiles\` does the same to reach
a file table. kestrel now reads \`.debug_line\` itself (\`src/analysis/symbols/linetab.c\`, DWARF
2 to 5): one pass into one sorted array, one row per address, looked up from the last
row found; a unit it does not read exactly as libdw would (an opcode, form or value it
does not know, a malformed header, split DWARF) is left to libdw. Its answers are
libdw's: \`tests/cli/test_linetab.c\` compares the two at every row of eleven binaries
(gcc and clang, DWARF 3, 4 and 5, \`-ffunction-sections\` with \`--gc-sections\`,
compressed sections, C++, Go, kestrel itself) and of libc's debug file, and on randomly
damaged copies; \`tests/cli/test_symbolize_lines.c\` symbolizes every row address both
ways; a fuzz target does the same for any \`.debug_line\`. Next came interning the
output frames, each hashed into the frame table: an equal frame can only come from the
same address, and all of an address's frames are made one after another, so a frame is
now compared with those of its own address alone (the table is built if something
interns later); names and paths are made the profile's own once per function, inlined
call and file, not looked up per frame; an inlined call takes its name from its
abstract origin, once per origin; the addresses are sorted by a counting sort on their
key bytes. What remains of the phase (\`perf record -g\`, this program): libdw's walks
of each CU's and each function's DIEs (about 35%), decoding the line programs (about
15%), rebuilding the stacks (about 12%), and first touches of fresh memory (about 20%,
spread over all of them).
EOT
)
python3 - "$section" <<'PY'
import re, sys
section = sys.argv[1].rstrip() + "\n"
try:
    text = open("BENCHMARKS.md").read()
except FileNotFoundError:
    text = "# kestrel benchmarks\n\n"
pat = re.compile(r"^## CLI\n.*?(?=^## |\Z)", re.S | re.M)
text = pat.sub(lambda m: section + "\n", text) if pat.search(text) else text.rstrip() + "\n\n" + section
open("BENCHMARKS.md", "w").write(text)
PY
echo "$section"

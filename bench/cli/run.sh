#!/usr/bin/env bash
# The CLI benchmark (figures -> BENCHMARKS.md `## CLI`): a raw profile of 1,000,000
# samples over 50,000 distinct stacks of a real program (bench/cli/gen_callgraph.py:
# 256 functions, each stack taken from the program's own frame-pointer chain), then,
# interleaved over ROUNDS rounds, with medians:
#   - every export in one process, as `kestrel record` writes them (export_bench all):
#     wall time and peak RSS;
#   - `kestrel export --format F` for each format, one process each;
#   - symbolizing the profile's unique addresses: kestrel's symbolizer (its phase of
#     export_bench symbolize) against piping the same addresses, adjusted the same
#     way, to `llvm-symbolizer` and to `addr2line -i -f`;
#   - `perf report --stdio` on a perf.data of the same program, as a peer.
# Usage: bench/cli/run.sh [ROUNDS]   (default 5)
set -euo pipefail
rounds=${1:-5}
B=build/bench/cli
K=build/bin/kestrel
mkdir -p "$B/out"
for t in llvm-symbolizer addr2line perf; do
  command -v "$t" >/dev/null || { echo "bench/cli: $t is missing (scripts/deps.sh --bench)" >&2; exit 1; }
done

python3 bench/cli/gen_callgraph.py 256 > "$B/callgraph.c"
cc -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
   -fno-optimize-sibling-calls -Ibench/cli -pthread -o "$B/callgraph" "$B/callgraph.c"
"$B/callgraph" raw "$B/raw.json" 1000000 50000
python3 bench/cli/addresses.py "$B/raw.json" "$(realpath "$B/callgraph")" "$B/sym.raw.json" \
  > "$B/addrs.txt"
perf record -q -F 4000 -g -o "$B/perf.data" -- "$B/callgraph" spin 20 2 2>/dev/null
perf_samples=$(perf report -i "$B/perf.data" --stdio --header-only 2>/dev/null |
               sed -n 's/.*sample_freq.*//;s/^# Samples: *\([0-9]*\).*/\1/p' | head -1)
[ -n "$perf_samples" ] || perf_samples=$(perf script -i "$B/perf.data" -F period 2>/dev/null | wc -l)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# timed NAME [--stdin FILE] CMD...: appends "wall_s rss_kib cpu_s" to $B/times.NAME;
# the command's output is kept in $B/out.tmp.
timed() {
  local name=$1; shift
  local in=/dev/null
  if [ "$1" = --stdin ]; then in=$2; shift 2; fi
  python3 bench/cli/timed.py --stdin "$in" -- sh -c '"$@" > "'"$B/out.tmp"'"' sh "$@" \
    >> "$B/times.$name"
}
rm -f "$B"/times.*
for r in $(seq "$rounds"); do
  timed all build/bench/cli/export_bench all "$B/raw.json" "$B/out"
  cp "$B/out.tmp" "$B/phases.txt"

  for f in speedscope cpuprofile folded summary pprof; do
    timed "export_$f" "$K" export --format "$f" -o "$B/out/k.$f" "$B/raw.json"
  done
  timed sym_proc build/bench/cli/export_bench symbolize "$B/sym.raw.json"
  awk '$1=="symbolize"{print $2, 0, $3}' "$B/out.tmp" >> "$B/times.sym_kestrel"
  timed llvm --stdin "$B/addrs.txt" llvm-symbolizer --obj="$B/callgraph"
  timed addr2line --stdin "$B/addrs.txt" addr2line -i -f -e "$B/callgraph"
  timed perf_report perf report -i "$B/perf.data" --stdio
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

med() { sort -n | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
col() { awk -v c="$2" '{print $c}' "$B/times.$1" | med; }
all_s=$(col all 1); all_cpu=$(col all 3); all_mib=$(awk "BEGIN{print $(col all 2)/1024}")
sym_k=$(col sym_kestrel 1); llvm_s=$(col llvm 1); a2l_s=$(col addr2line 1)
sym_kc=$(col sym_kestrel 3); llvm_c=$(col llvm 3); a2l_c=$(col addr2line 3)
symp_s=$(col sym_proc 1); symp_c=$(col sym_proc 3)
n_addr=$(wc -l < "$B/addrs.txt")
ratio() { awk "BEGIN{printf \"%.1f\", $1/$2}"; }

section=$(cat <<EOT
## CLI

Command: \`bench/cli/run.sh $rounds\` (run by \`make bench\`). Medians of $rounds interleaved
rounds on this 2-core machine shared with other builds; load average before
$load_before, after $load_after. Input: a raw profile of 1,000,000 samples over 50,000
distinct stacks (depth 8, $n_addr unique addresses) of a real program,
bench/cli/gen_callgraph.py's 256-function call graph, each stack taken from the
program's own frame-pointer chain as kestrel's runtime takes it; 4 threads, 10%
waiting samples. Wall seconds, and CPU seconds (user + system) beside them: every
process here is single-threaded, so on a shared machine its CPU time is the better
estimate of its wall time alone.

| what | median wall (s) | median CPU (s) | peak RSS (MiB) | goal |
| --- | ---: | ---: | ---: | --- |
| all five exports in one process (read, symbolize, aggregate, write each; what \`record\` does after the run) | $all_s | $all_cpu | $(printf %.0f "$all_mib") | < 3 s, < 500 MiB |
$(for f in speedscope cpuprofile folded summary pprof; do
  printf '| `kestrel export --format %s` (one process: read, symbolize, aggregate, write) | %s | %s | %.0f | |\n' \
    "$f" "$(col "export_$f" 1)" "$(col "export_$f" 3)" "$(awk "BEGIN{print $(col "export_$f" 2)/1024}")"
done)

Phases of the in-process run, last round (\`phase wall_s cpu_s\`):
\`$(sed 's/ [a-z_]*=.*//' "$B/phases.txt" | tr '\n' ';' | sed 's/;$//; s/;/; /g')\`

Symbolizing the profile's $n_addr unique addresses (return addresses − 1, inlined
calls expanded, all three; kestrel reads them as a raw profile of one-frame stacks,
\`$B/sym.raw.json\`, the peers as a list on stdin):

| symbolizer | median wall (s) | median CPU (s) | kestrel's speed relative to it (CPU) |
| --- | ---: | ---: | ---: |
| kestrel (libdw): its symbolize phase, in process | $sym_k | $sym_kc | |
| kestrel: the whole process (\`export_bench symbolize\`: start, read the JSON, symbolize) | $symp_s | $symp_c | |
| \`llvm-symbolizer --obj=BIN < addrs\` (whole process) | $llvm_s | $llvm_c | $(ratio "$llvm_c" "$sym_kc")x (goal ≥ 5x) |
| \`addr2line -i -f -e BIN < addrs\` (whole process) | $a2l_s | $a2l_c | $(ratio "$a2l_c" "$sym_kc")x |

Peer: \`perf report --stdio\` on a perf.data of the same program (\`perf record -F 4000
-g\`, 20 s, 2 threads: $perf_samples samples): median $(col perf_report 1) s wall,
$(col perf_report 3) s CPU, peak RSS
$(awk "BEGIN{printf \"%.0f\", $(col perf_report 2)/1024}") MiB.
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

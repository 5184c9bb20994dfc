#!/usr/bin/env bash
# Runs one libFuzzer target over its committed seed corpus for a bounded time.
#   run_fuzz.sh TARGET SEED_DIR SECONDS [DICT]
# New inputs go to a scratch directory, never into the committed corpus; a crash,
# leak or timeout fails with the reproducer kept under build/fuzz/artifacts/.
# FUZZ_SEED (default 1, so `make test` runs the same inputs each time; 0 = random).
set -euo pipefail
target=$1 seeds=$2 secs=$3 dict=${4:-}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p build/fuzz/artifacts
args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536
      -artifact_prefix=build/fuzz/artifacts/"$(basename "$target")"- -print_final_stats=1 -seed="${FUZZ_SEED:-1}")
[ -n "$dict" ] && args+=(-dict="$dict")
n=$(find "$seeds" -type f | wc -l)
[ "$n" -gt 0 ] || { echo "no seed inputs in $seeds" >&2; exit 1; }
echo "$(basename "$target"): $n seeds, ${secs}s"
exec "$target" "${args[@]}" "$scratch" "$seeds"

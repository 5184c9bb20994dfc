#!/bin/sh
# What one short process pays for the runtime: 300 runs of /bin/true unprofiled and
# under each runtime given (LD_PRELOAD, KESTREL_PROFILE into a fresh folder), rounds
# interleaved; prints the CPU seconds (user + system of every process and thread) of
# each round, per variant. Usage: bench/tree/short_process.sh ROUNDS LIB...
rounds=$1; shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
loop='for i in $(seq 300); do /bin/true; done'
for r in $(seq "$rounds"); do
  /usr/bin/time -f "unprofiled %U %S" sh -c "$loop"
  for lib in "$@"; do
    rm -rf "$out/r"; mkdir "$out/r"
    /usr/bin/time -f "$lib %U %S" env LD_PRELOAD="$lib" KESTREL_PROFILE="$out/r/%p.raw.json" \
      sh -c "$loop"
  done
done 2>&1 | awk '{c[$1] = c[$1] sprintf(" %.2f", $2 + $3)} END {for (k in c) print k ":" c[k]}'

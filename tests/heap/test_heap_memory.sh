#!/usr/bin/env bash
# The profiler's memory at its limits: bench/heap_work's `stacks` workload samples
# 70,000 allocations from as many distinct stacks (28 frames each) at a 64 KiB
# interval, which fills the stack-word table; the peak RSS of that run, encoding its
# profile at exit included, is at most 16 MiB above the same run unprofiled (GNU
# time's maximum resident set: the largest of three profiled runs against the
# smallest of three unprofiled), and the file's
# comments show the table full and the rest counted in (other stacks).
. "$(dirname "$0")/lib.sh"
WORK=$PWD/build/bench/heap_work
[ -x "$WORK" ] || { echo "FAIL: $WORK not built"; exit 1; }

peaks() { # env... : the peak RSS (KiB) of three runs, sorted
    for r in 1 2 3; do
        /usr/bin/time -f %M -o "$T/time" env "$@" "$WORK" stacks 70000 >/dev/null || bad "run failed: $*"
        cat "$T/time"
    done | sort -n
}
plain=$(peaks X=1 | head -1)
prof=$(peaks LD_PRELOAD="$LIB" KESTREL_HEAP="$T/lim.pb.gz" KESTREL_HEAP_INTERVAL=65536 | tail -1)
echo "peak RSS: $prof KiB profiled, $plain KiB not: the profiler $(((prof - plain) / 1024)) MiB"
[ $((prof - plain)) -le $((16 * 1024)) ] || bad "the profiler took $((prof - plain)) KiB at its limits"

raw=$(go tool pprof -raw "$T/lim.pb.gz" 2>&1) || bad "pprof: $raw"
comment=$(grep '^Comment: stacks=' <<<"$raw")
echo "$comment"
words=$(sed -n 's/.*stack_words=\([0-9]*\)\/\([0-9]*\).*/\1 \2/p' <<<"$comment")
read -r used limit <<<"$words"
[ -n "$limit" ] && [ $((limit - used)) -lt 28 ] || bad "stack words not at their limit: $comment"
other=$(grep -o 'other_stacks_objects=[0-9]*' <<<"$raw" | cut -d= -f2)
[ "${other:-0}" -gt 0 ] || bad "nothing went to (other stacks): $(grep '^Comment' <<<"$raw")"

echo "$fails failed"
[ $fails = 0 ]

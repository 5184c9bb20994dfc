#!/usr/bin/env bash
# The profiler in front of another allocator: jemalloc preloaded behind libkestrel.so
# (RTLD_NEXT finds jemalloc's malloc), running the contract and in-use tests again.
set -u
cd "$(dirname "$0")/../.."
JE=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -1)
[ -n "$JE" ] || { echo "libjemalloc.so.2 not installed (scripts/deps.sh installs it)"; exit 1; }
rc=0
for t in test_heap_contract test_heap_inuse; do
    LD_PRELOAD="$PWD/build/lib/libkestrel.so $JE" KESTREL_TEST_NEXT_JEMALLOC=1 \
        "build/tests/heap/$t" || { echo "FAIL: $t with jemalloc next"; rc=1; }
done
exit $rc

#!/usr/bin/env bash
# The profiler in front of another allocator: jemalloc, then tcmalloc (gperftools'
# tcmalloc_minimal), preloaded behind libkestrel.so so that RTLD_NEXT finds their
# malloc. The contract and in-use tests run again with each: every interposed
# function keeps its contract over that allocator, an ordinary block is that
# allocator's (jemalloc's sallocx, tcmalloc's MallocExtension_GetOwnership answer
# for it), and the in-use figures are right.
set -u
cd "$(dirname "$0")/../.."
lib() { ls /usr/lib/x86_64-linux-gnu/"$1" /usr/lib/*/"$1" 2>/dev/null | head -1; }
rc=0
for next in jemalloc:libjemalloc.so.2 tcmalloc:libtcmalloc_minimal.so.4; do
    name=${next%%:*} so=$(lib "${next#*:}")
    [ -n "$so" ] || { echo "FAIL: ${next#*:} not installed (scripts/deps.sh installs it)"; rc=1; continue; }
    for t in test_heap_contract test_heap_inuse; do
        echo "== $t with $name next ($so)"
        LD_PRELOAD="$PWD/build/lib/libkestrel.so $so" KESTREL_TEST_NEXT=$name \
            "build/tests/heap/$t" || { echo "FAIL: $t with $name next"; rc=1; }
    done
done
exit $rc

# Sourced by the heap profiler's shell tests: run from the repository root, a
# temporary directory $T removed at exit, bad() to count a failure, the profiled
# program $PROG and its build id, the runtime $LIB and CLI $K, and check_file.
set -u
cd "$(dirname "$0")/../.."
K=$PWD/build/bin/kestrel
LIB=$PWD/build/lib/libkestrel.so
PROG=$PWD/build/tests/heap/prog_heap
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
BUILD_ID=$(readelf -n "$PROG" | awk '/Build ID/ {print $3}')
[ -n "$BUILD_ID" ] || bad "no build id in $PROG"

# A file go tool pprof reads, with the four types (inuse_space the default), the
# period, and the program's mapping with its build id.
check_file() { # file period what
    local f=$1 period=$2 what=$3 raw
    [ -s "$f" ] || { bad "$what: no file $f"; return; }
    raw=$(go tool pprof -raw "$f" 2>&1) || { bad "$what: pprof: $raw"; return; }
    grep -q 'alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]' <<<"$raw" ||
        bad "$what: sample types: $(head -5 <<<"$raw")"
    grep -qx "Period: $period" <<<"$raw" || bad "$what: period"
    grep -qE "^ *[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $PROG $BUILD_ID" <<<"$raw" ||
        bad "$what: no mapping of $PROG with build id $BUILD_ID"
    grep -q 'thread:\[prog_heap\]' <<<"$raw" || bad "$what: no thread label"
}

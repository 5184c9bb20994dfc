# Sourced by the heap profiler's shell tests: run from the repository root, a
# temporary directory $T removed at exit, bad() to count a failure, the profiled
# program $PROG and its build id, and the runtime $LIB and CLI $K.
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

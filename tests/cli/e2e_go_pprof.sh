#!/usr/bin/env bash
# kestrel reads another tool's pprof: a CPU and a heap profile written by Go's own
# runtime/pprof (tests/cli/go/main.go, built with Debian's golang-go), symbolized by Go,
# reported by kestrel and kestrel-san with Go's function names, files and lines.
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-go-XXXXXX)
trap 'rm -rf "$t"' EXIT
check() { local what=$1; shift; if "$@"; then :; else echo "FAIL: $what"; fail=1; fi; }

GO111MODULE=off GOCACHE="$t/cache" GOPATH="$t/gopath" go build -o "$t/prog" tests/cli/go/main.go ||
  { echo "FAIL: go build"; exit 1; }
"$t/prog" "$t/cpu.pb.gz" "$t/heap.pb.gz" || { echo "FAIL: the Go program"; exit 1; }
go_inuse=$(go tool pprof -sample_index=inuse_space -top -unit=B "$t/heap.pb.gz" 2>/dev/null |
  sed -n 's/.* of \([0-9]*\)B total.*/\1/p' | awk '{ printf "%.1f", $1 / 1048576 }')
check "go tool pprof reads the heap profile's total ($go_inuse MiB)" test -n "$go_inuse"
for k in build/bin/kestrel build/bin/kestrel-san; do
  "$k" report "$t/cpu.pb.gz" >"$t/cpu" 2>"$t/err"; rc=$?
  check "$k cpu report exits 0 ($rc): $(head -c 200 "$t/err")" test $rc -eq 0
  # Go's CPU profile: samples/count and cpu/nanoseconds; the default is the last.
  check "$k cpu: ranked by cpu" grep -qE "samples · cpu [0-9.]+ ms" "$t/cpu"
  check "$k cpu: main.burn at main.go" grep -qE " main\.burn +main\.go:[0-9]+" "$t/cpu"
  check "$k cpu: main.main" grep -qE " main\.main +main\.go:[0-9]+" "$t/cpu"
  "$k" report "$t/heap.pb.gz" >"$t/heap" 2>"$t/err"; rc=$?
  check "$k heap report exits 0 ($rc)" test $rc -eq 0
  # Go's own in-use figure for the 16 MiB held moves from run to run (go tool pprof
  # read 13.7 to 16.0 MiB here), so kestrel's is checked against what go
  # tool pprof reads from the same file.
  check "$k heap: inuse_space by default, $go_inuse MiB as go tool pprof reads it" \
    grep -q "inuse_space $go_inuse MiB" "$t/heap"
  check "$k heap: keepBlocks holds it" grep -qE " (99\.[0-9]|100\.0)% .* main\.keepBlocks +main\.go:[0-9]+" "$t/heap"
  "$k" report --sample-type alloc_objects "$t/heap.pb.gz" >"$t/objs" 2>&1
  check "$k heap: alloc_objects" grep -q "alloc_objects" "$t/objs"
  "$k" export --format folded "$t/heap.pb.gz" >"$t/folded" 2>&1
  check "$k heap folded" grep -q "main.main;main.keepBlocks " "$t/folded"
done
exit $fail

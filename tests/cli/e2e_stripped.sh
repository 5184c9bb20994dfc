#!/usr/bin/env bash
# Frames of a stripped program: each named prog+0x<its function's start> from
# .eh_frame (the addresses nm gives the unstripped build), one row per function, the
# same names in two runs, and one warning line with the share, the reason and the
# fix. With MiniDebugInfo (.gnu_debugdata), a debug file under /usr/lib/debug/.build-id/
# and through a local debuginfod serving a directory: real names, and lines where the
# debug file has them.
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-stripped-XXXXXX)
dfd_pid=
installed=
cleanup() {
  [ -n "$dfd_pid" ] && kill "$dfd_pid" 2>/dev/null
  [ -n "$installed" ] && rm -f "$installed"
  rm -rf "$t"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fail=1; fi
}
K=build/bin/kestrel
CC=clang; command -v clang >/dev/null || CC=cc

# The debug build, and the program stripped of every symbol (.eh_frame stays: it is
# needed to unwind). The debug files live elsewhere, so that nothing beside the
# program names it.
mkdir -p "$t/bin" "$t/debug"
check "build" $CC -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -Wl,--build-id \
  -o "$t/debug/prog.full" tests/cli/names/stripped.c
objcopy --strip-all "$t/debug/prog.full" "$t/bin/prog"
check "stripped: no symbols" test -z "$(nm "$t/bin/prog" 2>/dev/null)"
start_of() { printf 'prog+0x%x' "0x$(nm "$t/debug/prog.full" | awk -v f="$1" '$3 == f {print $1}')"; }
mix=$(start_of mix) scan=$(start_of scan) main=$(start_of main)
mix_re=${mix/+/\\+} scan_re=${scan/+/\\+} # as regular expressions

names_of() { # the prog+0x names of a folded file, sorted, one a line
  tr ';' '\n' <"$1" | sed 's/ [0-9]*$//' | grep '^prog+0x' | sort -u
}
for run in 1 2; do
  out=$($K record --report=/dev/stdout -o "$t/run$run" -- "$t/bin/prog" 60 2>"$t/run$run.err")
  check "run $run: record exits 0" test $? -eq 0
  check "run $run: mix is $mix" grep -qE "^█.* $mix_re +prog$" <<<"$out"
  check "run $run: scan is $scan" grep -qE " $scan_re +prog$" <<<"$out"
  check "run $run: every frame of prog is a function's start" \
    test "$(names_of "$t/run$run.folded" | tr '\n' ' ')" = "$(printf '%s\n' "$main" "$mix" "$scan" | sort | tr '\n' ' ')"
  check "run $run: one row per function" test "$(grep -c ' prog+0x' <<<"$out")" -eq 3
  check "run $run: one warning line with share, reason and fix" \
    grep -qE '^kestrel: warning: [0-9.]+% of (running )?samples have frames without a name: [0-9.]+% in images without symbols or debug info \(prog [0-9.]+%\): install their debug files' "$t/run$run.err"
  check "run $run: one warning line" test "$(grep -c 'without a name' "$t/run$run.err")" -eq 1
done
check "the same names in both runs" cmp -s <(names_of "$t/run1.folded") <(names_of "$t/run2.folded")
raw=$(ls "$t"/run1.raw/*.raw.json)

# A stub of the PLT is named after the function it jumps to, as objdump names it
# (from .rela.plt and .dynsym, which stripping keeps): a sample placed in printf's.
plt=$(objdump -d "$t/bin/prog" | awk '/<printf@plt>:/ {print $1; exit}')
check "objdump finds printf@plt" test -n "$plt"
python3 - "$raw" "$t/plt.json" "$plt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
im = next(i for i in d["images"] if i["path"].endswith("/prog"))
d["stacks"].append([im["slide"] + int(sys.argv[3], 16) + 4])
if "stack_ends" in d:  # one per stack: this one reached its end
    d["stack_ends"].append(0)
d["samples"] = [[0, 0, len(d["stacks"]) - 1, 0, 0]] * 100
json.dump(d, open(sys.argv[2], "w"))
PY
out=$($K report "$t/plt.json" 2>&1)
check "the PLT stub named printf@plt" grep -qE "^█.* printf@plt +prog$" <<<"$out"
# The same under AddressSanitizer and UBSan: .eh_frame_hdr, .rela.plt and the
# symbol tables are read from files kestrel does not trust.
out=$(build/bin/kestrel-san report "$t/plt.json" 2>&1)
check "kestrel-san: printf@plt" grep -qE "^█.* printf@plt +prog$" <<<"$out"
out=$(build/bin/kestrel-san report "$raw" 2>&1)
check "kestrel-san: mix is $mix" grep -qE "^█.* $mix_re +prog$" <<<"$out"

# MiniDebugInfo: the function symbols, xz-compressed in .gnu_debugdata (as Fedora
# ships its programs).
nm "$t/debug/prog.full" --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ {print $1}' >"$t/keep"
objcopy --only-keep-debug "$t/debug/prog.full" "$t/mini"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$t/keep" \
  "$t/mini" "$t/mini.min"
xz "$t/mini.min"
cp "$t/bin/prog" "$t/bin/prog.mdi"
objcopy --add-section .gnu_debugdata="$t/mini.min.xz" "$t/bin/prog.mdi"
out=$($K record --report=/dev/stdout -o "$t/mdi" -- "$t/bin/prog.mdi" 30 2>"$t/mdi.err")
check "minidebuginfo: mix named" grep -qE "^█.* mix +prog\.mdi$" <<<"$out"
check "minidebuginfo: scan named" grep -qE " scan +prog\.mdi$" <<<"$out"

# A debug file under /usr/lib/debug/.build-id/ (where Debian's -dbgsym packages put
# theirs): names and lines for the first run's profile.
objcopy --only-keep-debug "$t/debug/prog.full" "$t/debug/prog.debug"
bid=$(readelf -n "$t/bin/prog" | awk '/Build ID/ {print $3}')
check "the program has a build id" test -n "$bid"
out=$($K report "$raw" 2>&1)
check "before the debug file: unnamed" grep -q " $mix " <<<"$out"
mkdir -p "/usr/lib/debug/.build-id/${bid:0:2}"
installed="/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug"
cp "$t/debug/prog.debug" "$installed"
out=$($K report "$raw" 2>&1)
check "build-id tree: mix at its line" grep -qE "^█.* mix +stripped\.c:[0-9]+$" <<<"$out"
check "build-id tree: scan at its line" grep -qE " scan +stripped\.c:[0-9]+$" <<<"$out"
check "build-id tree: no warning" bash -c '! grep -q "without a name" <<<"$1"' _ "$out"
rm -f "$installed"; installed=

# The same debug file from a debuginfod server on this machine, serving a directory.
mkdir -p "$t/served"
cp "$t/debug/prog.debug" "$t/served/"
port=$((20000 + RANDOM % 20000))
debuginfod -F "$t/served" -p $port -d "$t/dfd.sqlite" -t 0 -g 0 >"$t/dfd.log" 2>&1 &
dfd_pid=$!
for _ in $(seq 100); do # until it has scanned the directory
  curl -sf "http://127.0.0.1:$port/buildid/$bid/debuginfo" -o /dev/null && break
  sleep 0.1
done
out=$(DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH="$t/cache" $K report "$raw" 2>&1)
check "debuginfod: mix at its line" grep -qE "^█.* mix +stripped\.c:[0-9]+$" <<<"$out"
check "debuginfod: scan at its line" grep -qE " scan +stripped\.c:[0-9]+$" <<<"$out"
check "debuginfod: the file came from the server" test -n "$(find "$t/cache" -name debuginfo 2>/dev/null)"
out=$(DEBUGINFOD_URLS= $K report "$raw" 2>&1)
check "without DEBUGINFOD_URLS: unnamed" grep -q " $mix " <<<"$out"

[ $fail -eq 0 ] && echo "stripped: all checks passed"
exit $fail

#!/usr/bin/env bash
# Code the dynamic loader does not report, named: the vdso (its bytes recorded by the
# runtime), a program's text mapped a second time from its file at an offset and a
# JIT's code in anonymous memory named by /tmp/perf-PID.map (tests/cli/names/remap.c).
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-unreported-XXXXXX)
maps=()
cleanup() { rm -rf "$t"; rm -f "${maps[@]}"; }
trap cleanup EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fail=1; fi
}
K=build/bin/kestrel
CC=clang; command -v clang >/dev/null || CC=cc
raw_of() { ls "$t/$1".raw/*.raw.json | head -1; }
perf_map_of() { echo "/tmp/perf-$(basename "$(raw_of "$1")" | sed 's/^\([0-9]*\)\.raw\.json$/\1/').map"; }

# ---- the vdso ----------------------------------------------------------------------
check "build vdso" $CC -O2 -g -o "$t/vdso" tests/cli/names/vdso.c
out=$($K record --report=/dev/stdout -o "$t/vdso" -- "$t/vdso" 4000000 2>"$t/vdso.err")
check "vdso: record exits 0" test $? -eq 0
check "vdso: the raw file carries its bytes" python3 - "$(raw_of vdso)" <<'PY'
import base64, json, sys
sys.path.insert(0, "tests"); from rawjson import load
d = load(sys.argv[1])
v = [im for im in d["images"] if im["path"] == "linux-vdso.so.1"]
elf = base64.b64decode(v[0]["elf"]) if v and "elf" in v[0] else b""
sys.exit(0 if elf[:4] == b"\x7fELF" and len(elf) < 64 * 1024 else 1)
PY
# The hot row is the vdso's clock_gettime (__vdso_clock_gettime, or its alias).
check "vdso: its function named" grep -qE "^█.* (__vdso_)?clock_gettime +linux-vdso\.so\.1" <<<"$out"
check "vdso: no raw address of it" bash -c '! grep -q "linux-vdso.so.1+0x" <<<"$1"' _ "$out"

# ---- a remapped text and anonymous JIT code ---------------------------------------
check "build remap" $CC -O2 -g -fno-omit-frame-pointer -fno-stack-protector -o "$t/remap" \
  tests/cli/names/remap.c
out=$($K record --report=/dev/stdout -o "$t/remap" -- "$t/remap" 150000000 2>"$t/remap.err")
check "remap: record exits 0" test $? -eq 0
maps+=("$(perf_map_of remap)")
check "remap: the mappings are images of the raw file" python3 - "$(raw_of remap)" <<'PY'
import json, sys
sys.path.insert(0, "tests"); from rawjson import load
d = load(sys.argv[1])
m = [im for im in d["images"] if im.get("source") == "maps"]
filed = [im for im in m if im["path"].endswith("/remap") and im["offset"] > 0 and im.get("build_id")]
anon = [im for im in m if im["path"] == ""]
sys.exit(0 if filed and anon and d.get("perf_map") else 1)
PY
check "remap: the remapped text named from the file" grep -qE "^█.* spin +remap\.c:[0-9]+" <<<"$out"
check "remap: the JIT code named from the perf map" grep -qE "^█.* jit_spin +\[jit\]" <<<"$out"
check "remap: nothing left unnamed" bash -c '! grep -qE " 0x[0-9a-f]+ " <<<"$1"' _ "$out"
# The same under AddressSanitizer and UBSan (the vdso's bytes, the perf map).
for name in vdso remap; do
  build/bin/kestrel-san report "$(raw_of $name)" >"$t/$name.san" 2>&1
  check "kestrel-san: $name report exits 0" test $? -eq 0
done
check "kestrel-san: the vdso's function" grep -qE "^█.* (__vdso_)?clock_gettime +linux-vdso" "$t/vdso.san"
check "kestrel-san: jit_spin and spin" grep -q " jit_spin " "$t/remap.san"
# A perf map written after the run is another process's (pids are reused): not used.
touch -d '+1 hour' "$(perf_map_of remap)"
out=$($K report "$(raw_of remap)" 2>&1)
check "remap: a perf map newer than the run is not trusted" grep -q "was written after the run ended" <<<"$out"
check "remap: ...and names nothing" bash -c '! grep -q jit_spin <<<"$1"' _ "$out"

if [ $fail -ne 0 ]; then
  for f in "$t"/*.err; do echo "--- $f"; cat "$f"; done
fi
[ $fail -eq 0 ] && echo "unreported: all checks passed"
exit $fail

#!/usr/bin/env bash
# The runtime's own C tests (tests/runtime/test_*.c), cross-compiled for aarch64
# against its libkestrel.a and run under qemu-aarch64 with Debian's arm64 libc. Each
# must pass as it does on x86-64.
set -u
cd "$(dirname "$0")/../.."
QEMU=${A64_QEMU:-qemu-aarch64}
SYSROOT=${A64_SYSROOT:-/usr/aarch64-linux-gnu}
fail=0 n=0
for t in tests/runtime/test_*.c; do
  name=$(basename "$t" .c)
  exe=build/aarch64/tests/runtime/$name
  n=$((n + 1))
  if [ ! -x "$exe" ]; then echo "FAIL $name: $exe not built"; fail=$((fail + 1)); continue; fi
  if out=$(KESTREL_TEST_QEMU=$(command -v "$QEMU") KESTREL_TEST_SYSROOT=$SYSROOT "$QEMU" -L "$SYSROOT" "$exe" 2>&1); then
    echo "ok   $name: $(printf '%s\n' "$out" | tail -n 1)"
  else
    echo "FAIL $name:"; printf '%s\n' "$out" | tail -n 20 | sed 's/^/    | /'
    fail=$((fail + 1))
  fi
done
echo "$n aarch64 runtime tests, $fail failed"
[ "$n" -gt 0 ] && [ "$fail" -eq 0 ]

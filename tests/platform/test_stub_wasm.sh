#!/usr/bin/env bash
# The Wasm stub (make stub-wasm) run under Node's WASI (tests/platform/wasi_run.mjs):
# libkestrel.a defines exactly kestrel.h's functions; tests/platform/stub_program.c
# linked against it checks every function's inactive value, and with or without the
# KESTREL_* variables set prints and writes byte for byte what the same program built
# without kestrel does, under WASI and natively.
. "$(dirname "$0")/lib.sh"
WASM=$PLAT/wasm

check_symbols build/wasm/lib/libkestrel.a "$(llvm-nm -g --defined-only build/wasm/lib/libkestrel.a |
    awk 'NF == 3 {print $3}')"

RUN=(node --no-warnings "$PWD/tests/platform/wasi_run.mjs")
run_case plain -- "${RUN[@]}" "$WASM/stub_program_plain.wasm"
same_as plain native
run_case stub -- "${RUN[@]}" "$WASM/stub_program.wasm"
same_as stub plain
run_case stub-env "${KESTREL_ENV[@]}" -- "${RUN[@]}" "$WASM/stub_program.wasm"
same_as stub-env plain
finish "the Wasm stub under Node's WASI: $(wc -w <<<"$API") functions"

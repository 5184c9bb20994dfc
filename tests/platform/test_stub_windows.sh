#!/usr/bin/env bash
# The Windows stub (make stub-windows) run under wine: libkestrel.dll exports exactly
# kestrel.h's functions and libkestrel.a defines them; tests/platform/stub_program.c
# linked against the DLL and against the static library checks every function's
# inactive value, and with or without the KESTREL_* variables set prints and writes
# byte for byte what the same program built without kestrel does under wine, which is
# (line ends aside) what the native build prints.
#
# wine runs in a prefix of its own, made once per machine ($KESTREL_WINEPREFIX, by
# default ~/.cache/kestrel/wine-prefix: about 700 MB; its first start takes seconds,
# bounded here at 300 s), with WINEDEBUG=-all so wine prints nothing of its own.
. "$(dirname "$0")/lib.sh"
WIN=$PLAT/windows
OBJDUMP=x86_64-w64-mingw32-objdump

check_symbols build/windows/bin/libkestrel.dll "$($OBJDUMP -p build/windows/bin/libkestrel.dll |
    sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' | awk '/^\t\[/ {print $NF}')"
check_symbols build/windows/lib/libkestrel.a "$(x86_64-w64-mingw32-nm -g --defined-only \
    build/windows/lib/libkestrel.a | awk 'NF == 3 {print $3}')"
$OBJDUMP -p "$WIN/stub_program_dll.exe" | grep -q 'DLL Name: libkestrel.dll' ||
    bad "stub_program_dll.exe does not import libkestrel.dll"
$OBJDUMP -p "$WIN/stub_program_static.exe" | grep -q 'DLL Name: libkestrel.dll' &&
    bad "stub_program_static.exe imports libkestrel.dll"

WINE=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
WINESERVER=$(command -v wineserver || echo "$(dirname "$(readlink -f "$WINE")")/wineserver")
export WINEPREFIX=${KESTREL_WINEPREFIX:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/kestrel/wine-prefix}
export WINEDEBUG=-all WINEDLLOVERRIDES='mscoree,mshtml=' # no Mono or Gecko to offer
mkdir -p "$(dirname "$WINEPREFIX")"
# One maker at a time; a prefix without the mark (a first start cut short) is made again.
start=$(date +%s)
flock "$WINEPREFIX.lock" bash -c '
    [ -e "$WINEPREFIX/.kestrel-ready" ] && exit 0
    rm -rf "$WINEPREFIX"
    timeout 300 "$1" wineboot --init && timeout 60 "$2" -w && touch "$WINEPREFIX/.kestrel-ready"
' - "$WINE" "$WINESERVER" >"$T/wineboot.log" 2>&1 ||
    { bad "wine could not make its prefix $WINEPREFIX:" "$(tail -5 "$T/wineboot.log")"; finish windows; }
echo "wine prefix $WINEPREFIX ready after $(($(date +%s) - start)) s"

run_case plain -- "$WINE" "$WIN/stub_program_plain.exe"
same_as plain native crlf
for build in dll static; do
    run_case "$build" -- "$WINE" "$WIN/stub_program_$build.exe"
    same_as "$build" plain
    run_case "$build-env" "${KESTREL_ENV[@]}" -- "$WINE" "$WIN/stub_program_$build.exe"
    same_as "$build-env" plain
done
finish "the Windows stub under wine: $(wc -w <<<"$API") functions, DLL and static"

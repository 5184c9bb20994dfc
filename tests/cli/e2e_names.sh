#!/usr/bin/env bash
# Names as users read them: a Rust program built with cargo under both manglings (v0,
# rustc's default, and legacy), frame pointers forced, reads as rustfilt shows it,
# with no `_R` symbol and no `::h<hash>` left (the raw symbol kept in the pprof's
# system_name); a C++ program with long template names reads apart at 80 and 120
# columns, whole under --wide, and its inlined frames carry qualified names.
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-names-XXXXXX)
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fail=1; fi
}
K=build/bin/kestrel
export PATH="$HOME/.cargo/bin:$PATH"

# ---- Rust ------------------------------------------------------------------------
cp -r tests/cli/names/rust "$t/rust"
: >"$t/empty" # rustc's probe reads its stdin: give it nothing
build_rust() { # build_rust DIR RUSTFLAGS...
  local dir=$1; shift
  (cd "$t/rust" && RUSTC_BOOTSTRAP=1 RUSTFLAGS="-C force-frame-pointers=yes $*" \
     cargo build --release --offline -q --target-dir "$t/$dir" <"$t/empty") 2>"$t/$dir.log"
}
check "cargo builds (v0)" build_rust v0 -C symbol-mangling-version=v0
# Legacy mangling is unstable behind -Z on current rustc; RUSTC_BOOTSTRAP allows it.
check "cargo builds (legacy)" build_rust legacy -Z unstable-options -C symbol-mangling-version=legacy
check "v0 symbols are v0" grep -q '_R.*5names5tally' <(nm "$t/v0/release/names")
check "legacy symbols are legacy" grep -qE '_ZN5names5tally.*17h[0-9a-f]{16}E' <(nm "$t/legacy/release/names")
for m in v0 legacy; do
  out=$($K record --report=/dev/stdout -o "$t/$m" -- "$t/$m/release/names" 60 2>"$t/$m.err")
  check "$m: record exits 0" test $? -eq 0
  check "$m: the trait impl named" grep -qF '<names::Grid<u64> as names::Step>::step' <<<"$out"
  folded=$(cat "$t/$m.folded")
  # A frame of every stack through it (newer rustc inlines all of tally's own code,
  # hashbrown's, so it has no self time and no row of the report's top 10).
  check "$m: the generic function named" grep -qE '(^|;)names::tally(::<u32>)?(;| )' <<<"$folded"
  check "$m: no v0 symbol left" bash -c '! grep -qE "(^|;)_R" <<<"$1"' _ "$folded"
  check "$m: no legacy hash left" bash -c '! grep -qE "::h[0-9a-f]{16}" <<<"$1"' _ "$folded"
  check "$m: no legacy escapes left" bash -c '! grep -qF "\$LT\$" <<<"$1"' _ "$folded"
  check "$m: hashbrown's generics demangled" grep -qF 'hashbrown::' <<<"$folded"
  # pprof keeps the symbol as the object spells it in Function.system_name.
  raw=$(gunzip -c "$t/$m.pb.gz" | strings -n 8)
  if [ $m = v0 ]; then
    check "$m: pprof keeps the v0 symbol" grep -qE '_R[A-Za-z0-9_]*5names5tally' <<<"$raw"
  else
    check "$m: pprof keeps the legacy hash" grep -qE '_ZN5names5tally.*17h[0-9a-f]{16}E' <<<"$raw"
  fi
done

# ---- C++ -------------------------------------------------------------------------
check "g++ builds" g++ -O2 -g -fno-omit-frame-pointer -pthread -o "$t/templates" \
  tests/cli/names/templates.cpp
$K record --report="$t/cxx.report" -o "$t/cxx" -- "$t/templates" 4000000 >/dev/null 2>"$t/cxx.err"
check "c++: record exits 0" test $? -eq 0
raw=$(ls "$t"/cxx.raw/*.raw.json)
for cols in 80 120; do
  COLUMNS=$cols $K report "$raw" >"$t/r$cols" 2>&1
  check "c++ at $cols: report exits 0" test $? -eq 0
  # Every line of the table fits, the rows' names are all different, and the hot ones say which
  # method of which class they are.
  check "c++ at $cols: rows fit and read apart" python3 - "$t/r$cols" $cols <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
cols = int(sys.argv[2])
head = next(i for i, l in enumerate(lines) if "FUNCTION" in l)
start = lines[head].index("FUNCTION")
rows = []
for l in lines[head + 1:]:
    if not l.strip():
        break
    rows.append(l)
ok = len(rows) >= 5
for l in [lines[head]] + rows:
    if len(l) > cols:
        print("too wide (%d): %s" % (len(l), l)); ok = False
names = [r[start:].rsplit(" ", 1)[0].strip() for r in rows]
if len(set(names)) != len(names):
    print("names read the same:", names); ok = False
if not any(n.startswith("engine::table<") and "::spin" in n for n in names):
    print("no engine::table<...>::spin row:", names); ok = False
if not any("churn" in n for n in names):
    print("no churn row:", names); ok = False
if any(n.startswith("double ") or n.startswith("long ") for n in names):
    print("a return type is shown:", names); ok = False
sys.exit(0 if ok else 1)
PY
done
$K report --wide "$raw" >"$t/wide" 2>&1
check "c++ --wide: the whole name" grep -qF 'engine::table<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, long, engine::slow_policy>::spin(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, int)' "$t/wide"
# Exports keep whole names; inlined frames are qualified as the demangler would write
# them (GCC gives these no linkage name).
check "c++ export: whole names" grep -qF 'engine::table<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, double, engine::fast_policy>::churn(' "$t/cxx.folded"
check "c++ inlined: the lambda's operator() qualified" grep -qF ';main::{lambda}::operator();' "$t/cxx.folded"
check "c++ inlined: _M_run qualified" grep -qF ';std::thread::_State_impl<std::thread::_Invoker<std::tuple<main(int, char**)::<lambda()> > > >::_M_run;' "$t/cxx.folded"

[ $fail -eq 0 ] && echo "names: all checks passed"
exit $fail

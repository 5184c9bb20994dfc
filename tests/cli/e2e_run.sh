#!/usr/bin/env bash
# kestrel run of C++ and Rust files (the compiler chosen by the file's name, the
# language's own flags variable after kestrel's flags, demangled names in the report
# and the exports), a file of another language refused, and a run ended by a signal
# (an editor's Cancel: SIGTERM to kestrel's process group or to kestrel alone; ^C)
# while it compiles or while the program runs: the compiler or program ends, kestrel
# ends by that signal, and its temporary directory ($TMPDIR/kestrel-run-*) is gone.
# (C files: tests/cli/e2e_record.sh.)
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-run-XXXXXX)
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fail=1; fi
}
k=$PWD/build/bin/kestrel
mkdir "$t/tmp"
export TMPDIR=$t/tmp

# C++: a member of a class template in a namespace, named as C++ spells it.
cat >"$t/acc.cpp" <<'CPP'
#include <cstdio>
#include <vector>
namespace work {
template <typename T> struct Acc {
    T sum{};
    __attribute__((noinline)) void add_all(const std::vector<T> &v) { for (auto x : v) sum += x * 0.5; }
};
}
int main() {
    std::vector<double> v(1000000, 1.5);
    work::Acc<double> a;
    for (int k = 0; k < 300; k++) a.add_all(v);
    std::printf("sum=%.0f\n", a.sum);
}
CPP
out=$(cd "$t" && "$k" run --report=acc.out acc.cpp 2>"$t/acc.err"); rc=$?
check "run acc.cpp exits 0 ($rc): $(head -c 300 "$t/acc.err")" test $rc -eq 0
check "run acc.cpp: the program's output" grep -qx "sum=225000000" <<<"$out"
check "run acc.cpp: exports named after the file" test -s "$t/acc.folded"
check "run acc.cpp: the report names the template member, demangled, at its line" \
  grep -qE " work::Acc<double>::add_all\(…\) +acc\.cpp:6$" "$t/acc.out"
check "run acc.cpp: its share is the most of the run" \
  grep -qE "^[^ ]* +[5-9][0-9]\.[0-9]% .* work::Acc<double>::add_all" "$t/acc.out"
check "run acc.cpp: the folded export has the whole demangled name under main" \
  grep -q ";main;work::Acc<double>::add_all(std::vector<double, std::allocator<double> > const&)" "$t/acc.folded"

# .cc, .cxx and .C are C++ too; $CXXFLAGS reach the compiler after kestrel's flags,
# $CFLAGS do not.
printf '#include <iostream>\nint main() { std::cout << "n=" << N << std::endl; }\n' >"$t/n.cc"
for f in n.cc n.cxx n.C; do
  [ "$f" = n.cc ] || cp "$t/n.cc" "$t/$f"
  out=$(cd "$t" && CXXFLAGS="-DN=42  -O1" "$k" run -o "$t/n" "$f" 2>"$t/n.err")
  check "run $f: \$CXXFLAGS define N ($(head -c 300 "$t/n.err"))" grep -qx "n=42" <<<"$out"
done
(cd "$t" && CFLAGS=-DN=42 CXXFLAGS= "$k" run -o "$t/n" n.cc >/dev/null 2>"$t/n.err"); rc=$?
check "run n.cc: \$CFLAGS are not C++'s ($rc)" test $rc -eq 1
check "run n.cc: ... and it says the compilation failed" grep -q "kestrel: n.cc: compilation failed" "$t/n.err"
# $CXX names the compiler.
(cd "$t" && CXX=/nonexistent/c++ "$k" run -o "$t/n" n.cc >/dev/null 2>"$t/n.err"); rc=$?
check "run n.cc with a missing \$CXX fails ($rc)" test $rc -eq 1
check "... naming it" grep -q "kestrel: /nonexistent/c++: No such file or directory" "$t/n.err"

# Rust: rustc, the function named crate::function, $RUSTFLAGS after kestrel's flags.
if command -v rustc >/dev/null; then
  cat >"$t/spin.rs" <<'RS'
#[inline(never)]
fn hot_loop(n: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..n { s = s.wrapping_add(i ^ (s >> 3)); }
    s
}
fn main() {
    let mut t = 0u64;
    for _ in 0..20 { t = t.wrapping_add(hot_loop(std::hint::black_box(30_000_000))); }
    #[cfg(kestrel_flag)]
    println!("flag");
    println!("t={}", t % 1000);
}
RS
  out=$(cd "$t" && RUSTFLAGS="--cfg kestrel_flag" "$k" run --report=spin.out spin.rs 2>"$t/spin.err"); rc=$?
  check "run spin.rs exits 0 ($rc): $(head -c 300 "$t/spin.err")" test $rc -eq 0
  check "run spin.rs: \$RUSTFLAGS reach rustc" grep -qx "flag" <<<"$out"
  check "run spin.rs: exports named after the file" test -s "$t/spin.folded"
  check "run spin.rs: the report names spin::hot_loop at spin.rs" grep -qE " spin::hot_loop +spin\.rs:[0-9]+$" "$t/spin.out"
  check "run spin.rs: with debug info, no legacy hash in the names" bash -c '! grep -q "::h[0-9a-f]\{16\}" "$1"' _ "$t/spin.folded"
else
  echo "FAIL: rustc is not on PATH (scripts/deps.sh)"; fail=1
fi

# Another language: a usage error.
printf 'print(1)\n' >"$t/x.py"
"$k" run "$t/x.py" >/dev/null 2>"$t/err"; rc=$?
check "run x.py is a usage error ($rc)" test $rc -eq 2
check "... that says what run takes" grep -q "x.py is not a C, C++ or Rust file (.c, .cc, .cpp, .cxx, .C, .rs)" "$t/err"
check "nothing was left in \$TMPDIR by the runs: $(ls -A "$t/tmp")" test -z "$(ls -A "$t/tmp")"

# Ended by a signal. WHERE: compile (a compiler that sleeps), clang (clang++ itself,
# with its own temporary files) or program (one that does not end); HOW: group
# (SIGTERM to kestrel's process group, as the editor's Cancel does), alone (SIGTERM to
# kestrel only), int (SIGINT to the group, as ^C).
printf 'int main(void)\n{\n    for (volatile unsigned long i = 0;; i++) {\n    }\n}\n' >"$t/endless.c"
printf '#include <bits/stdc++.h>\n#include <regex>\nint main() { std::regex r("a+b*"); return std::regex_match("aab", r) ? 0 : 1; }\n' >"$t/heavy.cpp"
printf '#!/bin/sh\nexec sleep 300.125\n' >"$t/slowcc"
chmod +x "$t/slowcc"
running() { pgrep -f "$1" >/dev/null; }
not_running() { ! pgrep -f "$1" >/dev/null; }
ended() { # ended WHERE HOW
  local where=$1 how=$2 cc=clang src=endless.c pattern kpid sig want
  # Whole command lines, so that no compiler is taken for the program, nor another
  # compiler on the machine for this one.
  case $where in
    compile) cc=$t/slowcc pattern="^sleep 300\.125$" ;;
    clang) src=heavy.cpp pattern=" -cc1 .*$t/tmp/" ;;
    program) pattern="^$t/tmp/kestrel-run-[^ /]*/endless$" ;;
  esac
  case $how in int) sig=INT want=130 ;; *) sig=TERM want=143 ;; esac
  rm -rf "$t/tmp"/* "$t/out"
  mkdir "$t/out"
  (cd "$t" && CC=$cc exec setsid "$k" run -o "$t/out/endless" "$src" >/dev/null 2>"$t/sig.err") &
  kpid=$!
  local i
  for i in $(seq 300); do running "$pattern" && break; sleep 0.1; done
  check "$where/$how: it runs" running "$pattern"
  # The program has taken samples before it is ended (its report is checked below):
  # a program ended as soon as it exists has none yet.
  [ "$where" = program ] && sleep 1
  check "$where/$how: its temporary directory is there" test -n "$(ls -A "$t/tmp")"
  # setsid made kestrel a process group of its own.
  if [ "$how" = alone ]; then kill -TERM "$kpid"; else kill -"$sig" -- -"$kpid"; fi
  local rc=0
  wait "$kpid" || rc=$?
  check "$where/$how: kestrel ends by SIG$sig ($rc, want $want): $(head -c 300 "$t/sig.err")" test $rc -eq $want
  check "$where/$how: the $where ended" not_running "$pattern"
  check "$where/$how: nothing is left in \$TMPDIR: $(ls -A "$t/tmp")" test -z "$(ls -A "$t/tmp")"
  [ "$where" = program ] ||
    check "$where/$how: no compilation-failed line for a run cut short" bash -c '! grep -q "compilation failed" "$1"' _ "$t/sig.err"
}
ended clang group
for where in compile program; do
  for how in group alone int; do
    ended "$where" "$how"
  done
done
# ^C reaches the program alone while it runs (as in a shell): it ends by SIGINT,
# leaving its profile, and kestrel reports it and ends by SIGINT too.
check "the program ended by ^C still has its report" grep -qE " main +endless\.c:3$" "$t/sig.err"
exit $fail

#!/usr/bin/env bash
# A process of a recorded tree that the runtime cannot enter leaves no profile, and the
# report of `kestrel record` lists it with its name and the reason: a shell runs a
# statically linked child (gcc -static), a set-user-ID one (owned by another user; run
# as root only) and a dynamic one. The static and set-user-ID children are listed, by
# pid, with why and what to do instead; the dynamic child is not (it left a profile);
# kestrel exits with the tree's status. A tree of dynamic programs alone lists nothing.
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-unprofiled-XXXXXX)
chmod 755 "$t"
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL: $what"; fail=1; fi
}
k=$PWD/build/bin/kestrel
printf '#include <stdio.h>\nint main(void) { volatile unsigned long x = 0;\n  for (unsigned long i = 0; i < 30000000; i++) x += i;\n  printf("%%lu\\n", x); return 0; }\n' >"$t/work.c"
gcc -static -O1 -o "$t/static_child" "$t/work.c" || exit 1
gcc -O1 -o "$t/dynamic_child" "$t/work.c" || exit 1
cp "$t/dynamic_child" "$t/setuid_child"
setuid=0
if [ "$(id -u)" = 0 ] && chown nobody "$t/setuid_child" && chmod 4755 "$t/setuid_child"; then
  setuid=1
fi
cmd="'$t/static_child'; '$t/dynamic_child'"
[ $setuid = 1 ] && cmd="$cmd; '$t/setuid_child'"
"$k" record -o "$t/tree" --report="$t/report.txt" -- bash -c "$cmd; exit 5" >/dev/null 2>"$t/err"; rc=$?
check "kestrel exits 5 as the tree did ($rc)" test $rc -eq 5
want=$((1 + setuid))
check "the report lists $want process(es) that left no profile" \
  grep -q "^processes that left no profile ($want):" "$t/report.txt"
check "the static child, by name and pid, with the reason" \
  grep -Eq "^  static_child \(pid [0-9]+\): statically linked: the runtime cannot enter it; \`kestrel record --attach -- PROGRAM\` \(or -p PID\) samples it from outside$" "$t/report.txt"
if [ $setuid = 1 ]; then
  check "the set-user-ID child, with the reason" \
    grep -Eq "^  setuid_child \(pid [0-9]+\): set-user-ID or set-group-ID: the loader ignores preloading there" "$t/report.txt"
fi
check "the dynamic child is not listed: it left a profile" \
  bash -c '! grep -q "dynamic_child (pid" "$1"' _ "$t/report.txt"
# The listed pid is the one the shell's fork left a profile for before its exec.
pid=$(sed -n 's/^  static_child (pid \([0-9]*\)).*/\1/p' "$t/report.txt")
check "the static child's pid ($pid) wrote the profile of its image before the exec" \
  test -f "$t/tree.raw/$pid.raw.json.exec0"
# Dynamic programs alone: nothing to list.
"$k" record -o "$t/dyn" --report="$t/dyn.txt" -- bash -c "'$t/dynamic_child'; '$t/dynamic_child'" \
  >/dev/null 2>"$t/dyn.err"; rc=$?
check "dynamic tree: exit 0 ($rc)" test $rc -eq 0
check "dynamic tree: no process listed as unprofiled" \
  bash -c '! grep -q "left no profile" "$1"' _ "$t/dyn.txt"
exit $fail

#!/usr/bin/env bash
# The Debian package (make deb) on this machine, for real: lintian finds no error;
# `apt-get install ./kestrel_*.deb` installs it with its dependencies; the installed
# kestrel records `ls` and the demo, its manual agrees with its --help, its runtime
# links through pkg-config, its bash completion completes; `apt-get remove` then
# `purge` leave no file behind (every path under /usr, /etc and dpkg's database
# before the install is compared with after, leaving out what another package owns:
# other apt runs on the machine). Needs root; the package is purged whatever happens,
# and a lock keeps two runs of this test on one machine apart (apt-get waits for
# dpkg's own lock when another install runs). The rest of the suite
# uses build/bin/kestrel and never the installed one.
set -euo pipefail
cd "$(dirname "$0")/../.."
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (it installs the package)"
debs=(build/deb/kestrel_*.deb)
[ ${#debs[@]} = 1 ] && [ -f "${debs[0]}" ] || fail "want one build/deb/kestrel_*.deb (make deb), found: ${debs[*]}"
deb=$(realpath "${debs[0]}")
tmp=$(mktemp -d)
export DEBIAN_FRONTEND=noninteractive

exec 9>/var/lock/kestrel-test-deb.lock
flock -w 300 9 || fail "another run of this test holds /var/lock/kestrel-test-deb.lock"
if dpkg-query -W -f '${Status}' kestrel 2>/dev/null | grep -q 'installed'; then
  fail "a kestrel package is installed already; this test installs and purges its own"
fi
installed=0
cleanup() {
  if [ $installed = 1 ]; then
    apt-get -o DPkg::Lock::Timeout=300 purge -y -qq kestrel >/dev/null 2>&1 || dpkg --purge kestrel >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

echo "== lintian"
lintian --fail-on error "$deb" 2>&1 | grep -v 'not recommended' || true
lintian --fail-on error "$deb" >/dev/null 2>&1 || fail "lintian reports errors"

snapshot() {
  find /usr /etc /var/lib/dpkg/info /var/lib/dpkg/triggers -xdev \( -type f -o -type l -o -type d \) 2>/dev/null | sort
}
snapshot > "$tmp/before"

echo "== apt-get install $deb"
installed=1
apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "$deb" > "$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; fail "apt-get install"; }
dpkg-query -W -f '${Status} ${Version}\n' kestrel
[ "$(command -v kestrel)" = /usr/bin/kestrel ] || fail "kestrel is not /usr/bin/kestrel on PATH"
for f in /usr/bin/kestrel /usr/lib/libkestrel.so /usr/lib/libkestrel.a /usr/lib/libkestrel-analysis.a \
         /usr/include/kestrel.h /usr/include/kestrel_analysis.h /usr/lib/pkgconfig/kestrel.pc \
         /usr/lib/pkgconfig/kestrel-analysis.pc /usr/share/man/man1/kestrel.1.gz \
         /usr/share/bash-completion/completions/kestrel /usr/share/doc/kestrel/copyright \
         /usr/share/doc/kestrel/README.md /usr/share/doc/kestrel/cli.md; do
  [ -e "$f" ] || fail "$f not installed"
done
# Every library the binaries need is there (Depends), none "not found".
! ldd /usr/bin/kestrel /usr/lib/libkestrel.so | grep -q 'not found' || fail "ldd: a library is missing"
[ "$(/usr/bin/kestrel --version)" = "$(build/bin/kestrel --version)" ] ||
  fail "installed --version differs from build/bin/kestrel's"

echo "== kestrel record -- ls"
(cd "$tmp" && /usr/bin/kestrel record --report="$tmp/ls.report" -- ls / > "$tmp/ls.out") ||
  fail "kestrel record -- ls exited $?"
grep -qx usr "$tmp/ls.out" || fail "ls's own output is not its stdout"
grep -q 'samples' "$tmp/ls.report" || fail "no report: $(cat "$tmp/ls.report")"
# (ls may take no on-CPU sample: its folded stacks may be empty, but are written.)
for e in speedscope.json cpuprofile folded profile.json pb.gz html; do
  [ -e "$tmp/ls.$e" ] || fail "ls.$e not written"
done

echo "== the demo, installed kestrel"
/usr/bin/kestrel record -o "$tmp/demo" --report="$tmp/demo.report" -- build/examples/demo ||
  fail "kestrel record of the demo"
cat "$tmp/demo.report"
for fn in mix_bytes hash_strings main; do
  grep -q " $fn " "$tmp/demo.report" || grep -q "$fn" "$tmp/demo.folded" || fail "the demo's $fn is not in its profile"
done

echo "== man kestrel"
man -w kestrel | grep -qx /usr/share/man/man1/kestrel.1.gz || fail "man -w kestrel: $(man -w kestrel)"
tests/packaging/check_man.py /usr/bin/kestrel /usr/share/man/man1/kestrel.1.gz
MANWIDTH=100 man kestrel 2>/dev/null | grep -q '^   kestrel record$' || fail "man kestrel shows no kestrel record"

echo "== pkg-config, -lkestrel"
cat > "$tmp/linked.c" <<'C'
#include <kestrel.h>
#include <time.h>
static volatile unsigned long sink;
int main(int argc, char **argv)
{
    (void)argc;
    if (kestrel_profile_start(997) != 0) return 2;
    for (clock_t end = clock() + CLOCKS_PER_SEC / 5; clock() < end;) sink++;
    return kestrel_profile_stop(argv[1]) != 0 ? 3 : 0;
}
C
cc $(pkg-config --cflags kestrel) -o "$tmp/linked" "$tmp/linked.c" $(pkg-config --libs kestrel) ||
  fail "cc with pkg-config kestrel"
readelf -d "$tmp/linked" | grep -q 'NEEDED.*libkestrel.so' || fail "not linked to libkestrel.so"
"$tmp/linked" "$tmp/linked.json" || fail "the program linked with -lkestrel exited $?"
/usr/bin/kestrel report "$tmp/linked.json" > "$tmp/linked.report" 2>&1 || fail "kestrel report of its profile"
grep -q main "$tmp/linked.report" || fail "its profile has no main: $(cat "$tmp/linked.report")"

echo "== bash completion"
got=$(bash -c 'source /usr/share/bash-completion/completions/kestrel
  COMP_WORDS=(kestrel re); COMP_CWORD=1; _kestrel; echo "${COMPREPLY[*]}"
  COMP_WORDS=(kestrel record --he); COMP_CWORD=2; _kestrel; echo "${COMPREPLY[*]}"')
echo "$got"
[ "$(sed -n 1p <<<"$got")" = "record report" ] || fail "completion of 're'"
grep -qw -- '--heap' <<<"$(sed -n 2p <<<"$got")" || fail "completion of 'record --he'"

echo "== apt-get remove, purge"
apt-get -o DPkg::Lock::Timeout=300 remove -y -qq kestrel > "$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; fail "apt-get remove"; }
[ ! -e /usr/bin/kestrel ] && [ ! -e /usr/lib/libkestrel.so ] || fail "files left after apt-get remove"
# With no configuration files nothing is left for purge; it runs if dpkg kept any.
if dpkg-query -W kestrel >/dev/null 2>&1; then
  apt-get -o DPkg::Lock::Timeout=300 purge -y -qq kestrel > "$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; fail "apt-get purge"; }
fi
installed=0
dpkg-query -W kestrel >/dev/null 2>&1 && fail "dpkg still knows kestrel after purge"
snapshot > "$tmp/after"
comm -13 "$tmp/before" "$tmp/after" > "$tmp/added"
left=()
while IFS= read -r p; do
  owner=$(dpkg -S "$p" 2>/dev/null | cut -d: -f1) || owner=
  [ -n "$owner" ] && [ "$owner" != kestrel ] && continue
  left+=("$p")
done < "$tmp/added"
[ ${#left[@]} = 0 ] || fail "left behind after purge: ${left[*]}"
echo "removed: nothing left ($(wc -l < "$tmp/before") paths before, $(wc -l < "$tmp/after") after)"

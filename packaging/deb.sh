#!/bin/sh
# Makes the Debian package from a tree staged by `make install PREFIX=/usr DESTDIR=ROOT`:
# strips the binaries (debug info out, as Debian ships them), compresses the manual,
# adds the copyright and changelog, computes Depends with dpkg-shlibdeps from what
# the binaries link, and builds OUT with dpkg-deb. lintian checks the result when it is
# installed (scripts/deps.sh installs it): any error fails the build.
# usage: packaging/deb.sh ROOT VERSION ARCH OUT
set -eu
root=$1 version=$2 arch=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
maintainer="kestrel maintainers <maintainers@users.noreply.a-seed-5b59705d.example>"

strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/kestrel" \
    "$root/usr/lib/libkestrel.so"
strip --strip-debug --enable-deterministic-archives "$root/usr/lib/libkestrel.a" \
    "$root/usr/lib/libkestrel-analysis.a"
chmod 644 "$root/usr/lib/libkestrel.so"
gzip -9nf "$root/usr/share/man/man1/kestrel.1"

doc=$root/usr/share/doc/kestrel
install -m 644 "$here/copyright" "$doc/copyright"
# A native package's changelog: this version, dated by its commit (or today).
when=$(git -C "$here" log -1 --format=%cD 2>/dev/null || date -R)
printf 'kestrel (%s) unstable; urgency=medium\n\n  * Version %s: %s.\n\n -- %s  %s\n' \
    "$version" "$version" "$(sed -n 's/^#define KESTREL_BUILD "\([^(]*\) (.*$/\1/p' \
    "$here/../build/gen/kestrel_build.h" 2>/dev/null || echo source)" "$maintainer" "$when" |
    gzip -9n > "$doc/changelog.gz"
chmod 644 "$doc/changelog.gz"

# dpkg-shlibdeps wants a source package's debian/control: a minimal one, elsewhere.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debian"
printf 'Source: kestrel\n\nPackage: kestrel\nArchitecture: any\n' > "$work/debian/control"
abs=$(cd "$root" && pwd)
depends=$(cd "$work" && dpkg-shlibdeps -O "$abs/usr/bin/kestrel" "$abs/usr/lib/libkestrel.so" 2>"$work/err" |
          sed -n 's/^shlibs:Depends=//p') || { cat "$work/err" >&2; exit 1; }
[ -n "$depends" ] || { echo "kestrel: dpkg-shlibdeps found no dependencies" >&2; cat "$work/err" >&2; exit 1; }

mkdir -p "$root/DEBIAN"
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
# libkestrel.so is in ld.so's path (programs may link -lkestrel): ldconfig runs after.
echo 'activate-noawait ldconfig' > "$root/DEBIAN/triggers"
chmod 644 "$root/DEBIAN/md5sums" "$root/DEBIAN/triggers"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: kestrel
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Suggests: gcc | clang, libdw-dev, libelf-dev, libjansson-dev, libiberty-dev, zlib1g-dev
Section: devel
Priority: optional
Description: sampling CPU and heap profiler for native Linux programs
 kestrel profiles C, C++ and Rust programs on Linux: where their CPU time,
 waiting time and memory went, each share with its standard error.
 .
 This package holds the kestrel command (record, run, report, export, view,
 diff, calibrate), the runtime libkestrel (preloaded into a program, or
 linked), its header and pkg-config file, the analysis library that reads
 profiles, the manual and the bash completion.
CONTROL

find "$root" -type d -exec chmod 755 {} +
mkdir -p "$(dirname "$out")"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >/dev/null
if command -v lintian >/dev/null 2>&1; then
  if ! lintian --fail-on error --suppress-tags no-manual-page "$out" >"$work/lintian" 2>&1; then
    cat "$work/lintian" >&2
    echo "kestrel: $out: lintian found errors" >&2
    rm -f "$out"
    exit 1
  fi
  cat "$work/lintian" >&2
fi
echo "kestrel: wrote $out" >&2

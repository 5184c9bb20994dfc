#!/usr/bin/env bash
# `kestrel --version` says the Makefile's version and the build: git describe of the
# source and the commit's date, the day built; outside git it says so; a
# SOURCE_DATE_EPOCH build carries that date.
set -euo pipefail
cd "$(dirname "$0")/../.."
fail() { echo "FAIL: $*"; exit 1; }
version=$(sed -n 's/^VERSION *:= *//p' Makefile)
out=$(build/bin/kestrel --version)
echo "$out"
[ "$(sed -n 1p <<<"$out")" = "kestrel $version" ] || fail "first line is not 'kestrel $version'"
build=$(sed -n 's/^build: //p' <<<"$out")
[ -n "$build" ] || fail "no build line"
if git rev-parse --git-dir >/dev/null 2>&1; then
  describe=$(git describe --tags --always --abbrev=12)
  when=$(TZ=UTC git log -1 --format=%cd --date=format-local:'%Y-%m-%d %H:%M UTC')
  [[ $build == "git $describe"*" (committed $when), built "20[0-9][0-9]-[01][0-9]-[0-3][0-9] ]] ||
    fail "build line '$build' is not 'git $describe[-dirty] (committed $when), built DATE'"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Outside a git checkout, and with SOURCE_DATE_EPOCH: the header as the build makes it,
# compiled into version.c with a main that calls it.
mkdir "$tmp/src"
SOURCE_DATE_EPOCH=86400 packaging/build-info.sh 9.8.7 "$tmp/src" > "$tmp/kestrel_build.h"
printf 'int cmd_version(void);\nint main(void) { return cmd_version(); }\n' > "$tmp/main.c"
cc -Isrc -I"$tmp" -o "$tmp/v" src/cli/version.c "$tmp/main.c"
got=$("$tmp/v")
want=$'kestrel 9.8.7\nbuild: not from a git checkout, built 1970-01-02'
[ "$got" = "$want" ] || fail "outside git: '$got', want '$want'"
echo "outside git: $got"

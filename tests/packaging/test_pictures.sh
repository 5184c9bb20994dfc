#!/usr/bin/env bash
# The docs' picture of the viewer is of the viewer as its code is now: it is a PNG,
# the README shows it, and docs/viewer.png.sources, written by `make pictures`
# (scripts/pictures.mjs) beside it, holds the sha256 of every source of the viewer
# that web/ has now, file for file. A change to web/ without `make pictures` fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
fail() { echo "FAIL: $*"; exit 1; }
[ "$(head -c 8 docs/viewer.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "docs/viewer.png is not a PNG"
grep -q '](docs/viewer.png)' README.md || fail "README.md does not show docs/viewer.png"
[ -f docs/viewer.png.sources ] || fail "no docs/viewer.png.sources: run make pictures"
now=$(sha256sum $(ls web/viewer.html web/inline.awk web/*.js web/*.css | LC_ALL=C sort))
if ! diff <(echo "$now") docs/viewer.png.sources; then
  fail "docs/viewer.png is older than the viewer's code (lines above: < web/ now, > when the picture was made); run make pictures"
fi
echo "docs/viewer.png is of the viewer as web/ is now ($(wc -l < docs/viewer.png.sources) files)"

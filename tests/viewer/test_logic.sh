#!/usr/bin/env bash
# The viewer's pure logic (layout, colour ranks, statistics, search, formatting).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec node --test tests/viewer/colors.test.mjs tests/viewer/format.test.mjs \
    tests/viewer/layout.test.mjs tests/viewer/stats.test.mjs tests/viewer/markup.test.mjs

#!/usr/bin/env bash
# The viewer in Debian's chromium (headless, no sandbox, no background networking).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec node --test tests/viewer/browser.test.mjs

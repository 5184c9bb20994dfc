#!/usr/bin/env bash
# Runs bench/viewer.mjs (ROUNDS interleaved rounds, default 5); it needs the npm
# packages of web/ (playwright-core) and tests/consumers/ (speedscope), which
# scripts/deps.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
exec node bench/viewer.mjs "${1:-5}"

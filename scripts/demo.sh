#!/usr/bin/env bash
# `make demo`: profiles an example program with `kestrel record`, prints the report
# and leaves every export under build/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/demo
build/bin/kestrel record -o build/demo/demo -- build/examples/demo
echo
echo "exports:"
ls -1 build/demo/demo.*

#!/usr/bin/env bash
# The extension in a real VS Code: code-server (scripts/code-server.sh installs it once
# into a cache keyed by versions) in Debian's chromium, driven by playwright-core.
set -euo pipefail
cd "$(dirname "$0")/../.."
cs=$(scripts/code-server.sh)
CODE_SERVER_DIR=$cs exec node --test tests/vscode/editor.test.mjs

#!/usr/bin/env bash
# The extension's own logic under node's test runner (editors/vscode/test): profile.json
# to decorations, edits moving the heat, paths, settings, outcomes, the webview page.
# Runs on the build the .vsix was made from (editors/vscode/out).
set -u
cd "$(dirname "$0")/../../editors/vscode"
[ -f out/extension.js ] || { echo "FAIL: editors/vscode/out is not built (make test builds it)"; exit 1; }
exec node --test test/

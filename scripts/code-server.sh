#!/usr/bin/env bash
# Installs code-server (VS Code in the browser, from npm) for the extension's editor
# test, into a cache folder keyed by its version, node's major version and this
# recipe's revision, and prints the folder. Idempotent: a complete install (its
# .complete stamp) is reused as is.
# code-server's own install scripts download prebuilt binaries, which cannot be fetched
# here, so it is installed with --ignore-scripts and its native modules are rebuilt from
# source against Debian's headers; ripgrep is Debian's.
set -euo pipefail
CODE_SERVER_VERSION=4.100.3
node_major=$(node -p 'process.versions.node.split(".")[0]')
cache=${KESTREL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kestrel}
RECIPE=1
dir=$cache/code-server-$CODE_SERVER_VERSION-node$node_major-r$RECIPE
if [ -f "$dir/.complete" ]; then echo "$dir"; exit 0; fi

# Debian's packages it builds against come from scripts/deps.sh (CODE_SERVER_PKGS).
for f in /usr/include/krb5.h /usr/include/X11/extensions/XKBfile.h \
         /usr/include/libsecret-1/libsecret/secret.h /usr/bin/rg /usr/bin/g++; do
  [ -e "$f" ] || { echo "kestrel: code-server needs $f; run scripts/deps.sh" >&2; exit 1; }
done

rm -rf "$dir" && mkdir -p "$dir"
log=$dir/install.log
step() { # step WHAT COMMAND...: runs it with its output in the log, says what failed
  local what=$1; shift
  "$@" >>"$log" 2>&1 || { echo "kestrel: code-server install: $what failed; see $log" >&2; tail -n 15 "$log" >&2; exit 1; }
}
export npm_config_yes=true npm_config_audit=false npm_config_fund=false
cd "$dir"
echo '{"private": true}' > package.json
step "npm install code-server@$CODE_SERVER_VERSION" npm install --ignore-scripts "code-server@$CODE_SERVER_VERSION"
cd node_modules/code-server/lib/vscode
step "npm install of VS Code's modules" npm install --omit=dev --ignore-scripts
step "rebuilding VS Code's native modules" npm rebuild kerberos @vscode/spdlog @vscode/deviceid native-watchdog node-pty
mkdir -p node_modules/@vscode/ripgrep/bin && cp /usr/bin/rg node_modules/@vscode/ripgrep/bin/rg
ln -sfn node_modules node_modules.asar
cd "$dir"
step "rebuilding argon2" env npm_config_build_from_source=true npm rebuild argon2
touch "$dir/.complete"
echo "$dir"

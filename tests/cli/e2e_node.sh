#!/usr/bin/env bash
# node --perf-basic-prof running a JavaScript loop and Array.prototype.sort: the JS
# function named from the /tmp/perf-PID.map node writes, V8's builtins named from
# node's own text, which V8 maps a second time at an offset (the runtime finds that
# mapping in /proc/self/maps while the program runs).
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-node-XXXXXX)
maps=()
cleanup() { rm -rf "$t"; rm -f "${maps[@]}"; }
trap cleanup EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fail=1; fi
}
K=build/bin/kestrel
raw_of() { ls "$t/$1".raw/*.raw.json | head -1; }
perf_map_of() { echo "/tmp/perf-$(basename "$(raw_of "$1")" | sed 's/^\([0-9]*\)\.raw\.json$/\1/').map"; }

# In the temporary directory: node writes its own logs (isolate-*-v8.log) there.
out=$(cd "$t" && "$OLDPWD/$K" record --report=/dev/stdout --state running -o "$t/node" -- node --perf-basic-prof \
  "$OLDPWD/tests/cli/names/loop.js" 2>"$t/node.err")
check "node: record exits 0" test $? -eq 0
maps+=("$(perf_map_of node)")
check "node: the JS function named" grep -qE "^.* JS:\*?loop " <<<"$out"
check "node: with its file and line" grep -qE "(^|;)JS:\*?loop [^;]*/loop\.js:[0-9]+" "$t/node.folded"
# V8's sort builtins run in node's text mapped again at an offset.
check "node: V8 builtins named" grep -qE " Builtins_[A-Za-z]+" <<<"$out"
check "node: the remapped text is an image" python3 - "$(raw_of node)" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
import rawjson
d = rawjson.load(sys.argv[1])
sys.exit(0 if any(im.get("source") == "maps" and im["path"].endswith("/node") and im["offset"] > 0
                  for im in d["images"]) else 1)
PY
check "node: Array.prototype.sort's builtins on the stacks" grep -q "Builtins_ArrayTimSort" "$t/node.folded"

if [ $fail -ne 0 ]; then
  for f in "$t"/*.err; do echo "--- $f"; cat "$f"; done
fi
[ $fail -eq 0 ] && echo "node: all checks passed"
exit $fail

#!/usr/bin/env bash
# Builds Parca (the continuous-profiling server kestrel's scrape endpoints are tested
# against) with the machine's Go, once: the binary is cached under
# ${KESTREL_CACHE:-$HOME/.cache/kestrel}/parca-VERSION/parca, and its path printed.
# Parca's module builds without its web front end (its UI embed has a placeholder).
# `go install …@VERSION` is not used: it asks the module proxy for the module's list
# of versions (to look for a deprecation), which the proxy may refuse; the module
# itself is downloaded and built in place instead. A first build takes many minutes.
set -euo pipefail
version=${PARCA_VERSION:-v0.28.0}
cache=${KESTREL_CACHE:-$HOME/.cache/kestrel}/parca-$version
bin=$cache/parca
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
mkdir -p "$cache"
dir=$(cd "$cache" && GOFLAGS=-mod=mod go mod download -json "github.com/parca-dev/parca@$version" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$dir" ] || { echo "kestrel: parca $version: the module could not be downloaded" >&2; exit 1; }
(cd "$dir" && go build -o "$bin.tmp" ./cmd/parca) >"$cache/build.log" 2>&1 ||
  { echo "kestrel: parca $version: build failed (see $cache/build.log)" >&2; exit 1; }
mv "$bin.tmp" "$bin"
echo "$bin"

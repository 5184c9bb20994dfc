#!/usr/bin/env bash
# kestrel(1) as `make` builds it (build/man/kestrel.1) says what build/bin/kestrel's
# --help texts say, word for word, command by command (check_man.py), and `man`
# shows it.
set -euo pipefail
cd "$(dirname "$0")/../.."
tests/packaging/check_man.py build/bin/kestrel build/man/kestrel.1
out=$(MANWIDTH=100 man -l build/man/kestrel.1 2>&1)
for c in $(build/bin/kestrel --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}'); do
  grep -q "^   kestrel $c\$" <<<"$out" || { echo "man -l: no section kestrel $c"; exit 1; }
done
echo "kestrel(1) agrees with --help"

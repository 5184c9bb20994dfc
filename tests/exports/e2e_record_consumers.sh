#!/usr/bin/env bash
# A real program (examples/demo) recorded by kestrel (the sanitizer build), and every
# export it wrote read by its consumer: speedscope's schema and importers, go tool
# pprof, and the folded lines, all against the numbers of its profile.json
# (tests/consumers/check_record.py).
set -euo pipefail
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
build/bin/kestrel-san record -o "$d/demo" --report="$d/report.txt" -- build/examples/demo >/dev/null
for ext in speedscope.json cpuprofile folded profile.json pb.gz; do
  [ -s "$d/demo.$ext" ] || { echo "record wrote no $d/demo.$ext" >&2; exit 1; }
done
python3 tests/consumers/check_record.py "$d/demo"

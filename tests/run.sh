#!/usr/bin/env bash
# Runs each test given on the command line, one at a time (the profiling tests
# measure timing and must not share two cores with each other). A test is an
# executable: exit 0 passes, anything else fails. Each one gets a time limit
# (KESTREL_TEST_TIMEOUT seconds, default 600) so a hang is a failure, not a stall.
# The last line is "N passed, N failed".
set -u
limit=${KESTREL_TEST_TIMEOUT:-600}
pass=0 fail=0 failed=()
log_dir=build/test-logs
mkdir -p "$log_dir"
for t in "$@"; do
  name=${t#./}
  log="$log_dir/$(echo "$name" | tr '/' '_').log"
  start=$(date +%s.%N)
  timeout --kill-after=10 "$limit" "$t" >"$log" 2>&1
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1)); printf 'PASS %-50s %6ss\n' "$name" "$secs"
  else
    fail=$((fail + 1)); failed+=("$name")
    [ $rc -eq 124 ] && why="timed out after ${limit}s" || why="exit $rc"
    printf 'FAIL %-50s %6ss  (%s)\n' "$name" "$secs" "$why"
    sed 's/^/    | /' "$log" | tail -n 40
  fi
done
[ $fail -gt 0 ] && printf 'failed: %s\n' "${failed[*]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

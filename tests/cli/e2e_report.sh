#!/usr/bin/env bash
# The terminal report as a user sees it, through build/bin/kestrel and kestrel-san:
# the numbers of a profile with known shares, colour on a terminal (red/bold >= 5%,
# yellow >= 0.5%), plain under NO_COLOR and when piped, the low-confidence flag, the
# insignificance mark, --state, and --help / usage errors of every command.
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-report-XXXXXX)
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fail=1; fi
}

# 1000 samples: 900 in 0x1000, 30 in 0x2000 (3%), 2 in 0x3000 (0.2%), 68 in 0x4000
# (6.8%) called from 0x1001; 100 of the 900 waiting. Achieved 990 Hz of
# 997 requested, 2 s wall, 4 walks cut short, 7 dropped.
python3 - "$t/known.json" <<'PY'
import json, sys
samples = []
def add(n, stack, state=0):
    for _ in range(n):
        samples.append([len(samples) * 1000, 0, stack, state, 1000000])
add(800, 0); add(100, 0, 1); add(30, 1); add(2, 2); add(68, 3)
json.dump({"version": 1, "pid": 42, "exe": "/nonexistent/known", "rate_hz": 990,
           "requested_hz": 997, "start_unix_ns": 1, "end_unix_ns": 2000000001,
           "walks_cut_short": 4, "images": [], "engine": "signal",
           "engine_fallback": "perf_event_open: EACCES",
           "threads": [{"fiber": 0, "label": "main"}],
           "stacks": [[0x1000], [0x2000], [0x3000], [0x4000, 0x1001]],
           "samples": samples, "dropped": 7}, open(sys.argv[1], "w"))
PY
# How whole the stacks are: 1000 samples, 300 of them (30%) on a stack whose walk was
# cut (stack_ends 11 and 12) ending in /nonexistent/app (250) or in no image (50); the same
# with 5 cut (0.5%, below the threshold), and with none.
python3 - "$t" <<'PY'
import json, sys
def doc(cut_app, cut_none):
    samples = [[i * 1000, 0, 0, 0, 1000000] for i in range(1000 - cut_app - cut_none)]
    samples += [[0, 0, 1, 0, 1000000]] * cut_app + [[0, 0, 2, 0, 1000000]] * cut_none
    return {"version": 1, "pid": 3, "exe": "/nonexistent/app", "rate_hz": 997,
            "start_unix_ns": 1, "end_unix_ns": 1000000001, "engine": "perf",
            "images": [{"path": "/nonexistent/app", "base": 0x400000, "slide": 0,
                        "text": 0x401000, "text_size": 0x1000, "arch": "x86_64"}],
            "threads": [{"fiber": 0, "label": "main"}],
            "stacks": [[0x401100, 0x401200], [0x401300], [0x9000]],
            "stack_ends": [1, 11, 12], "samples": samples, "dropped": 0}
for name, a, b in (("cut", 250, 50), ("fewcut", 5, 0), ("whole", 0, 0)):
    json.dump(doc(a, b), open(sys.argv[1] + "/" + name + ".json", "w"))
PY
python3 - "$t/few.json" <<'PY'
import json, sys
json.dump({"version": 1, "pid": 1, "exe": "/x", "rate_hz": 997, "start_unix_ns": 0,
           "end_unix_ns": 0, "images": [], "threads": [{"fiber": 0, "label": "main"}],
           "stacks": [[0x10]], "samples": [[0, 0, 0, 0]] * 50, "dropped": 0},
          open(sys.argv[1], "w"))
PY

for k in build/bin/kestrel build/bin/kestrel-san; do
  out=$("$k" report --state all "$t/known.json" 2>"$t/err"); rc=$?
  check "$k report exits 0 ($rc)" test $rc -eq 0
  check "$k report: no stderr" test ! -s "$t/err"
  # Piped: no escape sequences at all.
  check "$k report piped is plain" bash -c '! grep -q $'"'"'\033'"'"' <<<"$1"' _ "$out"
  # Achieved: 900 running samples over the 1.00 s of CPU time of every sample (the
  # waiting ones carry CPU time too: the signal engine's sample that found its thread
  # off-CPU carries the CPU time since the one before).
  check "$k header" grep -q "1000 samples · 997 Hz requested, 900.0 Hz achieved (signal engine) · 1 thread" <<<"$out"
  check "$k wall" grep -q "wall 2.00 s" <<<"$out"
  check "$k CPU" grep -q "CPU 1.00 s" <<<"$out"
  check "$k split" grep -q "running 90.0% ±0.9 · waiting 10.0% ±0.9" <<<"$out"
  check "$k columns" grep -qE "SELF% +±SE +TOTAL% +SELF +TOTAL +FUNCTION +LOCATION" <<<"$out"
  check "$k no calls column" bash -c '! grep -qi calls <<<"$1"' _ "$out"
  # 0x1000: self 90.0% ± sqrt(.9*.1/1000) = 0.9, its bar 0.9 * 64 eighths = 7 cells + 2/8.
  check "$k top row" grep -qE "^███████▎ +90\.0% +0\.9 +90\.0% +900 +900 +0x1000 " <<<"$out"
  check "$k 6.8% row" grep -qE " 6\.8% +0\.8 +6\.8% +68 +68 +0x4000 " <<<"$out"
  check "$k 0.2% row marked ~" grep -qE " 0\.2% +0\.1 +0\.2% +2 +2 +0x3000 .* ~$" <<<"$out"
  check "$k 3% row not marked" grep -qE " 3\.0% +0\.5 +3\.0% +30 +30 +0x2000 +\?$" <<<"$out"
  check "$k insignificance legend" grep -q "two standard errors" <<<"$out"
  check "$k not low confidence" bash -c '! grep -q "low confidence" <<<"$1"' _ "$out"
  check "$k engine" grep -q "Hz achieved (signal engine)" <<<"$out"
  check "$k engine fallback noted" grep -q "note: engine: perf_event_open: EACCES" <<<"$out"
  check "$k dropped" grep -q "  7 samples dropped" <<<"$out"
  # A file that counts cut walks but not which stacks: said so, never "0 cut".
  check "$k cut walks not recorded per stack" grep -q "4 stack walks were cut short; which stacks, this profile does not record" <<<"$out"
  out=$("$k" report "$t/cut.json")
  # 300 of 1000: 30.0% ± sqrt(.3*.7/1000) = 1.4.
  check "$k incomplete stacks share" grep -q "incomplete stacks: 30.0% ±1.4 of samples (under \[incomplete stack\]); walks end early in app (25.0%), (no image) (5.0%)" <<<"$out"
  check "$k [incomplete stack] in the table" grep -qE " 0\.0% +0\.0 +30\.0% +0 +300 +\[incomplete stack\]" <<<"$out"
  check "$k no frame-pointer claim without the file" bash -c '! grep -q "frame pointers" <<<"$1"' _ "$out"
  out=$("$k" report "$t/fewcut.json")
  check "$k silent below the threshold" bash -c '! grep -qE "incomplete stacks|record" <<<"$1"' _ "$out"
  out=$("$k" report "$t/whole.json")
  check "$k silent when every walk reached the root" bash -c '! grep -qE "incomplete|walks|record" <<<"$1"' _ "$out"

  # On a terminal: colour by self share.
  script -qec "$k report --state all $t/known.json" /dev/null >"$t/tty" 2>&1
  check "$k tty red/bold at 90%" grep -qa $'\033\[1;31m 90.0%' "$t/tty"
  check "$k tty red/bold at 6.8%" grep -qa $'\033\[1;31m  6.8%' "$t/tty"
  check "$k tty yellow at 3%" grep -qa $'\033\[33m  3.0%' "$t/tty"
  check "$k tty plain at 0.2%" grep -qa $'  0.2%' "$t/tty"
  check "$k tty 0.2% uncoloured" bash -c '! grep -qa $'"'"'\033\[[0-9;]*m  0.2%'"'"' "$1"' _ "$t/tty"
  NO_COLOR=1 script -qec "$k report --state all $t/known.json" /dev/null >"$t/nocolor" 2>&1
  check "$k NO_COLOR on a tty is plain" bash -c '! grep -qa $'"'"'\033\['"'"' "$1"' _ "$t/nocolor"
  check "$k NO_COLOR still reports" grep -qa "90.0%" "$t/nocolor"

  # The symbolizer's progress line: on a terminal once it takes long (here: at once),
  # never when stderr is not a terminal, not at all for a quick run.
  KESTREL_PROGRESS_DELAY_MS=0 script -qec "$k report $t/known.json" /dev/null >"$t/tty" 2>&1
  check "$k progress line on a tty" grep -qa $'\rkestrel: symbolizing 0/5 addresses\r\033\[K' "$t/tty"
  KESTREL_PROGRESS_DELAY_MS=0 "$k" report "$t/known.json" >/dev/null 2>"$t/err"
  check "$k no progress line when stderr is not a tty" test ! -s "$t/err"
  check "$k no progress line when quick" bash -c '! grep -qa symbolizing "$1"' _ "$t/nocolor"

  out=$("$k" report "$t/few.json")
  check "$k low confidence under 100 samples" grep -q "low confidence: only 50 samples" <<<"$out"

  # --help on every command, usage errors with status 2.
  for c in record run report export; do
    "$k" "$c" --help >"$t/help" 2>&1; rc=$?
    check "$k $c --help exits 0" test $rc -eq 0
    check "$k $c --help prints usage" grep -q "usage: kestrel $c" "$t/help"
  done
  "$k" record --heap-interval=65536 -- true 2>"$t/err"; rc=$?
  check "$k --heap-interval without --heap is a usage error" test $rc -eq 2
  check "$k ... and says so" grep -q "needs --heap" "$t/err"
  "$k" record -F abc -- true 2>"$t/err"; rc=$?
  check "$k -F abc is a usage error" test $rc -eq 2
  "$k" export "$t/known.json" 2>"$t/err"; rc=$?
  check "$k export without --format" test $rc -eq 2
  "$k" export --format nosuch "$t/known.json" 2>"$t/err"; rc=$?
  check "$k export --format nosuch" test $rc -eq 2 -a -n "$(grep 'unknown format' "$t/err")"
  "$k" report --sample-type nosuch "$t/known.json" 2>"$t/err"; rc=$?
  check "$k unknown sample type" test $rc -eq 1 -a -n "$(grep 'no sample type "nosuch" (it has: samples cpu)' "$t/err")"
  out=$("$k" report --state all --sample-type cpu "$t/known.json")
  check "$k --sample-type cpu" grep -qE "90\.0% +0\.9 +90\.0% +900\.0 ms" <<<"$out"
  # --state: the table of one state's samples; the split stays of every sample, and
  # running (the default) is the report without the option.
  out=$("$k" report --state running "$t/known.json")
  check "$k --state running header" grep -q "1000 samples · 997 Hz" <<<"$out"
  check "$k --state running split" grep -q "running 90.0% ±0.9 · waiting 10.0% ±0.9" <<<"$out"
  check "$k --state running says so" grep -q "the table below counts the running (on-CPU) samples only: 900 of 1000" <<<"$out"
  # 800 of 900: 88.9% ± sqrt(.889*.111/900) = 1.0; bar 56.9 eighths -> 7 cells + 1/8.
  check "$k --state running top row" grep -qE "^███████▏ +88\.9% +1\.0 +88\.9% +800 +800 +0x1000 " <<<"$out"
  check "$k --state running 7.6% row" grep -qE " 7\.6% +0\.9 +7\.6% +68 +68 +0x4000 " <<<"$out"
  out=$("$k" report --state waiting "$t/known.json")
  check "$k --state waiting says so" grep -q "the table below counts the waiting (off-CPU) samples only: 100 of 1000" <<<"$out"
  check "$k --state waiting top row" grep -qE "^████████ +100\.0% +0\.0 +100\.0% +100 +100 +0x1000 " <<<"$out"
  check "$k --state waiting has no running-only function" bash -c '! grep -q 0x4000 <<<"$1"' _ "$out"
  check "$k --state running is the default report" \
    bash -c 'diff <("$1" report --state running "$2") <("$1" report "$2")' _ "$k" "$t/known.json"
  check "$k --state all counts every state" \
    bash -c '! "$1" report --state all "$2" | grep -q "table below counts"' _ "$k" "$t/known.json"
  "$k" report --state sleeping "$t/known.json" 2>"$t/err"; rc=$?
  check "$k --state sleeping is a usage error" test $rc -eq 2 -a -n "$(grep 'running, waiting or all' "$t/err")"
  "$k" record --state sleeping -- true 2>"$t/err"; rc=$?
  check "$k record --state sleeping is a usage error" test $rc -eq 2 -a -n "$(grep 'running, waiting or all' "$t/err")"
  "$k" nosuch 2>"$t/err"; rc=$?
  check "$k unknown command" test $rc -eq 2
done
exit $fail

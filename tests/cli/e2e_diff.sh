#!/usr/bin/env bash
# kestrel diff as a user runs it: the false-positive rate its correction promises
# (pairs of profiles with the same shares), a known change found with its size, real
# runs of a workload whose one function's work changed, the folded and pprof forms
# read back (go tool pprof), and bad input.
set -u
cd "$(dirname "$0")/../.."
K=build/bin/kestrel
PROG=build/tests/cli/prog_diffwork
LIB=build/lib/libkestrel.so
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-diff-XXXXXX)
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
reals() { grep -cE ' real {3}' "$1"; } # rows whose verdict is real

# Synthetic raw profiles: N samples drawn from fixed shares over seven functions
# (addresses 0x1000.., one caller 0x100), a fixed seed so the run is repeatable.
python3 - "$t" <<'PY'
import json, random, sys
out = sys.argv[1]
rng = random.Random(20261201)
def profile(path, shares, n):
    addrs = [0x1000 * (i + 1) for i in range(len(shares))]
    picks = rng.choices(range(len(shares)), weights=shares, k=n)
    json.dump({"version": 1, "pid": 1, "exe": "/nonexistent/w", "rate_hz": 997,
               "start_unix_ns": 1, "end_unix_ns": 2000000001, "images": [],
               "threads": [{"fiber": 0, "label": "main"}],
               "stacks": [[a, 0x100] for a in addrs],
               "samples": [[i * 1000, 0, j, 0, 1000000] for i, j in enumerate(picks)],
               "dropped": 0}, open(path, "w"))
same = [0.40, 0.25, 0.15, 0.10, 0.05, 0.03, 0.02]
for k in range(200):
    profile(f"{out}/same{k}a.json", same, 2000)
    profile(f"{out}/same{k}b.json", same, 2000)
# 0x1000: 60% -> 57%, 0x2000: 10% -> 13%, 0x3000: 30% unchanged.
profile(f"{out}/known_base.json", [0.60, 0.10, 0.30], 20000)
profile(f"{out}/known_new.json", [0.57, 0.13, 0.30], 20000)
PY

# 1. The same shares: the correction promises at most 5% of pairs with any `real`.
# Out of 200 pairs that is 10 expected at worst; more than 20 would happen by chance
# with probability 0.2% (binomial), so it means the correction does not hold.
# Without a correction (each of ~15 tests at 5%) about half the pairs would fail.
fp=0
for k in $(seq 0 199); do
  $K diff "$t/same${k}a.json" "$t/same${k}b.json" > "$t/same.txt" 2>&1 || { echo "FAIL: diff exits 0"; fail=1; break; }
  [ "$(reals "$t/same.txt")" -gt 0 ] && fp=$((fp + 1))
done
echo "pairs with the same shares where some function read real: $fp of 200"
check "false-positive pairs within the promised 5% (<= 20 of 200)" test "$fp" -le 20

# 2. A known change: 0x2000 +3 points and 0x1000 -3 are real, 0x3000 is noise, and
# each Δ is within 2 standard errors of the truth.
$K diff "$t/known_base.json" "$t/known_new.json" > "$t/known.txt" 2>&1
row() { awk -v f="$2" '$0 ~ /^SELF/ {s=1} $0 ~ /^TOTAL/ {s=0} s && $NF == f' "$1"; }
se_row() { row "$1" "$2" | tr -d '%'; }
check_known() { # FUNCTION TRUTH VERDICT
  local r; r=$(se_row "$t/known.txt" "$1")
  echo "$r" | awk -v truth="$2" -v want="$3" '{
    se = sqrt($2 * $2 + $4 * $4); d = $5
    exit !($7 == want && d - truth <= 2 * se && truth - d <= 2 * se) }'
}
check "known change: 0x2000 +3 pts real, within 2 SE" check_known 0x2000 3 real
check "known change: 0x1000 -3 pts real, within 2 SE" check_known 0x1000 -3 real
check "known change: 0x3000 unchanged is noise" check_known 0x3000 0 noise

# 3. Real runs at 4999 Hz: work_b does 100 ms of 1000 in BASE and 140 of 1040 in NEW
# (10.0% -> 13.5% of the work). Its total share moves +3.5 points: real, within 2
# SE. Compared as CPU time (--absolute), work_a and work_c did the same work: noise.
run() { KESTREL_PROFILE="$t/$1.json" KESTREL_PROFILE_HZ=4999 LD_PRELOAD=$LIB $PROG "$2" "$3" "$4"; }
run base 600 100 300 && run new 600 140 300 && run again 600 100 300
$K diff "$t/base.json" "$t/new.json" > "$t/real.txt" 2>&1
trow() { awk -v f="$2" '$0 ~ /^TOTAL/ {s=1} s && $NF == f' "$1" | tr -d '%'; }
trow "$t/real.txt" work_b | awk '{se = sqrt($2*$2 + $4*$4); exit !($7 == "real" && $5 - 3.46 <= 2*se && 3.46 - $5 <= 2*se)}'
check "real runs: work_b's total +3.5 pts is real, within 2 SE" test $? -eq 0
$K diff --absolute -n 100 "$t/base.json" "$t/new.json" > "$t/abs.txt" 2>&1
check "--absolute: work_b real" sh -c "awk '/^TOTAL/ {s=1} s && \$NF == \"work_b\"' $t/abs.txt | grep -qE ' real {3}'"
check "--absolute: work_a and work_c noise" sh -c "awk '/^TOTAL/ {s=1} s && (\$NF == \"work_a\" || \$NF == \"work_c\")' $t/abs.txt | grep -cE ' noise' | grep -qx 2"
# Two runs of the same work: the ground-truth functions (whose shares are fixed by
# construction in CPU time) are noise. How the work splits between burn_cpu_us's loop
# and the clock reads inside it is not fixed: it moves with the machine's load.
$K diff -n 100 "$t/base.json" "$t/again.json" > "$t/again.txt" 2>&1
check "real runs of the same work: work_a, work_b and work_c noise" sh -c "awk '/^TOTAL/ {s=1} s && \$NF ~ /^work_[abc]\$/' $t/again.txt | grep -cE ' noise' | grep -qx 3"
[ $fail -ne 0 ] && cat "$t/real.txt" "$t/abs.txt" "$t/again.txt"

# 4. The folded form: `stack BASE NEW`, columns summing to each profile's samples.
$K diff --format folded "$t/known_base.json" "$t/known_new.json" > "$t/d.folded"
check "folded: three columns on every line" awk 'NF != 3 {exit 1}' "$t/d.folded"
check "folded: the columns hold 20000 samples each" awk '{a += $2; b += $3} END {exit !(a == 20000 && b == 20000)}' "$t/d.folded"
check "folded: the stack of 0x2000" grep -qE '^0x100;0x2000 [0-9]+ [0-9]+$' "$t/d.folded"

# 5. The pprof form, read by go tool pprof: NEW minus BASE per function.
$K diff --format pprof -o "$t/d.pb.gz" "$t/known_base.json" "$t/known_new.json"
go tool pprof -raw "$t/d.pb.gz" > "$t/d.raw" 2>&1
check "pprof: go tool pprof reads it" grep -q '^Samples:' "$t/d.raw"
# The samples whose leaf is 0x2000 sum to NEW - BASE (go 1.26's pprof -raw lists NEW's
# sample and BASE's negated one apart; older versions merged them).
want=$(awk '$1 ~ /;0x2000$/ {print $3 - $2}' "$t/d.folded")
loc=$(awk '/^Locations/ {l=1; next} l && $2 == "0x2000" {sub(":", "", $1); print $1}' "$t/d.raw")
got=$(awk -v loc="$loc" '/^Samples:/ {s=1; next} /^Locations/ {s=0} s && $3 == loc {n++; v += $1} END {if (n) print v}' "$t/d.raw")
check "pprof: the count at 0x2000 is NEW - BASE ($got = $want)" test -n "$got" -a "$got" = "$want"

# 6. The JSON form: every function with both sides, the verdicts of the table.
$K diff --format json -o "$t/d.json" "$t/known_base.json" "$t/known_new.json"
check "json: 0x2000 real with +3 pts within 2 SE, 0x3000 noise" python3 - "$t/d.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
f = {x["name"]: x for x in d["functions"]}
b, c = f["0x2000"]["self"], f["0x3000"]["self"]
se = math.hypot(b["base_se"], b["new_se"])
sys.exit(not (b["real"] and abs(b["new"] - b["base"] - 0.03) <= 2 * se and not c["real"]
              and d["alpha"] == 0.05 and d["tests"] > 0))
PY

# 7. Bad input: one line, non-zero.
check "a missing file is an error" sh -c "! $K diff $t/nope.json $t/known_new.json 2>$t/e1 && grep -q 'kestrel: ' $t/e1"
python3 -c "import json; json.dump({'version':1,'pid':1,'exe':'/x','rate_hz':997,'start_unix_ns':0,'end_unix_ns':0,'images':[],'threads':[{'fiber':0,'label':'main'}],'stacks':[],'samples':[],'dropped':0}, open('$t/empty.json','w'))"
check "an empty profile is an error" sh -c "! $K diff $t/empty.json $t/known_new.json 2>$t/e2 && grep -q 'no samples' $t/e2"
KESTREL_HEAP="$t/heap.pb.gz" LD_PRELOAD=$LIB $PROG 10 10 10
check "CPU against heap is an error" sh -c "! $K diff $t/known_base.json $t/heap.pb.gz 2>$t/e3 && grep -q 'cannot be compared' $t/e3"
check "one profile is a usage error" sh -c "$K diff $t/known_base.json 2>/dev/null; test \$? -eq 2"
exit $fail

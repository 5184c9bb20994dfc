#!/usr/bin/env bash
# On-CPU by default, waiting marked wherever it is exported. A program alternates
# work() (CPU only) and nap() (some CPU, then a sleep) and measures each function's
# CPU and wall time itself. The default exports count running samples: nap's share of
# the folded stacks is its CPU share within two standard errors. --state all counts
# every sample: the same running ones and nap's sleep at the rate (so nap's share is
# its wall share where running samples are CPU time x rate), each waiting one marked — a
# [waiting] leaf in folded, waiting profiles of their own in speedscope (schema-valid),
# (idle) in the cpuprofile (read by speedscope's Chrome importer), a state label in
# pprof (-tagfocus=state=waiting), running and waiting in the viewer's data. The
# report keeps the split and says where the program waited.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
k=$root/build/bin/kestrel
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-waiting-XXXXXX)
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fail=1; fi
}

cat >"$t/nap.c" <<'EOF'
#include <stdio.h>
#include <time.h>
volatile unsigned long sink;
static unsigned long long now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
static void burn_ms(unsigned ms)
{
    unsigned long long end = now(CLOCK_THREAD_CPUTIME_ID) + ms * 1000000ull;
    while (now(CLOCK_THREAD_CPUTIME_ID) < end)
        for (int i = 0; i < 1000; i++)
            sink += i ^ (sink >> 3);
}
static unsigned long long cpu[2], wall[2], asleep;
__attribute__((noinline)) void work(void) { burn_ms(40); }
__attribute__((noinline)) void nap(void)
{
    burn_ms(20);
    struct timespec ts = {0, 40000000};
    unsigned long long w = now(CLOCK_MONOTONIC);
    nanosleep(&ts, NULL);
    asleep += now(CLOCK_MONOTONIC) - w;
}
static void timed(void (*fn)(void), int k)
{
    unsigned long long c = now(CLOCK_THREAD_CPUTIME_ID), w = now(CLOCK_MONOTONIC);
    fn();
    cpu[k] += now(CLOCK_THREAD_CPUTIME_ID) - c;
    wall[k] += now(CLOCK_MONOTONIC) - w;
}
int main(void)
{
    for (int i = 0; i < 40; i++) {
        timed(work, 0);
        timed(nap, 1);
    }
    fprintf(stderr, "truth %llu %llu %llu %llu %llu\n", cpu[0], cpu[1], wall[0], wall[1], asleep);
    return 0;
}
EOF
cc -O2 -g -fno-omit-frame-pointer -o "$t/nap" "$t/nap.c"

# Under SCHED_FIFO where allowed: a thread preempted by other work on the machine is
# neither running nor asleep, and its wall time would be no truth for either engine.
fifo=
if chrt -f 10 true 2>/dev/null; then fifo="chrt -f 10"; else echo "SCHED_FIFO not allowed: shares depend on the machine's load"; fi

for engine in perf signal; do
  s="$t/$engine"
  "$k" record --engine "$engine" -o "$s" --report="$s.report" -- $fifo "$t/nap" 2>"$s.err"; rc=$?
  check "$engine: record exits 0 ($rc)" test $rc -eq 0
  truth=$(grep '^truth ' "$s.err")
  "$k" export --state all --format folded -o "$s.all.folded" "$s.raw"
  # nap's share of the running samples against its CPU share, within two standard
  # errors of the binomial; --state all adds the waiting samples, nap's, one per
  # period it slept at the rate the raw file states (997 Hz asked; the signal
  # engine's is at most the kernel's tick rate): the waiting grid, within one per sleep
  # and 3%. So nap's share
  # of every sample is its wall share where the running samples are CPU time x rate
  # (an idle machine; a loaded virtual machine's perf clock counts time the host stole,
  # which the program's own clocks cannot see, so its wall time is no truth there).
  check "$engine: nap's shares ($truth)" python3 - "$s.folded" "$s.all.folded" "$truth" "$s.raw" <<'PY'
import glob, json, math, sys
def shares(path, waiting=None):
    nap = total = 0
    for line in open(path):
        stack, n = line.rsplit(" ", 1)
        if waiting is not None and stack.endswith(";[waiting]") != waiting:
            continue
        total += int(n)
        if ";nap;" in stack + ";" or stack.endswith(";nap"):
            nap += int(n)
    return nap, total
_, cw, cn, ww, wn, slept = sys.argv[3].split()
cpu_share = int(cn) / (int(cw) + int(cn))
wall_share = int(wn) / (int(ww) + int(wn))
ok = True
nap, total = shares(sys.argv[1])
se = math.sqrt(cpu_share * (1 - cpu_share) / total)
print(f"running: CPU share {cpu_share:.3f}, folded {nap / total:.3f} ({nap}/{total}), 2 SE {2 * se:.3f}")
ok &= abs(nap / total - cpu_share) <= 2 * se
ok &= shares(sys.argv[2], False) == (nap, total) # --state all: the same running samples
wnap, wtotal = shares(sys.argv[2], True)
sys.path.insert(0, "tests"); from rawjson import load
hz = load(glob.glob(sys.argv[4] + "/*.raw.json")[0])["rate_hz"]
want = int(slept) * hz / 1e9
print(f"waiting: {wtotal} samples, {wnap} in nap, slept {int(slept) / 1e6:.0f} ms x {hz} Hz = {want:.0f}")
# Elsewhere only the odd moment the machine preempted it even so (off-CPU too).
ok &= wtotal - wnap <= max(3, 0.01 * wtotal) and abs(wnap - want) <= 40 + 0.03 * want
anap, atotal = shares(sys.argv[2])
print(f"all: wall share {wall_share:.3f}, folded {anap / atotal:.3f} ({anap}/{atotal})")
sys.exit(0 if ok else 1)
PY
  check "$engine: the default folded has no waiting sample" bash -c '! grep -q "\[waiting\]" "$1"' _ "$s.folded"
  check "$engine: --state all marks the waiting ones" grep -q "nap;.*\[waiting\] [0-9]*$" "$s.all.folded"
  check "$engine: ... and only where they are last" bash -c '! grep -q "\[waiting\];" "$1"' _ "$s.all.folded"
  # The report: the split, the table of running samples, where it waited.
  check "$engine: the report keeps the split" grep -qE "running [0-9.]+% ±[0-9.]+ · waiting [0-9.]+% ±" "$s.report"
  check "$engine: the table counts running samples" grep -q "the table below counts the running (on-CPU) samples only" "$s.report"
  check "$engine: where it waited" grep -qE "^ +[0-9.]+%  .*nanosleep.* ← nap" <(sed -n '/where it waited/,/^$/p' "$s.report")
done

# Every export of --state all, read by its consumer.
s="$t/perf"
"$k" record --state all -o "$t/all" --report="$t/all.report" -- "$t/nap" 2>/dev/null; rc=$?
check "record --state all exits 0 ($rc)" test $rc -eq 0
check "the report of all states has no waiting table of its own" bash -c '! grep -q "where it waited" "$1"' _ "$t/all.report"
check "folded marked" grep -q "\[waiting\] [0-9]*$" "$t/all.folded"
python3 - "$t/all.speedscope.json" <<'PY' || { echo "FAIL: speedscope: waiting profiles of their own"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))
names = [p["name"] for p in d["profiles"]]
assert "main-0" in names and "main-0 [waiting]" in names, names
PY
check "speedscope's schema accepts it" node tests/consumers/speedscope_schema.mjs "$t/all.speedscope.json"
python3 - "$t/all.cpuprofile" "$t/all.raw" <<'PY' || { echo "FAIL: cpuprofile: waiting samples are (idle)"; fail=1; }
import glob, json, sys
cp = json.load(open(sys.argv[1]))
idle = [n for n in cp["nodes"] if n["callFrame"]["functionName"] == "(idle)"]
assert len(idle) == 1, idle
sys.path.insert(0, "tests"); from rawjson import load
raw = load(glob.glob(sys.argv[2] + "/*.raw.json")[0])
waiting = sum(1 for s in raw["samples"] if s[3] == 1)
# every waiting sample, and the one that closes the timeline
assert idle[0]["hitCount"] == waiting + 1, (idle[0]["hitCount"], waiting)
assert cp["samples"].count(idle[0]["id"]) == waiting + 1
PY
# speedscope's Chrome importer takes (idle) as idle time: its weight counted, no frame.
python3 -c '
import json, sys
cp = json.load(open(sys.argv[1]))
json.dump({"unit": "microseconds", "total_weight": sum(cp["timeDeltas"]), "names": ["burn_ms"]},
          open(sys.argv[2], "w"))' "$t/all.cpuprofile" "$t/cp.expect.json"
check "speedscope's Chrome importer reads the cpuprofile with (idle), every sample's weight" \
  node tests/consumers/speedscope_probe.mjs "$t/all.cpuprofile" "$t/cp.expect.json"
w=$(go tool pprof -top -tagfocus=state=waiting "$t/all.pb.gz" 2>&1)
check "pprof: -tagfocus=state=waiting keeps the sleep" grep -q "nanosleep" <<<"$w"
check "pprof: ... and not the work" bash -c '! grep -q " burn_ms$" <<<"$1"' _ "$w"
r=$(go tool pprof -top -tagfocus=state=running "$t/all.pb.gz" 2>&1)
check "pprof: -tagfocus=state=running keeps the work" grep -q " burn_ms$" <<<"$r"
# pprof holds both states even by default.
w=$(go tool pprof -top -tagfocus=state=waiting "$t/perf.pb.gz" 2>&1)
check "pprof of a default record holds the waiting samples too" grep -q "nanosleep" <<<"$w"
python3 - "$t/perf.html" <<'PY' || { echo "FAIL: the viewer's data holds both states"; fail=1; }
import json, re, sys
html = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script id="kestrel-data" type="application/json">(.*?)</script>', html, re.S).group(1))
assert set(d["samples"]["state"]) == {0, 1}, set(d["samples"]["state"])
PY
exit $fail

#!/usr/bin/env bash
# The stacks kestrel shows are the program's own: for the demo under both engines, no
# function of libkestrel (its main wrapper, its thread trampoline, anything it defines
# that libc does not) appears in the report or in any export, and the stacks' outermost
# frames are those an unprofiled perf record -g gives.
set -u
cd "$(dirname "$0")/../.."
k=build/bin/kestrel
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-frames-XXXXXX)
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fail=1; fi
}

# libkestrel's functions that libc and the demo do not define too (its interposed malloc,
# read, pthread_create... carry libc's names, and libc's own frames are the program's).
# The demo's own functions are its too (crtstuff's __do_global_dtors_aux is in both).
{ nm -D --defined-only /lib/x86_64-linux-gnu/libc.so.6; nm --defined-only build/examples/demo; } |
  awk '{sub(/@.*/, "", $3); print $3}' | sort -u >"$t/libc"
nm --defined-only build/lib/libkestrel.so | awk '$2 ~ /^[Tt]$/ && $3 != "_init" && $3 != "_fini" {print $3}' |
  sort -u | comm -23 - "$t/libc" >"$t/own"
check "libkestrel's own functions listed ($(wc -l <"$t/own"))" grep -qx prof_main "$t/own"
check "... its thread trampoline among them" grep -qx thr_start "$t/own"

# The outermost frame of most stacks of an unprofiled perf record -g, for the main
# thread and the others.
perf record -q -g -o "$t/perfg.data" -- build/examples/demo 1 >/dev/null 2>"$t/perfg.err" ||
  { echo "FAIL: perf record -g of the demo: $(head -c 300 "$t/perfg.err")"; exit 1; }
perf script -i "$t/perfg.data" -F pid,tid,ip,sym 2>/dev/null | python3 -c '
import collections, sys
roots = {"main": collections.Counter(), "other": collections.Counter()}
for rec in sys.stdin.read().split("\n\n"):
    lines = [l.split() for l in rec.strip().split("\n")]
    if len(lines) < 2 or "/" not in lines[0][0]: continue
    pid, tid = lines[0][0].split("/")
    roots["main" if pid == tid else "other"][lines[-1][-1]] += 1
for kind, c in roots.items():
    print(kind, c.most_common(1)[0][0])' >"$t/perfg.roots"
check "perf -g: the main thread's root and a thread's ($(tr '\n' ' ' <"$t/perfg.roots"))" \
  test "$(wc -l <"$t/perfg.roots")" -eq 2

for engine in perf signal; do
  s="$t/$engine"
  "$k" record --engine "$engine" --state all -o "$s" --report="$s.report" -- build/examples/demo 1 >/dev/null 2>"$s.err"; rc=$?
  check "$engine: record exits 0 ($rc): $(head -c 300 "$s.err")" test $rc -eq 0
  go tool pprof -raw "$s.pb.gz" >"$s.pprof" 2>&1
  # Every function name each export holds, one per line.
  python3 - "$s" >"$s.names" <<'PY'
import json, re, sys
stem = sys.argv[1]
names = set()
for line in open(stem + ".folded"):
    names.update(line.rsplit(" ", 1)[0].split(";"))
ss = json.load(open(stem + ".speedscope.json"))
names.update(f["name"] for f in ss["shared"]["frames"])
cp = json.load(open(stem + ".cpuprofile"))
names.update(n["callFrame"]["functionName"] for n in cp["nodes"])
summ = json.load(open(stem + ".profile.json"))
names.update(f["name"] for f in summ["functions"])
html = open(stem + ".html").read()
d = json.loads(re.search(r'<script id="kestrel-data" type="application/json">(.*?)</script>', html, re.S).group(1))
names.update(f[0] for f in d["frames"])
loc = open(stem + ".pprof").read().split("\nLocations\n", 1)[1].split("\nMappings\n", 1)[0]
names.update(m.group(1) for m in re.finditer(r"^\s+(?:\d+: 0x[0-9a-f]+ M=\d+ )?(\S+) ", loc, re.M))
for n in sorted(names):
    print(n)
PY
  check "$engine: the exports name functions ($(wc -l <"$s.names"))" grep -qx mix_bytes "$s.names"
  leaked=$(comm -12 <(sort -u "$s.names") "$t/own" | tr '\n' ' ')
  check "$engine: no libkestrel function in any export: $leaked" test -z "$leaked"
  words=$(grep -owFf "$t/own" "$s.report" | sort -u | tr '\n' ' ')
  check "$engine: none in the report: $words" test -z "$words"
  check "$engine: no runtime source file in the report" bash -c '! grep -qE "(profile|threads|lifecycle|blocking)\.c:[0-9]" "$1"' _ "$s.report"
  # The outermost frames are perf record -g's: kestrel's own start frames gone, the
  # walk ends on their callers in libc (__libc_start_call_main, start_thread).
  python3 - "$s.folded" "$t/perfg.roots" >"$s.roots" <<'PY'
import collections, sys
roots = {"main": collections.Counter(), "other": collections.Counter()}
for line in open(sys.argv[1]):
    st = line.rsplit(" ", 1)[0].split(";")
    kind = "main" if st[0].startswith("main-") else "other"
    if len(st) > 1 and not st[1].startswith("["):
        roots[kind][st[1]] += int(line.rsplit(" ", 1)[1])
perf = dict(l.split() for l in open(sys.argv[2]))
for kind in ("main", "other"):
    top, n = roots[kind].most_common(1)[0] if roots[kind] else ("none", 0)
    share = n / max(1, sum(roots[kind].values()))
    print("%s %s %s %.3f" % (kind, top, perf[kind], share))
PY
  check "$engine: the roots of the main thread and of the others ($(tr '\n' ' ' <"$s.roots"))" \
    test "$(wc -l <"$s.roots")" -eq 2
  while read -r kind ours theirs share; do
    check "$engine: the stacks of the $kind thread(s) start at $theirs as perf -g's (kestrel: $ours, $share of them)" \
      test "$ours" = "$theirs" -a "$(echo "$share >= 0.9" | bc)" = 1
  done <"$s.roots"
done
exit $fail

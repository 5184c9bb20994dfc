#!/usr/bin/env bash
# kestrel record of process trees: make running a bash script that starts a C program
# twice in the background, one of which execs another; posix_spawn and vfork+exec;
# g++ driving cc1plus; git -C another directory. Every process is in the report's
# table with its own CPU time and parent, the hot function of each child is in the
# tree's top rows with its process named, an exec chain of one pid is one process
# whose program changed, --process picks one, and every export holds every process
# as its own root (folded, speedscope, pprof's process label, the viewer's data).
set -u
cd "$(dirname "$0")/../.."
root=$PWD
k=$root/build/bin/kestrel
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-tree-XXXXXX)
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fail=1; fi
}

cat >"$t/hot.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void hot_a(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i ^ (sink >> 3);
}
__attribute__((noinline)) void hot_b(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += (i * 7) ^ (sink >> 5);
}
/* hot a N: hot_a; hot b N: hot_b; hot exec N: a quarter of hot_a, then exec "hot b N" */
int main(int argc, char **argv)
{
    unsigned long n = strtoul(argv[2], NULL, 10) * 1000000ul;
    if (!strcmp(argv[1], "a"))
        hot_a(n);
    else if (!strcmp(argv[1], "b"))
        hot_b(n);
    else {
        hot_a(n / 4);
        execl(argv[0], argv[0], "b", argv[2], (char *)0);
        return 1;
    }
    return 0;
}
EOF
cc -O2 -g -fno-omit-frame-pointer -o "$t/hot" "$t/hot.c"
cat >"$t/tree.sh" <<EOF
#!/bin/bash
"$t/hot" a 300 &
"$t/hot" exec 300 &
wait
EOF
chmod +x "$t/tree.sh"
printf 'all:\n\t%s\n' "$t/tree.sh" >"$t/Makefile"

"$k" record -o "$t/mk" --report="$t/mk.report" -- make -s -C "$t" >"$t/mk.out" 2>"$t/mk.err"; rc=$?
check "make under record exits 0 ($rc): $(head -c 400 "$t/mk.err")" test $rc -eq 0
# The table: PID PARENT CPU (value unit) SAMPLES PROGRAM (cmdline).
rows() { sed -n '/^ *PID  *PARENT/,/^$/p' "$1" | grep -E '^ +[0-9]+ +-?[0-9]+ '; }
rows "$t/mk.report" >"$t/mk.rows"
pid_of() { awk -v p="$2" '$6 == p {print $1}' "$1"; }
make_pid=$(pid_of "$t/mk.rows" make)
bash_pid=$(awk '$6 ~ /^bash/ && $0 ~ /tree\.sh/ {print $1}' "$t/mk.rows")
a_row=$(grep -E "/hot a 300\)$" "$t/mk.rows"); x_row=$(grep -E "/hot b 300\)$" "$t/mk.rows")
a_pid=$(awk '{print $1}' <<<"$a_row"); x_pid=$(awk '{print $1}' <<<"$x_row")
check "make is in the table: $(cat "$t/mk.rows")" test -n "$make_pid"
check "the script's bash is in the table, child of make" \
  test -n "$bash_pid" -a "$(awk -v p="$bash_pid" '$1 == p {print $2}' "$t/mk.rows")" = "$make_pid"
check "hot a is in the table, child of bash" test -n "$a_pid" -a "$(awk '{print $2}' <<<"$a_row")" = "$bash_pid"
check "the exec'd hot is one process: bash → hot → hot" grep -q "bash → hot → hot " <<<"$x_row"
check "... child of bash" test -n "$x_pid" -a "$(awk '{print $2}' <<<"$x_row")" = "$bash_pid"
cpu_ms() { awk '{v=$3; u=$4; print (u=="s") ? v*1000 : (u=="ms") ? v : (u=="us") ? v/1000 : 0}' <<<"$1"; }
check "hot a has its own CPU time ($(cpu_ms "$a_row") ms)" awk -v c="$(cpu_ms "$a_row")" 'BEGIN{exit !(c > 100)}'
check "the exec'd one too ($(cpu_ms "$x_row") ms)" awk -v c="$(cpu_ms "$x_row")" 'BEGIN{exit !(c > 100)}'
# The tree's top rows: each child's hot function, with its process.
top=$(sed -n '/SELF%/,/^$/p' "$t/mk.report" | head -4)
check "hot_a in the top rows, in both hot processes: $top" grep -qE " hot ×2 +hot_a +hot\.c:" <<<"$top"
check "hot_b in the top rows, in the exec'd one" grep -qE " hot \[$x_pid\] +hot_b +hot\.c:" <<<"$top"
check "the report says how many processes" grep -q "^kestrel: make (pid $make_pid) · [0-9]* processes" "$t/mk.report"
# --process: one process of the tree.
"$k" report --process "$a_pid" "$t/mk.raw" >"$t/one" 2>&1
check "--process PID: its own function" grep -qE " hot_a +hot\.c:" "$t/one"
check "--process PID: not another process's" bash -c '! grep -q hot_b "$1"' _ "$t/one"
"$k" report --process nosuch "$t/mk.raw" >/dev/null 2>"$t/err"; rc=$?
check "--process of no process: an error ($rc)" test $rc -eq 1 -a -n "$(grep 'no process nosuch' "$t/err")"
"$k" report "$t/mk.raw" >"$t/again" 2>&1
check "report of STEM.raw: the tree again" grep -qE " hot \[$x_pid\] +hot_b " "$t/again"
# Exports: each process its own root.
check "folded: hot a's root" grep -qE "^hot \[$a_pid\];main-0;(.*;)?hot_a [0-9]" "$t/mk.folded"
check "folded: the exec'd one's root, both its programs" \
  bash -c 'grep -qE "^hot \[$1\];main-0;(.*;)?hot_a [0-9]" "$2" && grep -qE "^hot \[$1\];main-0;(.*;)?hot_b [0-9]" "$2"' _ "$x_pid" "$t/mk.folded"
check "folded: hot_b only in the exec'd process" bash -c '! grep "hot_b [0-9]" "$1" | grep -qv "^hot \[$2\];"' _ "$t/mk.folded" "$x_pid"
python3 - "$t/mk.speedscope.json" "$a_pid" "$x_pid" <<'PY' || { echo "FAIL: speedscope: a profile per process and thread"; fail=1; }
import json, sys
names = [p["name"] for p in json.load(open(sys.argv[1]))["profiles"]]
for pid in sys.argv[2:]:
    assert f"hot [{pid}] main-0" in names, names
PY
pp=$(go tool pprof -raw "$t/mk.pb.gz" 2>&1)
check "pprof: a process label for hot a" grep -q "process:\[hot \[$a_pid\]\]" <<<"$pp"
check "pprof: and for the exec'd one" grep -q "process:\[hot \[$x_pid\]\]" <<<"$pp"
check "pprof: -tagfocus=process picks one" \
  bash -c 'go tool pprof -top -tagfocus="process=hot \\[$1\\]" "$2" 2>&1 | grep -q hot_b && ! go tool pprof -top -tagfocus="process=hot \\[$3\\]" "$2" 2>&1 | grep -q hot_b' _ "$x_pid" "$t/mk.pb.gz" "$a_pid"
python3 - "$t/mk.html" "$a_pid" "$x_pid" <<'PY' || { echo "FAIL: the viewer's data holds every process"; fail=1; }
import json, re, sys
html = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script id="kestrel-data" type="application/json">(.*?)</script>', html, re.S).group(1))
pids = {str(p["pid"]) for p in d["processes"]}
assert set(sys.argv[2:]) <= pids, pids
assert all(0 <= t["process"] < len(d["processes"]) for t in d["threads"])
PY

# Debian's /bin/sh (dash) running the same two in the background: its children are
# reported, and the status is the script's.
printf '"%s" a 100 &\n"%s" exec 100 &\nwait\n' "$t/hot" "$t/hot" >"$t/dash.sh"
"$k" record -o "$t/dash" --report="$t/dash.report" -- sh "$t/dash.sh" >/dev/null 2>"$t/dash.err"; rc=$?
check "sh script under record exits 0 ($rc): $(head -c 300 "$t/dash.err")" test $rc -eq 0
rows "$t/dash.report" >"$t/dash.rows"
check "sh's children in the table: $(cat "$t/dash.rows")" \
  bash -c 'grep -qE "/hot a 100\)$" "$1" && grep -qE "sh → hot → hot .*/hot b 100\)$" "$1"' _ "$t/dash.rows"

# posix_spawn and vfork+exec.
cat >"$t/spawn.c" <<'EOF'
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;
int main(int argc, char **argv)
{
    char *a[] = {argv[1], "a", "150", NULL}, *b[] = {argv[1], "b", "150", NULL};
    pid_t p;
    if (posix_spawn(&p, argv[1], NULL, NULL, a, environ)) return 1;
    pid_t v = vfork();
    if (v == 0) {
        execve(argv[1], b, environ);
        _exit(127);
    }
    int st;
    waitpid(p, &st, 0);
    waitpid(v, &st, 0);
    return 0;
}
EOF
cc -O2 -g -o "$t/spawn" "$t/spawn.c"
"$k" record -o "$t/sp" --report="$t/sp.report" -- "$t/spawn" "$t/hot" >/dev/null 2>"$t/sp.err"; rc=$?
check "posix_spawn and vfork under record exit 0 ($rc): $(head -c 300 "$t/sp.err")" test $rc -eq 0
rows "$t/sp.report" >"$t/sp.rows"
check "the posix_spawn child is in the table: $(cat "$t/sp.rows")" grep -qE "/hot a 150\)$" "$t/sp.rows"
check "the vfork+exec child is in the table" grep -qE "/hot b 150\)$" "$t/sp.rows"
check "both hot functions in the tree's top rows" \
  bash -c 'sed -n "/SELF%/,/^\$/p" "$1" | head -3 | grep -q hot_a && sed -n "/SELF%/,/^\$/p" "$1" | head -3 | grep -q hot_b' _ "$t/sp.report"

# g++ drives cc1plus (and as): the compiler proper is in the table with the CPU time.
python3 - "$t/big.cpp" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("#include <map>\n#include <string>\n#include <vector>\n#include <algorithm>\n")
    for i in range(150):
        f.write(f"template <int N> struct S{i} {{ std::map<std::string, std::vector<int>> m; int f() {{ int s = 0; for (auto &kv : m) s += std::count(kv.second.begin(), kv.second.end(), N); return s; }} }};\n")
        f.write(f"int use{i}() {{ S{i}<{i}> s; return s.f(); }}\n")
PY
(cd "$t" && "$k" record -o gxx --report=gxx.report -- g++ -O2 -c big.cpp -o big.o) >/dev/null 2>"$t/gxx.err"; rc=$?
check "g++ under record exits 0 ($rc): $(head -c 300 "$t/gxx.err")" test $rc -eq 0
check "g++ wrote its object" test -s "$t/big.o"
rows "$t/gxx.report" >"$t/gxx.rows"
cc1=$(awk '$6 == "cc1plus"' "$t/gxx.rows")
check "cc1plus is in the table: $(cat "$t/gxx.rows")" test -n "$cc1"
check "cc1plus has most of the CPU time" python3 - "$t/gxx.rows" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
def ms(r): return float(r[2]) * {"s": 1000, "ms": 1, "us": 0.001}[r[3]]
cc1 = [ms(r) for r in rows if r[5] == "cc1plus"]
sys.exit(0 if cc1 and max(cc1) > 0.7 * sum(ms(r) for r in rows) else f"{rows}")
PY
check "the top rows are cc1plus's" \
  bash -c 'test "$(sed -n "/SELF%/,/^\$/p" "$1" | sed -n 2,6p | grep -c " cc1plus \[")" -ge 3' _ "$t/gxx.report"
check "the driver's waiting is not the top row" bash -c '! sed -n "/SELF%/,/^\$/p" "$1" | sed -n 2p | grep -q wait4' _ "$t/gxx.report"

# git -C: its output untouched, the profile where asked, nothing left in the repository.
git init -q "$t/repo" && for i in 1 2 3 4 5 6; do seq $((i * 20000)) >"$t/repo/f$i"; git -C "$t/repo" add . ; git -C "$t/repo" -c user.name=k -c user.email=k@k commit -qm "c$i"; done
git -C "$t/repo" log -p >"$t/git.ref"
(cd "$t" && "$k" record -o git --report=git.report -- git -C "$t/repo" log -p) >"$t/git.out" 2>"$t/git.err"; rc=$?
check "git -C under record exits 0 ($rc): $(head -c 300 "$t/git.err")" test $rc -eq 0
check "git's output is its own" cmp -s "$t/git.ref" "$t/git.out"
check "git's profile is in STEM.raw/" test -n "$(ls "$t"/git.raw/*.raw.json 2>/dev/null)"
check "nothing left in the repository" test -z "$(git -C "$t/repo" status --porcelain --ignored)"
check "git reported" grep -q "^kestrel: git (pid " "$t/git.report"

# A program run through a symlink is named as it was invoked.
ln -s "$t/hot" "$t/renamed"
"$k" record -o "$t/ln" --report="$t/ln.report" -- "$t/renamed" a 50 >/dev/null 2>&1
check "a symlink's name in the report: $(head -1 "$t/ln.report")" grep -q "^kestrel: renamed (pid [0-9]*) · ran $t/hot$" "$t/ln.report"

exit $fail

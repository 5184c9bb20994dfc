#!/usr/bin/env bash
# One report for one tree (kestrel record of several processes, then kestrel report of
# STEM.raw): a function without a name of one stripped program run three times is one
# row ("prog ×3"), not one per process; code in anonymous memory without a perf map
# (a small JIT) is one row for its mapping, not one per instruction, and the walk-end
# line names it; a Rust library without debug info keeps its name in a narrow LOCATION
# column despite its version suffix; two programs waiting at the same stack give one
# "where it waited" line saying which processes; --wide leaves the PROCESS column
# whole; the unnamed-frame warning is once for the tree and on the table's base.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
k=$root/build/bin/kestrel
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-tree-report-XXXXXX)
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then :; else echo "FAIL: $what"; fail=1; fi
}

# --- the same unnamed function in three processes
cat >"$t/spin.c" <<'EOF'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
__attribute__((noinline)) static void spin(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) sink += i ^ (sink >> 3);
}
int main(int argc, char **argv)
{
    double end = now() + atof(argv[1]);
    while (now() < end) spin(100000);
    return 0;
}
EOF
name=a_program_with_quite_a_long_name
gcc -O2 -fno-omit-frame-pointer -o "$t/$name" "$t/spin.c" && strip "$t/$name"
cd "$t"
COLUMNS=160 "$k" record -o spin --report=spin.txt -- sh -c \
  "./$name 0.4 & ./$name 0.4 & ./$name 0.4; wait" 2>spin.err
hot=$(grep -E "^[^ ]+ +(9[0-9]|100)\.[0-9]%.* $name\+0x[0-9a-f]+ " spin.txt | grep -oE "$name\+0x[0-9a-f]+")
check "the stripped program's hot function is one row of 90% or more" test -n "$hot"
n_hot=$(grep -cF " ${hot:-none} " spin.txt)
check "one row for ${hot:-it}, not one per process ($n_hot)" test "$n_hot" = 1
check "the unnamed-frame warning is said once for the tree" \
  test "$(grep -c 'have frames without a name' spin.err)" = 1
check "its share is of the table's (running) samples" \
  grep -q '% of running samples have frames without a name' spin.err
check "it names the image with its share, and the processes concerned" \
  grep -qE "info \($name [0-9.]+%; in 3 of 4 processes\)" spin.err
COLUMNS=160 "$k" report --wide spin.raw >wide.txt 2>/dev/null
check "--wide: the PROCESS column is whole: three processes of one name" \
  grep -qE "  $name ×3 +${hot/+/\\+} " wide.txt
check "--wide: the PROCESS heading is as wide as the column" \
  grep -qE "PROCESS {$(( ${#name} + 3 - 7 )),}FUNCTION" wide.txt

# --- JIT code without a perf map
cat >"$t/jit.c" <<'EOF'
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
/* x86-64: mov ecx, 4000; loop: 200 x imul eax, eax; dec ecx; jnz loop; ret */
int main(void)
{
    unsigned char *code = mmap(0, 65536, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    size_t n = 0;
    uint32_t c = 4000;
    code[n++] = 0xb9;
    memcpy(code + n, &c, 4), n += 4;
    size_t loop = n;
    for (int i = 0; i < 200; i++) code[n++] = 0x0f, code[n++] = 0xaf, code[n++] = 0xc0;
    code[n++] = 0xff, code[n++] = 0xc9;
    code[n++] = 0x0f, code[n++] = 0x85;
    int32_t rel = (int32_t)loop - (int32_t)(n + 4);
    memcpy(code + n, &rel, 4), n += 4;
    code[n++] = 0xc3;
    int (*f)(void) = (int (*)(void))code;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        f();
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 500000000L);
    return 0;
}
EOF
if [ "$(uname -m)" = x86_64 ]; then
  gcc -O2 -o jit jit.c
  COLUMNS=160 "$k" record -o jit --report=jit.txt -- ./jit 2>/dev/null
  check "JIT code is one row for its mapping" grep -qE '^[^ ]+ +(9[0-9]|100)\.[0-9]%.*\[anonymous code 0x[0-9a-f]+-0x[0-9a-f]+\] +\[jit\]' jit.txt
  check "no row per instruction address" test "$(grep -cE '  0x[0-9a-f]{6,} ' jit.txt)" = 0
  check "the walk-end line names the JIT code" grep -q 'walks end early in \[jit\]' jit.txt
  check "no empty image name" test "$(grep -c 'in  (' jit.txt)" = 0
  "$k" export --format folded -o jit.folded jit.raw 2>/dev/null
  check "the folded export follows: one stack for the JIT code, no address" \
    test "$(grep -c '\[anonymous code 0x[0-9a-f]*-0x[0-9a-f]*\] [0-9]*$' jit.folded)" = 1 -a \
    "$(grep -cE ';0x[0-9a-f]+' jit.folded)" = 0
fi

# --- a Rust library with a version suffix, without debug info
if command -v rustc >/dev/null; then
  lib=$(ls "$(rustc --print sysroot)"/lib/rustlib/*/lib/libstd-*.so 2>/dev/null | head -1)
fi
if [ -n "${lib:-}" ]; then
  mkdir rlib && strip --strip-debug -o "rlib/$(basename "$lib")" "$lib"
  cat >r.rs <<'EOF'
use std::time::Instant;
fn main() {
    let buf: Vec<u8> = (0..1_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let t = Instant::now();
    let mut n = 0usize;
    while t.elapsed().as_millis() < 500 {
        n += std::str::from_utf8(std::hint::black_box(&buf)).unwrap().len();
    }
    println!("{}", n);
}
EOF
  : >empty
  rustc -O -C prefer-dynamic -C force-frame-pointers=yes -C "link-args=-Wl,-rpath,$t/rlib" r.rs <empty
  COLUMNS=90 "$k" record -o r --report=r.txt -- ./r >/dev/null 2>&1
  check "the library's name stays in a narrow LOCATION column" \
    grep -qE '^[^ ]+ +(9[0-9]|100)\.[0-9]%.* libstd-[0-9a-f]+…$' r.txt
  COLUMNS=90 "$k" report --wide r.raw >rw.txt 2>/dev/null
  check "--wide: the library's name whole" grep -qF " $(basename "$lib")" rw.txt
else
  echo "note: no rustc with a libstd-*.so: the Rust library case is not run"
fi

# --- identical waits in two programs
cat >wait.c <<'EOF'
#include <time.h>
__attribute__((noinline)) void wait_here(void)
{
    struct timespec d = {0, 600000000};
    nanosleep(&d, 0);
}
int main(void)
{
    wait_here();
    return 0;
}
EOF
gcc -O1 -g -fno-omit-frame-pointer -o waiter_one wait.c && cp waiter_one waiter_two
"$k" record -o w --report=w.txt -- sh -c './waiter_one & ./waiter_two; wait' 2>/dev/null
sed -n '/where it waited/,/^$/p' w.txt >waited.txt
check "where it waited: one line for both programs, saying so" \
  grep -qE '^ +[0-9.]+%  2 processes +.*wait_here' waited.txt
check "where it waited: no line twice" \
  test "$(sed 's/^ *[0-9.]*% *//' waited.txt | sort | uniq -d | wc -l)" = 0

# --- --heap of a compiler driver: gcc allocates little, cc1 (its child) much
python3 - >big.c <<'PY'
print("#include <stdio.h>")
for i in range(1500):
    print(f"static int f{i}(int x) {{ int y = x * {i}; for (int k = 0; k < x; k++) y ^= k + {i}; return y; }}")
print("int main(void) { int s = 0;")
for i in range(1500):
    print(f"  s += f{i}(s);")
print('  printf("%d\\n", s); return 0; }')
PY
COLUMNS=160 "$k" record --heap -o cc --report=cc.txt -- gcc -O2 -o big big.c 2>cc.err
sed -n '/IN USE/,$p' cc.txt >heap.txt
cc1=$(grep -E '^ +[0-9]+ +[0-9]+ .* cc1  \(' heap.txt | head -1)
check "the heap report lists cc1 with what it allocated" \
  bash -c '[[ "$1" =~ [0-9.]+\ (MiB|GiB)\ +cc1 ]]' _ "$cc1"
check "the heap report's header sums the tree (no '0 samples')" \
  grep -qE ' (sampled allocations|samples) .* inuse_space [0-9.]+ (KiB|MiB|GiB)' <(grep -A1 '^kestrel: gcc' cc.txt | tail -1)
check "the heap table points at cc1" grep -qE '^[^ ]+ +[0-9.]+%.* cc1 \[[0-9]+\] ' heap.txt
n_heap=$(ls cc.raw/*.heap.pb.gz | wc -l)
listed=$(grep -oE "each process's heap profile: .*" heap.txt | grep -oE '[0-9]+' | wc -l)
check "every per-process heap file is listed ($listed of $n_heap)" test "$listed" -ge "$n_heap"
check "the heap exports hold cc1's allocations" \
  bash -c 'go tool pprof -raw "$1" 2>/dev/null | grep -q "cc1" || "$2" export --format folded -o - "$1" | grep -q "^cc1 \["' _ cc.heap.pb.gz "$k"
"$k" report --heap cc.raw >rh.txt 2>/dev/null
check "kestrel report --heap STEM.raw reads the tree again" grep -qE '^ +[0-9]+ +[0-9]+ .*cc1  \(' rh.txt

# Progress on a terminal (stderr a tty; the delay, a second by default, set to 0).
if command -v script >/dev/null; then
  script -qec "KESTREL_PROGRESS_DELAY_MS=0 '$k' report spin.raw >/dev/null" /dev/null >tty.txt 2>&1
  check "a terminal is told how far reading has come" grep -qE 'kestrel: reading [0-9]+/[0-9]+ profiles' tty.txt
  "$k" report spin.raw 2>notty.txt >/dev/null
  check "no progress line when stderr is not a terminal" bash -c '! grep -q "reading" "$1"' _ notty.txt
fi

# The same reports under AddressSanitizer and UBSan: the same text, no error.
for args in "--wide spin.raw" "w.raw" "--heap cc.raw"; do
  COLUMNS=160 "$k" report $args >plain.txt 2>/dev/null
  COLUMNS=160 "$root/build/bin/kestrel-san" report $args >san.txt 2>san.err
  check "kestrel-san report $args: the same report, no sanitizer error" \
    bash -c 'cmp -s "$1" "$2" && ! grep -qE "ERROR|runtime error" "$3"' _ plain.txt san.txt san.err
done

if [ $fail -ne 0 ]; then
  for f in spin.txt spin.err wide.txt jit.txt r.txt w.txt cc.txt cc.err; do
    [ -f "$f" ] && { echo "--- $f"; cat "$f"; }
  done
fi
exit $fail

#!/usr/bin/env bash
# C++ operator new and delete in every form, whatever allocator the program links:
# tests/heap/prog_cxx_new.cc built against glibc's malloc, tcmalloc and jemalloc (the
# last two define operator new themselves, which never reaches malloc). Each site's
# alloc_space must be the bytes it asked for within the sampling's tolerance
# (heap_test.h: 4.5 standard errors sqrt(2 B (m + s)) plus 16 m; a site missed reads 0,
# one counted twice reads double), the in-use bytes those of the one site that keeps
# its blocks (every delete form gave back its sampled blocks). The bytes asked for are
# what counts, also with libstdc++ (whose aligned new would ask aligned_alloc for the size
# rounded up to the alignment: the program prints both).
#
# Preload orders: libkestrel.so before tcmalloc or jemalloc works, profiled or not; the
# allocator before libkestrel.so runs unprofiled programs as the allocator alone would
# (Debian's sort and ls, which call reallocarray, aborted so before), and with
# KESTREL_HEAP set the program does not run: one line says why, no file is written.
# With the CPU profiler alone, that order runs. python3, which takes malloc's address, is
# profiled (its PLT entry for malloc is not an allocator of its own).
. "$(dirname "$0")/lib.sh"
so() { ls /usr/lib/x86_64-linux-gnu/"$1" /usr/lib/*/"$1" 2>/dev/null | head -1; }
TC=$(so libtcmalloc_minimal.so.4)
JE=$(so libjemalloc.so.2)
[ -n "$TC" ] || bad "libtcmalloc_minimal.so.4 not installed (scripts/deps.sh installs it)"
[ -n "$JE" ] || bad "libjemalloc.so.2 not installed (scripts/deps.sh installs it)"
M=65536 # the interval
MIB=16  # mebibytes each site asks for

# check_sites what out profile rounded: each site of the program's output against the
# profile; `rounded` 1 compares with the bytes rounded to the alignment.
check_sites() {
    local what=$1 out=$2 prof=$3 rounded=$4 folded inuse
    folded=$("$K" export --format folded --sample-type alloc_space "$prof" 2>&1) ||
        { bad "$what: export: $folded"; return; }
    inuse=$("$K" export --format folded --sample-type inuse_space "$prof" 2>&1) ||
        { bad "$what: export inuse: $inuse"; return; }
    python3 - "$what" "$out" "$rounded" "$M" <<PY || fails=$((fails + 1))
import math, re, sys
what, out, rounded, m = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
def tol(b): return 4.5 * math.sqrt(2 * b * (m + 8192)) + 16 * m
def per_site(text):
    got = {}
    for line in text.splitlines():
        stack, _, v = line.rpartition(" ")
        for f in stack.split(";"):
            name = f.split(" ")[0].split("(")[0]
            if name.startswith(("site_", "keep_")):
                got[name] = got.get(name, 0) + int(v)
                break
    return got
alloc, inuse = per_site("""$folded"""), per_site("""$inuse""")
ok = True
for line in out.splitlines():
    site, asked, rnd = line.split()
    want = float(rnd if rounded else asked)
    have = alloc.get(site, 0)
    good = abs(have - want) <= tol(want)
    ok &= good
    print(f"  {what}: {site}: {have / 2**20:.2f} MiB of {want / 2**20:.2f} (tolerance {tol(want) / 2**20:.2f})"
          + ("" if good else "  FAIL"))
    keep_want = want if site == "keep_aligned" else 0.0
    ih = inuse.get(site, 0)
    if abs(ih - keep_want) > tol(max(keep_want, 0) + 2**20):
        ok = False
        print(f"  FAIL {what}: {site}: in use {ih / 2**20:.2f} MiB, want {keep_want / 2**20:.2f}")
sys.exit(0 if ok else 1)
PY
}

# profiled what preload prog rounded: runs prog under KESTREL_HEAP with that LD_PRELOAD.
profiled() {
    local what=$1 pre=$2 prog=$3 rounded=$4 out rc
    rm -f "$T/h.pb.gz"
    out=$(LD_PRELOAD="$pre" KESTREL_HEAP="$T/h.pb.gz" KESTREL_HEAP_INTERVAL=$M \
        "build/tests/heap/$prog" $MIB 2>"$T/err")
    rc=$?
    [ $rc = 0 ] || { bad "$what: status $rc: $(head -3 "$T/err")"; return; }
    [ "$(wc -l <<<"$out")" = 9 ] || bad "$what: output: $out"
    check_sites "$what" "$out" "$T/h.pb.gz" "$rounded"
}

# Linked against each allocator, libkestrel.so preloaded.
profiled "glibc" "$LIB" prog_cxx_new_glibc 0
profiled "linked tcmalloc" "$LIB" prog_cxx_new_tcmalloc 0
profiled "linked jemalloc" "$LIB" prog_cxx_new_jemalloc 0
# Preloaded behind libkestrel.so.
profiled "preloaded tcmalloc after libkestrel" "$LIB $TC" prog_cxx_new_glibc 0
profiled "preloaded jemalloc after libkestrel" "$LIB $JE" prog_cxx_new_glibc 0

# An executable that takes malloc's address (Debian's python3) has a PLT entry for it
# that dlsym(RTLD_DEFAULT) answers: that is no allocator before libkestrel.so.
PY=$(ls /usr/bin/python3.[0-9]* 2>/dev/null | grep -E 'python3\.[0-9]+$' | head -1)
rm -f "$T/py.pb.gz"
out=$(LD_PRELOAD="$LIB" KESTREL_HEAP="$T/py.pb.gz" "$PY" -c 'x = [str(i) for i in range(10000)]' 2>&1)
[ $? = 0 ] && [ -s "$T/py.pb.gz" ] || bad "$PY, heap profile: $out"

# A request no allocator serves: the new_handler, then bad_alloc, or nullptr (nothrow),
# as each program does alone, profiled or not.
for p in glibc tcmalloc jemalloc; do
    want=$("build/tests/heap/prog_cxx_new_$p" oom 2>&1)
    grep -q "new: bad_alloc after 1 new_handler call" <<<"$want" || bad "oom, $p alone: $want"
    for heap in "" "$T/oom.pb.gz"; do
        out=$(env LD_PRELOAD="$LIB" KESTREL_HEAP_INTERVAL=$M ${heap:+KESTREL_HEAP=$heap} \
            "build/tests/heap/prog_cxx_new_$p" oom 2>&1)
        [ "$out" = "$want" ] || bad "oom, $p, ${heap:+profiled}: $out (alone: $want)"
        [ -z "$heap" ] || [ -s "$heap" ] || bad "oom, $p, profiled: no profile"
    done
done

# Not profiled: every order runs the program as it runs alone.
want=$(build/tests/heap/prog_cxx_new_glibc 4)
sorted=$(sort /etc/passwd)
listed=$(ls -la /usr/bin | md5sum)
for alloc in "$TC" "$JE"; do
    name=$(basename "$alloc")
    for pre in "$LIB $alloc" "$alloc $LIB"; do
        order=$([ "${pre%% *}" = "$LIB" ] && echo "libkestrel first" || echo "$name first")
        for p in glibc tcmalloc jemalloc; do
            out=$(LD_PRELOAD="$pre" "build/tests/heap/prog_cxx_new_$p" 4 2>&1)
            rc=$?
            [ $rc = 0 ] && [ "$out" = "$want" ] || bad "unprofiled, $order, $name, prog_cxx_new_$p: status $rc: $(head -3 <<<"$out")"
        done
        out=$(LD_PRELOAD="$pre" sort /etc/passwd 2>&1)
        [ "$out" = "$sorted" ] || bad "unprofiled, $order, $name: sort: $(head -3 <<<"$out")"
        out=$(LD_PRELOAD="$pre" ls -la /usr/bin 2>&1 | md5sum)
        [ "$out" = "$listed" ] || bad "unprofiled, $order, $name: ls differs"
        # The CPU profiler alone
        out=$(LD_PRELOAD="$pre" KESTREL_PROFILE="$T/cpu.json" sort /etc/passwd 2>&1)
        [ "$out" = "$sorted" ] || bad "CPU profile, $order, $name: sort: $(head -3 <<<"$out")"
        [ -s "$T/cpu.json" ] || bad "CPU profile, $order, $name: no raw file"
        rm -f "$T/cpu.json"
    done
    # The allocator first, heap profile asked for: says why it cannot, runs nothing.
    rm -f "$T/h.pb.gz"
    out=$(LD_PRELOAD="$alloc $LIB" KESTREL_HEAP="$T/h.pb.gz" build/tests/heap/prog_cxx_new_glibc 4 2>&1)
    rc=$?
    echo "  $name before libkestrel.so, KESTREL_HEAP set: status $rc: $out"
    [ $rc = 1 ] || bad "$name first, profiled: status $rc, want 1"
    grep -qF "kestrel: heap profile: cannot start: malloc comes from $alloc, found before libkestrel.so" <<<"$out" ||
        bad "$name first, profiled: message: $out"
    grep -q "site_new" <<<"$out" && bad "$name first, profiled: the program ran"
    [ -e "$T/h.pb.gz" ] && bad "$name first, profiled: a file was written"
done

[ $fails = 0 ] && echo "PASS: test_heap_cxx_new" || echo "FAIL: test_heap_cxx_new ($fails)"
exit $((fails > 0))

#!/usr/bin/env bash
# The heap profile before a fatal signal's default action, as a user preloads the
# runtime: SIGTERM, SIGINT, SIGHUP and SIGABRT (abort()) each leave a whole profile
# with the program's kept memory at site_keep, and the process still ends by that
# signal. A single-threaded program has no thread of the runtime's (its signal's
# flush runs on its own thread); one that made a thread has the runtime's
# "kestrel-exit" thread from then on. Last, SIGTERM, SIGINT or SIGHUP at a random
# moment of a single-threaded program that allocates without pause at the smallest
# interval (so the signal now and then lands inside a sample, with the profiler's locks
# held, where it must wait for their release; tests/runtime/test_lifecycle checks that
# wait itself): every run ends by its signal, none hangs, and every file is whole.
. "$(dirname "$0")/lib.sh"

# One run that ends by a signal: its status, its file, site_keep in the report.
ends_by() { # mode signal-number
    local mode=$1 sig=$2 out rc rep
    rm -f "$T"/s.pb.gz
    # in the background (bash would take a foreground child's death by SIGINT as its
    # own), where SIGINT starts ignored unless put back to its default
    env --default-signal=INT LD_PRELOAD="$LIB" KESTREL_HEAP="$T/s.pb.gz" \
        KESTREL_HEAP_INTERVAL=65536 "$PROG" "$mode" >"$T/out" &
    wait $!
    rc=$?
    out=$(cat "$T/out")
    [ $rc = $((128 + sig)) ] || bad "$mode: status $rc, want $((128 + sig))"
    check_file "$T/s.pb.gz" 65536 "$mode"
    rep=$("$K" report "$T/s.pb.gz" 2>&1) || bad "$mode: report: $rep"
    grep -q ' site_keep ' <<<"$rep" || bad "$mode: no site_keep in: $rep"
    OUT=$out
}

for s in sigterm:15 sigint:2 sighup:1 sigabrt:6; do
    ends_by "${s%:*}" "${s#*:}"
    grep -qx 'threads: prog_heap' <<<"$OUT" || bad "${s%:*}: threads of the process: $OUT"
done

ends_by thread-sigterm 15
grep -qx 'before: prog_heap' <<<"$OUT" || bad "thread-sigterm: threads before: $OUT"
grep -q '^after: .*kestrel-exit' <<<"$OUT" || bad "thread-sigterm: no kestrel-exit after: $OUT"

sigs=(TERM INT HUP)
codes=(143 130 129)
runs=100 ended=0
for i in $(seq $runs); do
    k=$((RANDOM % 3))
    rm -f "$T"/c.pb.gz
    coproc CHURN { exec env --default-signal=INT LD_PRELOAD="$LIB" KESTREL_HEAP="$T/c.pb.gz" \
        KESTREL_HEAP_INTERVAL=65536 "$PROG" churn; }
    pid=$CHURN_PID
    read -r -t 10 line <&"${CHURN[0]}" && read -r -t 10 line <&"${CHURN[0]}" ||
        { bad "churn $i: never started"; kill -KILL "$pid"; wait "$pid"; continue; }
    sleep "0.0$((RANDOM % 40))"
    kill -"${sigs[$k]}" "$pid"
    # bounded: a flush that deadlocked would hang here
    for w in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        bad "churn $i: still running 10 s after SIG${sigs[$k]}"
        kill -KILL "$pid"
    fi
    wait "$pid"
    rc=$?
    [ $rc = "${codes[$k]}" ] || { bad "churn $i: SIG${sigs[$k]}: status $rc"; continue; }
    gzip -t "$T/c.pb.gz" 2>/dev/null || { bad "churn $i: SIG${sigs[$k]}: no whole file"; continue; }
    ended=$((ended + 1))
done
echo "churn: $ended of $runs runs ended by their signal with a whole file"
check_file "$T/c.pb.gz" 65536 "churn (the last run)"

echo "$fails failed"
[ $fails = 0 ]

#!/usr/bin/env bash
# KESTREL_HEAP through the environment, as a user preloads the runtime: the file is
# written at exit (a %p path, a directory, empty: the default name), before exec,
# before SIGTERM's default action ends the process, at _exit, _Exit, quick_exit and
# exit_group, at the end of an image whose exec failed; a forked child runs a profile of
# its own and writes its own file (a prefork server's workers); a bad interval is said and replaced by the default. go tool pprof
# -raw (pprof's own parser, which checks every index) reads each file and shows the
# sample types, the period and the executable's mapping with its build id.
. "$(dirname "$0")/lib.sh"

run() { # env... -- args: runs the program preloaded, in $T/cwd
    (cd "$T/cwd" && env LD_PRELOAD="$LIB" "$@")
}
mkdir -p "$T/cwd" "$T/dir"

# exit, %p
out=$(run KESTREL_HEAP="$T/out.%p.pb.gz" KESTREL_HEAP_INTERVAL=65536 "$PROG" exit; echo "rc=$?")
pids=$(ls "$T" | sed -n 's/^out\.\([0-9]*\)\.pb\.gz$/\1/p')
[ "$(wc -w <<<"$pids")" = 1 ] || bad "exit: expected one out.<pid>.pb.gz, got: $(ls "$T")"
grep -q 'rc=0' <<<"$out" || bad "exit: status $out"
check_file "$T/out.$pids.pb.gz" 65536 "exit"

# a directory, and empty: the default name
run KESTREL_HEAP="$T/dir" "$PROG" exit >/dev/null
n=$(ls "$T/dir" | grep -cE '^Heap\.[0-9]{8}\.[0-9]{6}\.[0-9]+\.0\.001\.pb\.gz$')
[ "$n" = 1 ] || bad "directory: $(ls "$T/dir")"
check_file "$(ls -d "$T"/dir/Heap.*)" 524288 "directory"
run KESTREL_HEAP= "$PROG" exit >/dev/null
n=$(ls "$T/cwd" | grep -cE '^Heap\.[0-9]{8}\.[0-9]{6}\.[0-9]+\.0\.001\.pb\.gz$')
[ "$n" = 1 ] || bad "empty: $(ls "$T/cwd")"
rm -f "$T"/cwd/Heap.*

# exec: the first image's file is written before /bin/true replaces it, and the new
# image writes its own next to it
rm -f "$T"/out.*
run KESTREL_HEAP="$T/out.%p.pb.gz" "$PROG" exec >/dev/null
first=$(ls "$T" | grep -E '^out\.[0-9]+\.pb\.gz$')
[ -n "$first" ] || bad "exec: no file of the first image: $(ls "$T")"
[ -n "$first" ] && check_file "$T/$first" 524288 "exec"
ls "$T" | grep -qE '^out\.[0-9]+\.1\.pb\.gz$' || bad "exec: no file of the second image: $(ls "$T")"

# SIGTERM with its default action: the file, and the process still dies of SIGTERM
rm -f "$T"/out.*
run KESTREL_HEAP="$T/out.%p.pb.gz" "$PROG" sigterm >/dev/null
rc=$?
[ $rc = 143 ] || bad "sigterm: status $rc, want 143"
f=$(ls "$T" | grep -E '^out\.[0-9]+\.pb\.gz$')
[ -n "$f" ] && check_file "$T/$f" 524288 "sigterm" || bad "sigterm: no file"

# ends that run no destructor: _exit, _Exit, quick_exit, syscall(SYS_exit_group) and
# _exit from a signal handler each leave the whole profile, with the program's status
for m in _exit _Exit quick_exit exit_group handler_exit; do
    rm -f "$T"/out.*
    run KESTREL_HEAP="$T/out.%p.pb.gz" "$PROG" $m >/dev/null
    rc=$?
    [ $rc = 5 ] || bad "$m: status $rc, want 5"
    f=$(ls "$T" | grep -E '^out\.[0-9]+\.pb\.gz$')
    if [ -n "$f" ]; then
        check_file "$T/$f" 524288 "$m"
        rep=$("$K" report "$T/$f" 2>&1) || bad "$m: report: $rep"
        grep -q ' site_keep ' <<<"$rep" || bad "$m: no site_keep in: $rep"
    else
        bad "$m: no file"
    fi
done

# a failed exec: the profile goes on; one file, with what came after it too
for m in execfail execbad; do
    rm -f "$T"/out.*
    run KESTREL_HEAP="$T/out.%p.pb.gz" "$PROG" $m >/dev/null || bad "$m: status $?"
    f=$(ls "$T" | grep -E '^out\.')
    if [ "$(wc -w <<<"$f")" = 1 ]; then
        check_file "$T/$f" 524288 "$m"
        rep=$("$K" report "$T/$f" 2>&1) || bad "$m: report: $rep"
        grep -q ' site_keep ' <<<"$rep" || bad "$m: no site_keep in: $rep"
        grep -q ' site_after ' <<<"$rep" || bad "$m: nothing after the exec in: $rep"
    else
        bad "$m: files: $f"
    fi
done

# fork: the child runs a profile of its own and writes its own file
rm -f "$T"/out.*
out=$(run KESTREL_HEAP="$T/out.%p.pb.gz" "$PROG" fork)
grep -q 'child running=1' <<<"$out" || bad "fork: child says: $out"
n=$(ls "$T" | grep -cE '^out\.[0-9]+\.pb\.gz$')
[ "$n" = 2 ] || bad "fork: $n files: $(ls "$T")"

# a bad interval: one line, the default interval, and the program runs profiled
out=$(run KESTREL_HEAP="$T/x.pb.gz" KESTREL_HEAP_INTERVAL=1000 "$PROG" exit 2>&1)
rc=$?
[ $rc = 0 ] || bad "bad interval: status $rc"
grep -q '^kestrel: KESTREL_HEAP_INTERVAL=1000: .*; using 524288$' <<<"$out" || bad "bad interval: $out"
grep -q '^ran' <<<"$out" || bad "bad interval: the program did not run"
check_file "$T/x.pb.gz" 524288 "bad interval"

echo "$fails failed"
[ $fails = 0 ]

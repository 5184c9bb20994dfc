# Sourced by the stub tests (test_stub_windows.sh, test_stub_wasm.sh): run from the
# repository root, a temporary directory $T removed at exit, bad() to count a
# failure, the functions kestrel.h declares ($API), and the checks both tests make:
# the library defines exactly $API, stub_program.c checks every one of them, and a
# run of the program is the same as the run of a reference build.
set -u
cd "$(dirname "$0")/../.."
PLAT=$PWD/build/tests/platform
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# The functions of kestrel.h: each name followed by "(" on a line that starts a
# declaration (not a comment, not a preprocessor line).
API=$(grep -E '^[A-Za-z_].*\bkestrel_[a-z0-9_]+ *\(' include/kestrel.h |
    grep -oE '\bkestrel_[a-z0-9_]+ *\(' | tr -d ' (' | sort -u)
[ "$(wc -w <<<"$API")" -ge 9 ] || bad "kestrel.h: only these functions found: $API"
for f in $API; do
    grep -qE "EXPECT\($f\(" tests/platform/stub_program.c ||
        bad "tests/platform/stub_program.c does not check $f"
done

# check_symbols WHAT NAMES: the library WHAT defines (or exports) exactly kestrel.h's
# functions, none missing and nothing else.
check_symbols() {
    local what=$1 got
    got=$(tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort -u)
    [ "$got" = "$API" ] || bad "$what: symbols differ from kestrel.h's functions" \
        "(< kestrel.h, > $what):" "$(diff <(echo "$API") <(echo "$got") | grep '^[<>]')"
}

# The environment variables the Linux runtime reads, some with values it would
# complain about: the stubs must read none of them, so nothing changes.
KESTREL_ENV=(KESTREL_PROFILE=cpu.raw.json KESTREL_PROFILE_HZ=fast KESTREL_PROFILE_ENGINE=nope
    KESTREL_PROFILE_SIGNAL=0 KESTREL_HEAP=heap.pb.gz KESTREL_HEAP_INTERVAL=1
    KESTREL_HTTP=bad:address KESTREL_HTTP_MAX_SECONDS=-1)

# run_case NAME [VAR=VALUE...] -- COMMAND...: runs COMMAND (absolute paths) in a new
# directory $T/NAME.d with those variables added, and keeps its stdout, stderr,
# status, the names of the files it left and its result.txt as $T/NAME.*.
run_case() {
    local name=$1 vars=()
    shift
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    mkdir "$T/$name.d"
    (cd "$T/$name.d" && env "${vars[@]}" timeout 120 "$@" >"$T/$name.out" 2>"$T/$name.err")
    echo $? >"$T/$name.rc"
    (cd "$T/$name.d" && ls -A) >"$T/$name.files"
    cat "$T/$name.d/result.txt" >"$T/$name.result" 2>/dev/null || : >"$T/$name.result"
}

# text FILE MODE: FILE's text; with MODE crlf, its \r\n line ends made \n (what a
# Windows program writes in text mode).
text() { if [ "$2" = crlf ]; then sed 's/\r$//' "$1"; else cat "$1"; fi; }

# same_as NAME REF [crlf]: NAME ran as REF did: status 0, nothing on stderr, stdout
# and result.txt byte for byte REF's (after text's line ends with crlf), and no other
# file left behind.
same_as() {
    local name=$1 ref=$2 mode=${3:-exact} what
    [ "$(cat "$T/$name.rc")" = 0 ] || bad "$name: exit status $(cat "$T/$name.rc")"
    [ -s "$T/$name.err" ] && bad "$name: printed on stderr: $(head -c 2000 "$T/$name.err")"
    for what in out result; do
        cmp -s <(text "$T/$name.$what" "$mode") "$T/$ref.$what" ||
            bad "$name: its ${what/out/stdout} is not $ref's:" \
                "$(diff <(text "$T/$name.$what" "$mode") "$T/$ref.$what" | head -20)"
    done
    [ "$(cat "$T/$name.files")" = result.txt ] ||
        bad "$name: left the files: $(tr '\n' ' ' <"$T/$name.files")(only result.txt expected)"
}

# The reference: the program built natively without kestrel, whose output is known
# (pi(20000) = 2262 primes).
run_case native -- "$PLAT/stub_program_native"
grep -qx 'primes below 20000: 2262' "$T/native.out" || bad "native: stdout: $(cat "$T/native.out")"
[ "$(cat "$T/native.rc")" = 0 ] && [ ! -s "$T/native.err" ] && [ -s "$T/native.result" ] ||
    bad "native: status $(cat "$T/native.rc"), stderr: $(cat "$T/native.err")"

# finish: the last line of every stub test.
finish() {
    [ "$fails" = 0 ] && echo "ok: $1" && exit 0
    echo "$fails failure(s)" >&2
    exit 1
}

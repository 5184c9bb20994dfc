#!/usr/bin/env bash
# The heap profile through the CLI: `kestrel record --heap` runs the program with the
# runtime, symbolizes the runtime's pprof and writes the exports; go tool pprof -raw
# reads the symbolized STEM.heap.pb.gz with the sample types, the period, the
# allocating function's name and the executable's build id; `report` shows the site
# (inuse_space by default, --sample-type to choose); a bad interval or one without
# --heap stops before the program runs.
. "$(dirname "$0")/lib.sh"

out=$("$K" record --heap --heap-interval=65536 -o "$T/rec" --report="$T/rec.report" -- "$PROG" exit 2>&1)
rc=$?
[ $rc = 0 ] || bad "record: status $rc: $out"
ls "$T"/rec.raw/*.heap.pb.gz >/dev/null 2>&1 || bad "record: no runtime heap file: $(ls "$T" "$T/rec.raw")"
[ -s "$T/rec.heap.pb.gz" ] || bad "record: no symbolized rec.heap.pb.gz: $(ls "$T")"
raw=$(go tool pprof -raw "$T/rec.heap.pb.gz" 2>&1) || bad "pprof: $raw"
grep -q 'alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]' <<<"$raw" ||
    bad "symbolized: sample types: $(head -12 <<<"$raw")"
grep -qx 'Period: 65536' <<<"$raw" || bad "symbolized: period"
grep -qE '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ site_keep .*prog_heap\.c:[0-9]+' <<<"$raw" ||
    bad "symbolized: no location in site_keep: $(sed -n '/^Locations/,/^Mappings/p' <<<"$raw" | head)"
grep -qE "$PROG $BUILD_ID" <<<"$raw" || bad "symbolized: no mapping with build id $BUILD_ID"
# the runtime's own file too
rawfile=$(ls "$T"/rec.raw/*.heap.pb.gz 2>/dev/null | head -1)
[ -n "$rawfile" ] && { go tool pprof -raw "$rawfile" 2>&1 | grep -qE "$PROG $BUILD_ID" ||
    bad "runtime file: no mapping with build id"; }

grep -q 'site_keep' "$T/rec.report" || bad "record's report: no site_keep: $(cat "$T/rec.report")"
rep=$("$K" report "$T/rec.heap.pb.gz" 2>&1) || bad "report: $rep"
grep -q 'site_keep' <<<"$rep" || bad "report: no site_keep: $rep"
rep=$("$K" report --sample-type alloc_objects "$T/rec.heap.pb.gz" 2>&1) || bad "report --sample-type: $rep"
grep -q 'site_keep' <<<"$rep" || bad "report --sample-type alloc_objects: no site_keep"
rep=$("$K" report --sample-type bogus "$T/rec.heap.pb.gz" 2>&1) && bad "report --sample-type bogus succeeded"
grep -q '^kestrel: ' <<<"$rep" || bad "report --sample-type bogus: $rep"

out=$("$K" record --heap-interval=65536 -o "$T/u" -- "$PROG" exit 2>&1)
rc=$?
[ $rc = 2 ] || bad "--heap-interval without --heap: status $rc"
grep -q '^ran' <<<"$out" && bad "--heap-interval without --heap: the program ran"
out=$("$K" record --heap --heap-interval=1000 -o "$T/b" -- "$PROG" exit 2>&1)
rc=$?
[ $rc = 2 ] || bad "bad interval: status $rc: $out"
grep -q 'heap-interval is at least 65536 bytes' <<<"$out" || bad "bad interval: $out"
grep -q '^ran' <<<"$out" && bad "bad interval: the program ran"

echo "$fails failed"
[ $fails = 0 ]

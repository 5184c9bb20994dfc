#!/usr/bin/env python3
"""Reads a pprof file with `go tool pprof -raw` (Go's own parser) and checks that it
says what kestrel wrote.

    pprof_raw_check.py PROFILE.pb.gz EXPECT.json

EXPECT.json:
  {"sample_types": [["samples", "count"], ["cpu", "nanoseconds"]],
   "default_sample_type": "cpu" | null,
   "period_type": ["cpu", "nanoseconds"], "period": 1003009,
   "samples": [{"frames": [{"name": S, "file": S, "line": N}, ...],   # leaf first,
                "values": [N, ...], "labels": {"thread": S, ...}}]}     # inlined expanded
  A frame {"address_only": true} is a location that has an address and no line.

Checked: the period type, the period, the sample types (and which is the default),
and for every distinct (stack, labels) the summed values. A stack compares as the
text pprof prints for its frames, `name file:line s=0`, so every byte of every
function name and file name is compared as Go read it.
"""
import json
import re
import subprocess
import sys
from collections import defaultdict

LOC_HEAD = re.compile(r"^ *(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(?:\[F\] )?")
FRAME_SEP = "\n" + " " * 13
LINE_COL = re.compile(r":(\d+):\d+ s=")


def fail(msg):
    print(f"pprof_raw_check: {msg}", file=sys.stderr)
    sys.exit(1)


def frame_text(f):
    if f.get("address_only"):
        return ""  # a location with an address and no line prints nothing after it
    return f"{f['name']} {f['file']}:{f['line']} s=0"


def labels_text(labels):
    return " ".join(f"{k}:[{labels[k]}]" for k in sorted(labels))


def parse_raw(text):
    """Returns (header dict, sample-type line, samples [(values, loc ids, labels)],
    {loc id: text of its frames})."""
    head, sep, rest = text.partition("\nSamples:\n")
    if not sep:
        fail("no Samples: section in pprof -raw output")
    header = {}
    for line in head.splitlines():
        k, _, v = line.partition(": ")
        header[k] = v
    samples_part, sep, rest = rest.partition("\nLocations\n")
    if not sep:
        fail("no Locations section in pprof -raw output")
    locs_part, _, _ = rest.partition("\nMappings\n")
    lines = samples_part.split("\n")
    types_line = lines[0]
    samples = []
    for line in lines[1:]:
        if not line.strip():
            continue
        if line.startswith(" " * 16) and samples and ":" in line and not re.match(r"^ +-?\d+( +-?\d+)*: ", line):
            samples[-1][2].append(line.strip())
            continue
        vals, _, ids = line.partition(": ")
        samples.append(([int(v) for v in vals.split()], [int(i) for i in ids.split()], []))
    locs = {}
    cur = None
    # Go 1.2x prints a line's column too (file:line:column); the check compares lines.
    locs_part = LINE_COL.sub(r":\1 s=", locs_part)
    for line in locs_part.split("\n"):
        m = LOC_HEAD.match(line)
        if m:
            cur = int(m.group(1))
            locs[cur] = line[m.end():]
        elif cur is not None:
            locs[cur] += "\n" + line
    return header, types_line, samples, locs


def main():
    if len(sys.argv) != 3:
        fail("usage: pprof_raw_check.py PROFILE EXPECT.json")
    path, expect_path = sys.argv[1], sys.argv[2]
    want = json.load(open(expect_path, encoding="utf-8"))
    run = subprocess.run(["go", "tool", "pprof", "-raw", "-symbolize=none", path],
                         capture_output=True)
    if run.returncode != 0:
        fail(f"go tool pprof -raw {path} failed: {run.stderr.decode(errors='replace')}")
    text = run.stdout.decode("utf-8", errors="strict")
    header, types_line, samples, locs = parse_raw(text)
    errs = []

    pt = " ".join(want["period_type"])
    if header.get("PeriodType") != pt:
        errs.append(f"PeriodType {header.get('PeriodType')!r}, wrote {pt!r}")
    if header.get("Period") != str(want["period"]):
        errs.append(f"Period {header.get('Period')!r}, wrote {want['period']}")
    dflt = want.get("default_sample_type")
    wt = " ".join(f"{t}/{u}" + ("[dflt]" if t == dflt else "") for t, u in want["sample_types"])
    if types_line.strip() != wt:
        errs.append(f"sample types {types_line.strip()!r}, wrote {wt!r}")

    got = defaultdict(lambda: None)
    for values, ids, labels in samples:
        missing = [i for i in ids if i not in locs]
        if missing:
            errs.append(f"sample refers to locations {missing} that pprof does not list")
            continue
        k = (FRAME_SEP.join(locs[i] for i in ids), " ".join(labels))
        got[k] = values if got[k] is None else [a + b for a, b in zip(got[k], values)]
    exp = defaultdict(lambda: None)
    for s in want["samples"]:
        k = (FRAME_SEP.join(frame_text(f) for f in s["frames"]), labels_text(s.get("labels", {})))
        exp[k] = s["values"] if exp[k] is None else [a + b for a, b in zip(exp[k], s["values"])]
    if not exp:
        errs.append("the expectation has no samples (nothing would be checked)")
    for k, v in exp.items():
        if k not in got:
            errs.append(f"stack not read back: {k!r}")
        elif got[k] != v:
            errs.append(f"stack {k!r}: values {got[k]}, wrote {v}")
    for k in got:
        if k not in exp:
            errs.append(f"stack read back that was not written: {k!r}")
    for e in errs[:30]:
        print(f"{path}: {e}", file=sys.stderr)
    if errs:
        sys.exit(1)
    print(f"{path}: go tool pprof read {len(samples)} samples, {len(exp)} distinct stacks, as written")


main()

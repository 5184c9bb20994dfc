#!/usr/bin/env python3
"""Checks every export `kestrel record -o STEM` wrote for a real program with the
tools that consume them, against the numbers of STEM.profile.json:

    check_record.py STEM

- STEM.speedscope.json: valid against speedscope's schema (ajv); speedscope imports
  it with the profile's total weight and every hot function;
- STEM.cpuprofile: speedscope's Chrome importer gets the same total, in microseconds;
- STEM.pb.gz: go tool pprof reads it; its samples/count sum to the total, its period
  and types are kestrel's, and every hot function is there;
- STEM.folded: its counts sum to the total, one line per distinct stack."""
import json
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
stem = sys.argv[1]
summary = json.load(open(stem + ".profile.json"))
total = summary["totals"]["value"]
unit = summary["sample_type"]["unit"]
period = summary["totals"]["period"]
hot = [f["name"] for f in summary["functions"] if f["self"]["value"] > 0]
errors = []


def run(cmd, echo=True):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if echo:
        sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    return r


if total <= 0 or not hot:
    errors.append(f"{stem}.profile.json has no samples: nothing to check")
ns_per_unit = 1 if unit == "nanoseconds" else period
with tempfile.TemporaryDirectory() as d:
    ss_exp, cp_exp = os.path.join(d, "ss.json"), os.path.join(d, "cp.json")
    ss_unit = {"count": "none"}.get(unit, unit)
    json.dump({"unit": ss_unit, "total_weight": total, "names": hot}, open(ss_exp, "w"))
    json.dump({"unit": "microseconds", "total_weight": total * ns_per_unit / 1000, "names": hot},
              open(cp_exp, "w"))
    if run(["node", f"{here}/speedscope_schema.mjs", stem + ".speedscope.json"]).returncode:
        errors.append("speedscope file fails the schema")
    if run(["node", f"{here}/speedscope_probe.mjs", stem + ".speedscope.json", ss_exp,
            stem + ".cpuprofile", cp_exp]).returncode:
        errors.append("speedscope import")

r = run(["go", "tool", "pprof", "-raw", "-symbolize=none", stem + ".pb.gz"], echo=False)
if r.returncode:
    errors.append("go tool pprof could not read the pprof file")
else:
    text = r.stdout
    types = text.split("\nSamples:\n", 1)[1].split("\n", 1)[0].split()
    if [t.replace("[dflt]", "") for t in types] != ["samples/count", "cpu/nanoseconds"]:
        errors.append(f"pprof sample types {types}, not samples/count cpu/nanoseconds")
    if f"Period: {period}\n" not in text:
        errors.append(f"pprof period is not {period}")
    body = text.split("\nSamples:\n", 1)[1].split("\nLocations\n", 1)[0]
    # pprof holds every sample with its state label; profile.json counts one state
    # (running by default) or all.
    state = summary.get("counts", "all")
    counts = [int(m.group(1)) for m in
              re.finditer(r"^ +(-?\d+) +-?\d+: [^\n]*\n +([^\n]*)", body, re.M)
              if state == "all" or f"state:[{state}]" in m.group(2)]
    if unit == "count" and sum(counts) != total:
        errors.append(f"pprof samples/count sum {sum(counts)}, profile.json total {total}")
    locs = text.split("\nLocations\n", 1)[1]
    for name in hot:
        # A frame without a symbol is named IMAGE+0xOFFSET by the summary; pprof keeps it
        # as what it is, an address in its mapping (no function), for pprof's own
        # symbolization to name later.
        if re.fullmatch(r"\S+\+0x[0-9a-f]+", name):
            continue
        if f" {name} " not in locs:
            errors.append(f"pprof has no function {name!r}")

lines = open(stem + ".folded", encoding="utf-8").read().splitlines()
folded_total = sum(int(l.rsplit(" ", 1)[1]) for l in lines)
if folded_total != total:
    errors.append(f"folded counts sum to {folded_total}, profile.json total {total}")
if len(set(l.rsplit(" ", 1)[0] for l in lines)) != len(lines):
    errors.append("folded repeats a stack")

for e in errors:
    print(f"check_record: {stem}: {e}", file=sys.stderr)
print(f"{stem}: {len(hot)} hot functions, total {total} {unit}: "
      f"{'all consumers agree' if not errors else f'{len(errors)} problems'}")
sys.exit(1 if errors else 0)

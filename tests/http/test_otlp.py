#!/usr/bin/env python3
"""kestrel export --format otlp, checked with the official OpenTelemetry types: the
demo (build/examples/demo) recorded by `kestrel record`, exported as OTLP, decoded by
otlpcheck (tests/http/otlpcheck, go.opentelemetry.io/proto/otlp's profiles
v1development from the Go module proxy, cached in Go's module cache): the
dictionary's zero entries, the resource's process and host attributes, one sample
type per profile, the original pprof payload, stacks and sample counts equal to
kestrel's own folded export, timestamps equal to the raw profile's running samples'
times. Then the request is pushed to a real receiver, Parca's OTLP/gRPC
ProfilesService, which accepts it, and Parca's query API returns every CPU nanosecond
of it, in exactly the request's stacks as Parca v0.28.0 reads them: each frame named
by function_table[function_index - 1] (pkg/profile/encode.go:70), the entry before
the one the request names; docs/exports.md says why that is Parca's, not kestrel's."""
import glob
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from httplib import BUILD, KESTREL, ROOT, Checker, leaf_totals, parse_raw
from parcalib import Parca, pprof_folded, pprof_top

c = Checker()
check_bin = os.path.join(BUILD, "tests", "http", "otlpcheck")
r = subprocess.run(["go", "build", "-o", check_bin, "."], cwd=os.path.join(ROOT, "tests", "http", "otlpcheck"),
                   capture_output=True, text=True, timeout=1800)
c.check(r.returncode == 0, "otlpcheck builds with the official OTLP types: %s" % r.stderr[-1000:])
if r.returncode:
    c.exit()

d = tempfile.mkdtemp(prefix="kestrel-otlp-")
stem = os.path.join(d, "demo")
r = subprocess.run([KESTREL, "record", "-o", stem, "--", os.path.join(BUILD, "examples", "demo")],
                   capture_output=True, text=True, timeout=300)
c.check(r.returncode == 0, "kestrel record runs the demo: %s" % r.stderr[-500:])
c.check(not os.path.exists(stem + ".otlp.pb"), "kestrel record does not write the OTLP request")
raw = glob.glob(os.path.join(stem + ".raw", "*.json"))
c.check(len(raw) == 1, "one raw profile: %r" % raw)
otlp, folded = stem + ".otlp.pb", stem + ".samples.folded"
r = subprocess.run([KESTREL, "export", "--format", "otlp", "-o", otlp, stem + ".raw"],
                   capture_output=True, text=True)
c.check(r.returncode == 0 and os.path.getsize(otlp) > 0, "kestrel export --format otlp: %s" % r.stderr)
r = subprocess.run([KESTREL, "export", "--format", "folded", "--sample-type", "samples", "-o", folded,
                    stem + ".raw"], capture_output=True, text=True)
c.check(r.returncode == 0, "kestrel export --format folded: %s" % r.stderr)

r = subprocess.run([check_bin, "-otlp", otlp, "-folded", folded, "-raw", raw[0]], capture_output=True,
                   text=True, timeout=120)
print(r.stdout, r.stderr)
c.check(r.returncode == 0, "the OTLP request decodes with the official types and equals kestrel's own "
        "exports: %s" % r.stderr.strip())

# a pprof input (no times: one summed value per sample) decodes too
r = subprocess.run([KESTREL, "export", "--format", "otlp", "-o", otlp + ".pprof", stem + ".pb.gz"],
                   capture_output=True, text=True)
c.check(r.returncode == 0, "kestrel export --format otlp of a pprof file: %s" % r.stderr)
r = subprocess.run([check_bin, "-otlp", otlp + ".pprof"], capture_output=True, text=True, timeout=120)
print(r.stdout, r.stderr)
c.check(r.returncode == 0 and "profile samples/count" in r.stdout,
        "the OTLP request of a pprof input decodes with the official types: %s" % r.stderr.strip())

# a bad input: a message, no output file
bad = os.path.join(d, "bad.json")
with open(bad, "w") as f:
    f.write("{not json")
r = subprocess.run([KESTREL, "export", "--format", "otlp", "-o", os.path.join(d, "bad.otlp.pb"), bad],
                   capture_output=True, text=True)
c.check(r.returncode != 0 and r.stderr.startswith("kestrel: ") and
        not os.path.exists(os.path.join(d, "bad.otlp.pb")), "bad input: a message, no file: %r" % r.stderr)

# pushed to a real receiver: Parca's OTLP ingest
parca = Parca('object_storage:\n  bucket:\n    type: "FILESYSTEM"\n    config:\n      directory: "./data"\n'
              "scrape_configs: []\n")
try:
    t0 = time.time()
    shifted = os.path.join(d, "parca-v0.28.0.folded")
    r = subprocess.run([check_bin, "-otlp", otlp, "-folded", folded, "-raw", raw[0], "-shifted", shifted,
                        "-push", "127.0.0.1:%d" % parca.port], capture_output=True, text=True, timeout=120)
    print(r.stdout, r.stderr)
    c.check(r.returncode == 0 and "accepted" in r.stdout, "Parca accepts the request: %s" % r.stderr.strip())
    time.sleep(2)
    types = parca.types()
    print("Parca's profile types: %s" % types)
    t = [x for x in types if x.get("name") == "kestrel" and x.get("sampleType") == "cpu"]
    c.check(t, "Parca stored the cpu/nanoseconds profile under the scope's name, kestrel")
    c.check([x for x in types if x.get("name") == "kestrel" and x.get("sampleType") == "samples"],
            "Parca stored the samples/count profile")
    if t:
        t = t[0]
        q = "%s:%s:%s:%s:%s%s{}" % (t["name"], t["sampleType"], t["sampleUnit"], t["periodType"],
                                     t["periodUnit"], ":delta" if t.get("delta") else "")
        rc, out, err = pprof_top(parca.merged_pprof(q, t0 - 3600, time.time() + 60))
        c.check(rc == 0, "go tool pprof reads Parca's profile: %s" % err[-300:])
        types_, samples, locs = parse_raw(out)
        total = sum(s_["values"][0] for s_ in samples)
        r = subprocess.run([KESTREL, "export", "--format", "folded", "--sample-type", "cpu", "-o", "-",
                            stem + ".raw"], capture_output=True, text=True)
        want = sum(int(l.rsplit(" ", 1)[1]) for l in r.stdout.splitlines() if l.strip())
        print("Parca's CPU total %d ns, kestrel's %d ns; its profile by leaf: %s" % (
            total, want, leaf_totals(samples, locs, 0)[:4]))
        c.check(total == want, "Parca holds every CPU nanosecond exported: %d of %d" % (total, want))
        # Names: Parca v0.28.0 reads a line's function as function_table[function_index - 1]
        # (pkg/profile/encode.go:70), while its pinned protocol (profiles/v1development
        # v0.3.0) and its own validator (pkg/normalizer/otel.go:471) make entry 0 the zero
        # value. otlpcheck wrote the request's stacks read that way: Parca's must be exactly
        # those, and differ from the request's own names (which otlpcheck checked above).
        got = pprof_folded(parca.merged_pprof(q, t0 - 3600, time.time() + 60))
        pred = {}
        with open(shifted) as f:
            for l in f:
                k, v = l.rstrip("\n").rsplit(" ", 1)
                pred[k] = pred.get(k, 0) + int(v)
        right = {}
        for l in r.stdout.splitlines():
            k, v = l.rsplit(" ", 1)
            k = k.split(";", 1)[1] if ";" in k else ""  # without the thread root
            right[k] = right.get(k, 0) + int(v)
        diff = sorted(set(got) ^ set(pred)) + [k for k in got if k in pred and got[k] != pred[k]]
        print("Parca's stacks: %d, %d ns; the request's read as function_index - 1: %d, %d ns; "
              "differing: %r" % (len(got), sum(got.values()), len(pred), sum(pred.values()), diff[:4]))
        c.check(got and got == pred, "Parca's CPU stacks are exactly the request's, each frame named by "
                "function_table[function_index - 1] as Parca v0.28.0 reads it (if this fails with another "
                "Parca version, see docs/exports.md)")
        c.check(pred != right, "that reading differs from the request's own names (the test sees the shift)")
finally:
    parca.stop()
    if c.failed:
        print(parca.logs()[-3000:])
c.exit()

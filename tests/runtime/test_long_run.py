#!/usr/bin/env python3
"""A long run made short: the row table cut to 2,000 rows (KESTREL_TEST_SAMPLE_ROWS,
a knob for tests only), so that a few seconds of four busy threads go far past it,
as hours would past the real 4,194,304. Past the rows every sample must still be
counted with its stack, thread and state: the CPU time of all samples is the threads'
own CPU time, the running samples are that CPU time times the rate (the perf engine
samples every period of CPU time), share_a():share_b() is 1:3 in the whole profile and
in the untimed part alone, within three standard errors, and the raw file, the CLI's
report and every export that has a time order say where it ends."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from longrun import check_counts, counts
from rtlib import Checker, ROOT, load, prog, profiled_env, run, tmpdir

KESTREL = os.path.join(ROOT, "build", "bin", "kestrel")
ROWS = 2000
HZ = 997

c = Checker()
d = tmpdir()
raw = os.path.join(d, "long.raw.json")
r = run([prog("prog_longrun"), "1500"],
        profiled_env(raw, hz=HZ, extra={"KESTREL_TEST_SAMPLE_ROWS": str(ROWS)}))
c.check(r.returncode == 0, "the program ran: %s" % r.stderr)
cpu_ns = int(r.stdout.split()[0])
p = load(raw)

c.check(len(p["samples"]) == ROWS, "the row table is full: %d rows" % len(p["samples"]))
c.check(p["tables"]["samples"] == [ROWS, ROWS], "tables.samples says so: %r" % p["tables"]["samples"])
end = p.get("timed_end_ns")
c.check(isinstance(end, int) and end > 0, "timed_end_ns is written: %r" % end)
# No untimed sample is before the end of the time order (by construction); rows may go
# on past it by what an engine drains at once (the perf engine: 500 ms at most).
late = max(s[0] for s in p["samples"]) - end
c.check(late <= 1000000000, "rows go on at most 1 s past the end of the time order: %d ns" % late)
u = p.get("untimed", [])
c.check(len(u) > 0 and p["tables"]["untimed"] == [len(u), 1 << 18],
        "the untimed counts and their table: %d, %r" % (len(u), p["tables"].get("untimed")))
c.check(p["past_limits"]["samples"] == 0, "nothing went past both tables")
c.check(p["dropped"] == 0, "nothing dropped: %d" % p["dropped"])

total_samples = check_counts(c, p, cpu_ns, HZ)
rows, agg = counts(p)
running = sum(x[2] for x in rows + agg if x[1] == 0)

# the CLI: every reader and export that has time says where it ends
rep = subprocess.run([KESTREL, "report", raw], capture_output=True, text=True)
c.check(rep.returncode == 0 and ("time order ends at %.3f s" % (end / 1e9)) in rep.stdout,
        "the report says where the time order ends: %s" % rep.stdout[-600:])
c.check(("%d samples" % total_samples) in rep.stdout.splitlines()[1],
        "the report counts every sample (%d): %s" % (total_samples, rep.stdout.splitlines()[1]))
stem = os.path.join(d, "out")
for fmt, suffix in (("summary", ".profile.json"), ("cpuprofile", ".cpuprofile"),
                    ("speedscope", ".speedscope.json"), ("html", ".html"), ("pprof", ".pb.gz")):
    out = stem + suffix
    e = subprocess.run([KESTREL, "export", "--format", fmt, "-o", out, raw], capture_output=True,
                       text=True)
    c.check(e.returncode == 0, "export %s: %s" % (fmt, e.stderr))
if os.path.exists(stem + ".profile.json"):
    t = json.load(open(stem + ".profile.json"))["totals"]
    c.check(t.get("timed_end_ns") == end and t.get("untimed_samples") == sum(x[2] for x in agg),
            "profile.json: timed_end_ns and untimed_samples: %r" % t)
    # On-CPU by default, as the report's table: the running samples, timed or not.
    c.check(t.get("samples") == running, "profile.json counts every running sample (%d): %r"
            % (running, t.get("samples")))
    out = stem + ".all.profile.json"
    e = subprocess.run([KESTREL, "export", "--format", "summary", "--state", "all", "-o", out, raw],
                       capture_output=True, text=True)
    c.check(e.returncode == 0, "export summary --state all: %s" % e.stderr)
    t = json.load(open(out))["totals"] if e.returncode == 0 else {}
    c.check(t.get("samples") == total_samples, "profile.json --state all counts every sample "
            "(%d): %r" % (total_samples, t.get("samples")))
if os.path.exists(stem + ".cpuprofile"):
    cp = json.load(open(stem + ".cpuprofile"))
    c.check(cp["startTime"] < cp.get("timedEndTime", -1) < cp["endTime"],
            "cpuprofile: timedEndTime between start and end")
if os.path.exists(stem + ".speedscope.json"):
    ss = json.load(open(stem + ".speedscope.json"))
    c.check(any("time order until %.3f s" % (end / 1e9) in pr["name"] for pr in ss["profiles"]),
            "speedscope: the threads' names say where time order ends")
if os.path.exists(stem + ".html"):
    html = open(stem + ".html").read()
    c.check('"timed_end_ns":%d' % end in html, "html: the viewer's data has timed_end_ns")
if os.path.exists(stem + ".pb.gz"):
    g = subprocess.run(["go", "tool", "pprof", "-raw", stem + ".pb.gz"], capture_output=True,
                       text=True, env=dict(os.environ, HOME=d))
    c.check("time order ends at" in g.stdout, "pprof: a comment says where time order ends")
c.exit()

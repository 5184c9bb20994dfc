#!/usr/bin/env python3
"""A real Parca (built by scripts/parca.sh) scrapes a preloaded C server for 60 s with
the configuration docs/continuous.md gives (read from the page, only the target's
address replaced): CPU from /debug/pprof/profile as a delta profile, memory from
/debug/pprof/allocs. Then Parca's own query API answers:
- /api/profiles/types lists process_cpu (cpu/nanoseconds, delta) and memory;
- the merged CPU profile of the run names the server's hot function, phase_two, first;
- the CPU totals of the scrapes (query_range) are within 20% of the CPU time the server
  used in the same windows, read from /proc/PID/stat every 0.2 s;
- the merged memory profile names the server's allocating function, churn."""
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from httplib import (ROOT, Checker, Server, free_port, leaf_totals, parse_raw, reference_output,
                     wait_listening)
from parcalib import Parca, pprof_top

c = Checker()
ref = reference_output()

with open(os.path.join(ROOT, "docs", "continuous.md")) as f:
    doc = f.read()
m = re.search(r"## Parca\n.*?```yaml\n(.*?)```", doc, re.S)
c.check(m is not None, "docs/continuous.md has Parca's configuration")
config = m.group(1)
c.check(config.count("127.0.0.1:6060") == 2, "the configuration's two jobs target 127.0.0.1:6060")

port = free_port()
s = Server({"KESTREL_HTTP": "127.0.0.1:%d" % port, "KESTREL_HEAP": "/dev/null"})
c.check(wait_listening(port), "the server listens")
pid = s.p.pid
tick = os.sysconf("SC_CLK_TCK")
cpu_curve = []  # (wall, cpu seconds of the server)
done = threading.Event()


def watch():
    while not done.is_set():
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu_curve.append((time.time(), (int(fields[11]) + int(fields[12])) / tick))
        time.sleep(0.2)


threading.Thread(target=watch, daemon=True).start()
parca = Parca(config.replace("127.0.0.1:6060", "127.0.0.1:%d" % port))
t0 = time.time()
time.sleep(60)
t1 = time.time()
time.sleep(12)  # the last scrape's window ends and is stored
done.set()


def cpu_at(t):
    """The server's CPU seconds at wall time t, interpolated."""
    for (ta, ca), (tb, cb) in zip(cpu_curve, cpu_curve[1:]):
        if ta <= t <= tb:
            return ca + (cb - ca) * (t - ta) / (tb - ta) if tb > ta else ca
    return cpu_curve[-1][1] if t > cpu_curve[-1][0] else cpu_curve[0][1]


try:
    types = parca.types()
    print("profile types: %s" % [(t.get("name"), t.get("sampleType"), t.get("sampleUnit"), t.get("delta"))
                                 for t in types])
    cpu_t = [t for t in types if t.get("name") == "process_cpu" and t.get("sampleType") == "cpu"]
    mem_t = sorted([t for t in types if t.get("name") == "memory"],
                   key=lambda t: t.get("sampleType") != "alloc_space")
    c.check(cpu_t and cpu_t[0].get("delta"), "process_cpu cpu/nanoseconds, a delta profile, is stored")
    c.check(mem_t, "a memory profile type is stored")

    def query_of(t):
        return "%s:%s:%s:%s:%s%s{instance=\"127.0.0.1:%d\"}" % (
            t["name"], t["sampleType"], t["sampleUnit"], t["periodType"], t["periodUnit"],
            ":delta" if t.get("delta") else "", port)

    if cpu_t:
        q = query_of(cpu_t[0])
        points = parca.query_range(q, t0 - 5, t1 + 15)
        total = sum(v for _, v, _ in points)
        expected = 0.0
        for ts, v, dur in points:
            d = dur / 1e9 if dur else 9.0
            expected += cpu_at(ts + d) - cpu_at(ts)
        print("scrapes: %d; Parca's CPU total %.3f s; the server's CPU time in the same windows %.3f s"
              % (len(points), total / 1e9, expected))
        for ts, v, dur in points:
            print("  %s  %.3f s of CPU over %.1f s" % (time.strftime("%H:%M:%S", time.gmtime(ts)), v / 1e9, dur / 1e9))
        c.check(len(points) >= 4, "at least 4 scrapes stored in 60 s (%d)" % len(points))
        c.check(expected > 0 and abs(total / 1e9 - expected) <= 0.2 * expected,
                "Parca's CPU total %.3f s is within 20%% of the server's %.3f s" % (total / 1e9, expected))
        rc, out, err = pprof_top(parca.merged_pprof(q, t0 - 5, t1 + 15))
        c.check(rc == 0, "go tool pprof reads Parca's merged CPU profile (%s)" % err[-300:])
        types_, samples, locs = parse_raw(out)
        cpu = leaf_totals(samples, locs, 0)
        print("Parca's CPU profile, by leaf function: %s" % cpu[:5])
        c.check(cpu and cpu[0][0] == "phase_two", "phase_two is the hot function in Parca's CPU profile")
    if mem_t:
        q = query_of(mem_t[0])
        rc, out, err = pprof_top(parca.merged_pprof(q, t0 - 5, t1 + 15))
        c.check(rc == 0, "go tool pprof reads Parca's merged memory profile (%s)" % err[-300:])
        types_, samples, locs = parse_raw(out)
        mem = leaf_totals(samples, locs, 0)
        print("Parca's memory profile (%s), by leaf function: %s" % (types_, mem[:5]))
        names = [n for n, _ in mem]
        c.check("churn" in names[:3], "churn, the server's allocating function, is named in Parca's memory profile")
finally:
    parca.stop()
    out, err, rc = s.stop()
    if c.failed:
        print(parca.logs()[-3000:])
c.check(rc == 0 and out == ref, "the server's output is the unprofiled one")
c.exit()

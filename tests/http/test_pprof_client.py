#!/usr/bin/env python3
"""The scrape endpoints read by the real client, go tool pprof (Debian's golang-go):
/debug/pprof/heap, /debug/pprof/allocs and /debug/pprof/profile?seconds=2 of the test
server program, with function names from /debug/pprof/symbol alone (-symbolize=remote,
no binaries at hand). The CPU window falls in the program's phase two, so phase_two()
must be its hot function and phase_one() (the first phase's) must be absent. Once
without KESTREL_PROFILE (a session that only serves windows) and once with it (a
window cut from the running session, whose raw file is still written). The program's
output is what it prints unprofiled."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from httplib import (Checker, Server, free_port, get, leaf_totals, parse_raw, pprof_raw,
                     reference_output, wait_listening)

c = Checker()
ref = reference_output()
c.check("same=1" in ref, "the unprofiled program ran: %r" % ref)


def session(with_file):
    port = free_port()
    env = {"KESTREL_HTTP": "127.0.0.1:%d" % port, "KESTREL_HEAP": "/dev/null"}
    raw = None
    if with_file:
        d = os.path.dirname(os.path.abspath(__file__))
        import tempfile
        raw = os.path.join(tempfile.mkdtemp(prefix="kestrel-http-raw-"), "cpu.json")
        env["KESTREL_PROFILE"] = raw
    what = "with KESTREL_PROFILE" if with_file else "KESTREL_HTTP alone"
    s = Server(env)
    c.check(wait_listening(port), what + ": the server listens")
    base = "http://127.0.0.1:%d/debug/pprof/" % port

    # profile?seconds=2 (first: the heap checks want churn to have run a while): samples/count and cpu/nanoseconds, phase_two hot, phase_one absent
    rc, out, err = pprof_raw(base + "profile?seconds=2")
    c.check(rc == 0, what + ": go tool pprof read /profile (%s)" % err[-300:])
    types, samples, locs = parse_raw(out)
    c.check(types == ["samples/count", "cpu/nanoseconds[dflt]"],
            what + ": CPU sample types %r" % types)
    cpu = leaf_totals(samples, locs, 1)
    c.check(cpu and cpu[0][0] == "phase_two", what + ": phase_two is the hot function: %r" % cpu[:4])
    c.check("phase_one" not in dict(cpu), what + ": phase_one ran before the window: %r" % cpu[:4])
    dur = re.search(r"^Duration: ([\d.]+)(s?)$", out, re.M)
    c.check(dur and abs(float(dur.group(1)) - 2.0) < 0.005, what + ": the window lasted 2 s: %r" % (dur and dur.group(0)))
    c.check(all(s["labels"].get("state") == "running" for s in samples),
            what + ": every sample has state running")
    c.check(all(s["labels"].get("thread") for s in samples), what + ": every sample has a thread")
    n = sum(s["values"][0] for s in samples)
    c.check(n > 100, what + ": the window has samples (%d)" % n)
    cpu_locs = locs

    # heap: four sample types, inuse_space the default, retain_blocks holds the most
    rc, out, err = pprof_raw(base + "heap")
    c.check(rc == 0, what + ": go tool pprof read /heap (%s)" % err[-300:])
    types, samples, locs = parse_raw(out)
    c.check(types == ["alloc_objects/count", "alloc_space/bytes", "inuse_objects/count",
                      "inuse_space/bytes[dflt]"], what + ": heap sample types %r" % types)
    inuse = leaf_totals(samples, locs, 3)
    c.check(inuse and inuse[0][0] == "retain_blocks",
            what + ": retain_blocks holds the most in use: %r" % inuse[:3])

    # allocs: the same profile, alloc_space the default; churn allocated the most
    rc, out, err = pprof_raw(base + "allocs")
    c.check(rc == 0, what + ": go tool pprof read /allocs (%s)" % err[-300:])
    types, samples, locs = parse_raw(out)
    c.check(types == ["alloc_objects/count", "alloc_space/bytes[dflt]", "inuse_objects/count",
                      "inuse_space/bytes"], what + ": allocs sample types %r" % types)
    allocd = leaf_totals(samples, locs, 1)
    c.check(allocd and allocd[0][0] == "churn",
            what + ": churn allocated the most: %r" % allocd[:3])

    # symbol: what go tool pprof asked for, asked directly
    r = get(port, "/debug/pprof/symbol")
    c.check(r and r[0] == 200 and r[2] == b"num_symbols: 1\n", what + ": GET /symbol %r" % (r,))
    addr = next((l["addr"] for l in cpu_locs.values() if l["names"][:1] == ["phase_two"]), None)
    if c.check(addr is not None, what + ": phase_two has a location"):
        body = ("0x%x+0x1" % addr).encode()
        r = get(port, "/debug/pprof/symbol", method="POST", body=body)
        c.check(r and r[2] == ("num_symbols: 1\n0x%x phase_two\n" % addr).encode(),
                what + ": POST /symbol names phase_two and nothing for 0x1: %r" % (r,))

    if not with_file:
        # kestrel's own CLI: fetched, symbolized with its full symbolizer (lines)
        import subprocess
        from httplib import KESTREL
        r = subprocess.run([KESTREL, "report", base + "profile?seconds=2"], capture_output=True,
                           text=True, timeout=120)
        c.check(r.returncode == 0, what + ": kestrel report URL exits 0 (%s)" % r.stderr[-300:])
        c.check(r.stdout.startswith("kestrel: " + base + "profile?seconds=2\n"),
                what + ": the report names the URL: %r" % r.stdout[:120])
        # phase_two's time is in mix(), inlined into it: the full symbolizer gives the
        # inlined function its own row, at its line.
        c.check(re.search(r"\bmix\b.*prog_server\.c:\d+", r.stdout) is not None,
                what + ": the report has phase_two's inlined mix at its line: %r" % r.stdout[:800])
        r = subprocess.run([KESTREL, "export", "--format", "folded", base + "heap"],
                           capture_output=True, text=True, timeout=120)
        c.check(r.returncode == 0 and "retain_blocks" in r.stdout,
                what + ": kestrel export URL: %r" % (r.stdout[-300:] + r.stderr[-300:]))
        vd = s.dir
        r = subprocess.run([KESTREL, "view", base + "profile?seconds=1"], capture_output=True,
                           text=True, timeout=120, cwd=vd)
        c.check(r.returncode == 0 and os.path.getsize(os.path.join(vd, "profile.html")) > 1000,
                what + ": kestrel view URL writes profile.html: %s" % r.stderr[-300:])
        rc2, out2, err2 = pprof_raw(base + "profile?seconds=1&state=all")
        t2, s2, l2 = parse_raw(out2)
        states = {x["labels"].get("state") for x in s2}
        c.check(rc2 == 0 and states == {"running", "waiting"},
                what + ": state=all has running and waiting samples: %r" % states)
        r = subprocess.run([KESTREL, "report", base + "profile?seconds=0"], capture_output=True,
                           text=True, timeout=60)
        c.check(r.returncode != 0 and not r.stdout and "HTTP 400" in r.stderr and
                r.stderr.startswith("kestrel: " + base), what + ": an HTTP error: %r" % r.stderr)

    out, err, rc = s.stop()
    c.check(rc == 0, what + ": the program exits 0 (%d)" % rc)
    c.check(out == ref, what + ": its output is the unprofiled one: %r vs %r" % (out, ref))
    if with_file:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        from rawjson import load as load_raw  # a streamed file's chunks joined
        d = load_raw(raw)
        c.check(len(d["samples"]) > 0, what + ": the raw file was written as well")


# Both engines, unless the environment picks one.
import httplib
for engine in [os.environ["KESTREL_PROFILE_ENGINE"]] if os.environ.get("KESTREL_PROFILE_ENGINE") \
        else ["signal", "perf"]:
    httplib.ENGINE = engine
    print("engine " + engine, file=sys.stderr)
    session(False)
    session(True)
c.exit()

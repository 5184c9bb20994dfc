#!/usr/bin/env python3
"""Activation from the environment: KESTREL_PROFILE_HZ is clamped to 10..10000 (the
file keeps the rate asked for in requested_hz, and in rate_hz the rate sampled at: the
signal engine's is at most the kernel's tick rate, rtlib.rate_of), defaults to 997, and
anything that is
not a number is one line on stderr and the default; an unknown
KESTREL_PROFILE_ENGINE is one line on stderr and no profile, the program unaffected.
KESTREL_PROFILE_TRIGGER=sampler has the signal engine's sampler signal the threads at the
rate asked (no timers: tick_hz 0), and anything but timers or sampler is one line and
the timers."""
import os
import subprocess

from rtlib import ENGINE, Checker, load, prog, profiled_env, rate_of, tmpdir, validate

c = Checker()
exe = prog("prog_threads")


def run(hz=None, extra=None):
    d = tmpdir()
    path = os.path.join(d, "a.json")
    env = profiled_env(path, hz=hz, extra=extra)
    if hz is None:
        env.pop("KESTREL_PROFILE_HZ", None)
    p = subprocess.run([exe, "1", "20"], env=env, capture_output=True, text=True, timeout=120)
    c.check(p.returncode == 0, "exit 0 (hz=%r): %s" % (hz, p.stderr))
    return p.stderr, (load(path) if os.path.exists(path) else None)


for hz, rate, req in ((None, 997, 997), ("5", 10, 5), ("20000", 10000, 20000), ("250", 250, 250)):
    err, d = run(hz)
    c.check(d is not None, "hz=%r: a profile" % hz)
    if d:
        validate(d, c, "hz=%r" % hz)
        rate_of(d, c, rate)
        c.check(d["requested_hz"] == req, "hz=%r: requested_hz %s" % (hz, d["requested_hz"]))
    c.check("KESTREL_PROFILE_HZ" not in err, "hz=%r: nothing said: %r" % (hz, err))

err, d = run("fast")
lines = [l for l in err.splitlines() if "KESTREL_PROFILE_HZ" in l]
c.check(len(lines) == 1 and lines[0].startswith("kestrel: KESTREL_PROFILE_HZ=fast"),
        "one line for a bad rate: %r" % err)
c.check(d is not None and d["requested_hz"] == 997, "a bad rate means the default")
if d:
    rate_of(d, c, 997)

if ENGINE == "signal":
    err, d = run("997", {"KESTREL_PROFILE_TRIGGER": "sampler"})
    c.check(d is not None and d["rate_hz"] == 997 and d["engine_stats"].get("tick_hz") == 0,
            "trigger sampler: rate_hz %s, %s" % (d and d["rate_hz"], d and d["engine_stats"]))
    on_cpu = sum(1 for s in d["samples"] if s[3] == 0) if d else 0
    c.check(on_cpu >= 20, "trigger sampler: %d on-CPU samples" % on_cpu)
    c.check(err == "", "trigger sampler: nothing said: %r" % err)
    err, d = run("997", {"KESTREL_PROFILE_TRIGGER": "often"})
    c.check(err.startswith("kestrel: KESTREL_PROFILE_TRIGGER=often") and len(err.splitlines()) == 1,
            "a bad trigger: one line: %r" % err)
    if d:
        rate_of(d, c, 997)

err, d = run(extra={"KESTREL_PROFILE_ENGINE": "bogus"})
c.check(d is None, "unknown engine: no profile")
c.check(len(err.splitlines()) == 1 and "KESTREL_PROFILE_ENGINE=bogus" in err,
        "unknown engine: one line: %r" % err)
c.exit()

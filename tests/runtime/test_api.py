#!/usr/bin/env python3
"""The in-process API without environment variables (prog_api.c, linked with
libkestrel.a; it checks the API's return values itself): a session around a region of
code writes a raw file at the rate asked for, by the engine under test, with the main
thread, a thread made during the session and one made before it that registered
itself (fiber 7, label worker7), each with the samples of its CPU time; a second
session writes a file of its own at the same rate; a session of two threads faults in
the state of those threads only, not of all 1024 slots; 50 sessions one after another
leave the address space as they found it, and so do 50 more each with a thread that
ends after its session, and 50 more each with a thread that puts an alternate signal
stack of its own in place of the runtime's (the signal engine's alternate stack, one
per registered thread, goes back to its pool when the thread ends, not only when it
unregisters, and when the program replaced it).

Under qemu-user (KESTREL_TEST_ARCH=aarch64) the pages faulted in are not checked: what
getrusage counts there is the emulator's."""
import os
import shutil
import subprocess
import sys

from rtlib import EMULATED, ENGINE, Checker, load, prog, rate_of, tmpdir, validate

c = Checker()
d = tmpdir()
env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
env["KESTREL_PROFILE_ENGINE"] = ENGINE
p = subprocess.run([prog("prog_api"), d], env=env, capture_output=True, text=True,
                   timeout=300)
c.check(p.returncode == 0, "prog_api: status %d: %s" % (p.returncode, p.stderr[-2000:]))
got = dict(line.split() for line in p.stdout.splitlines() if len(line.split()) == 2)


def samples_of(raw, label):
    """On-CPU samples of the threads labelled `label`."""
    threads = raw["threads"]
    return sum(1 for s in raw["samples"] if s[3] == 0 and threads[s[1]]["label"] == label)


def read(name):
    path = os.path.join(d, name)
    if not c.check(os.path.exists(path), "%s written" % name):
        return None
    raw = load(path)
    validate(raw, c, name)
    return raw


region = read("region.json")
if region:
    hz = rate_of(region, c, 997)
    c.check(len(region["threads"]) == 3, "region: %d threads" % len(region["threads"]))
    m, t, k = (samples_of(region, x) for x in ("main", "thread", "worker7"))
    # half the samples of their CPU time, and more
    c.check(m > 0.5 * hz * 0.2 and t > 0.4 * hz * 0.15 and k > 0.4 * hz * 0.15,
            "region: samples main %d (200 ms), thread %d, worker7 %d (150 ms each)" % (m, t, k))
    c.check(any(th["fiber"] == 7 for th in region["threads"]),
            "region: the registered thread's fiber 7: %s" % region["threads"])

second = read("second.json")
if second:
    hz = rate_of(second, c, 997)  # start(0) keeps the rate
    m = samples_of(second, "main")
    c.check(m > 0.2 * hz * 0.1, "second: %d samples of main's 100 ms" % m)

# 60-70 pages here, the process's first session, loaded or not; 899-1128 when every
# slot was touched. Under qemu-user the count is the emulator's: 1320 pages for this
# session (its code translated for the first time, its thread for the guest's), 340
# for the same session again, so it tells nothing of the runtime's 1024 slots.
faults = int(got.get("faults", -1))
if EMULATED:
    print("faults: %d pages, not checked under qemu-user" % faults, file=sys.stderr)
else:
    c.check(0 <= faults < 400, "a session of two threads faulted %d pages in" % faults)
# The perf engine's mapped 3.3 MB of slot state per session and kept it (334 MB
# over 100).
grown = int(got.get("vm_grown", 1 << 30))
c.check(grown < 4096, "50 sessions grew the address space by %d KiB" % grown)
# 68 KiB per session when an alternate stack stayed with each ended thread.
grown = int(got.get("vm_grown_outliving", 1 << 30))
c.check(grown < 1024, "50 sessions, each with a thread that outlived it, grew the address "
        "space by %d KiB" % grown)
grown = int(got.get("vm_grown_replacing", 1 << 30))
c.check(grown < 1024, "50 sessions, each with a thread that replaced its alternate signal "
        "stack, grew the address space by %d KiB" % grown)
shutil.rmtree(d)
c.exit()

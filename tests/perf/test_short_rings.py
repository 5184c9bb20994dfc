#!/usr/bin/env python3
"""What a process of a build keeps under the perf engine, whose first ring starts small:

1. A short process (about 40 ms of CPU) and a longer one (about 400 ms) drop nothing,
   and their on-CPU samples stand for their CPU time (at most 3 periods short).
2. Two busy processes sharing one CPU preempt each other (on a busy machine a short
   process is preempted often, and its switch samples fill its ring too): nothing
   dropped, their samples stand for their CPU time, and where the kernel samples the
   switches (privileged), a process that then sleeps gets waiting samples whose stack
   goes through the sleep.
"""
import os, subprocess, sys, tempfile
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [TESTS, os.path.join(TESTS, "runtime")]
from rawjson import load as load_raw  # noqa: E402  (a streamed raw file's chunks joined)
from rtlib import LIB, Checker  # noqa: E402

c = Checker()

# Busy until the process has used `cpu` seconds, then sleeps `sleep` seconds.
BURN = """
import sys, time
cpu, sleep = float(sys.argv[1]), float(sys.argv[2])
x = 0
while time.process_time() < cpu:
    for i in range(1000):
        x += i
if sleep:
    time.sleep(sleep)
"""


def start(raw, cpu, sleep=0.0, pin=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env.update(LD_PRELOAD=LIB, KESTREL_PROFILE=raw, KESTREL_PROFILE_ENGINE="perf")
    cmd = [sys.executable, "-c", BURN, str(cpu), str(sleep)]
    if pin is not None:
        cmd = ["taskset", "-c", str(pin)] + cmd
    return subprocess.Popen(cmd, env=env)


def samples_cover(d, what):
    st = d["engine_stats"]
    period = 1e9 / d["rate_hz"]
    on = sum(1 for s in d["samples"] if s[3] == 0)
    cpu = st["threads_cpu_ns"]
    c.check(on * period >= cpu - 3 * period,
          f"{what}: {on} on-CPU samples stand for its {cpu / 1e6:.1f} ms of CPU")


def main():
    tmp = tempfile.mkdtemp(prefix="kestrel-short-rings-")
    for cpu, what in ((0.04, "about 40 ms of CPU"), (0.4, "about 400 ms of CPU")):
        raw = os.path.join(tmp, f"burn{cpu}.raw.json")
        c.check(start(raw, cpu).wait() == 0, f"{what}: the program ran")
        d = load_raw(raw)
        c.check(d["dropped"] == 0, f"{what}: nothing dropped ({d['dropped']})")
        samples_cover(d, what)

    raws = [os.path.join(tmp, f"pin{i}.raw.json") for i in range(2)]
    procs = [start(raws[0], 0.04, 0.3, pin=0), start(raws[1], 0.04, 0.3, pin=0)]
    c.check(all(p.wait() == 0 for p in procs), "two processes on one CPU ran")
    ds = [load_raw(r) for r in raws]
    for i, d in enumerate(ds):
        c.check(d["dropped"] == 0, f"process {i}, preempted: nothing dropped ({d['dropped']})")
        samples_cover(d, f"process {i}, preempted")
    if not ds[0]["engine_stats"].get("switch_stacks"):
        print("skip: the kernel does not sample switches here (unprivileged)", file=sys.stderr)
    else:
        for i, d in enumerate(ds):
            period = 1e9 / d["rate_hz"]
            waiting = [s for s in d["samples"] if s[3] != 0]
            # 0.3 s asleep: its waiting samples, and no more than the sleep and a
            # few periods (a preemption's interval gives none)
            c.check(0.25e9 / period <= len(waiting) <= 0.3e9 / period + 20,
                  f"process {i}: {len(waiting)} waiting samples for its 0.3 s asleep")
            deep = [s for s in waiting if len(d["stacks"][s[2]]) >= 3]
            c.check(len(deep) >= 0.9 * len(waiting),
                  f"process {i}: the sleep's stack walked ({len(deep)} of {len(waiting)} "
                  "waiting samples with 3 frames or more)")
    c.exit()


main()

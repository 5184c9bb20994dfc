#!/usr/bin/env python3
"""The perf engine end to end, on the preloaded runtime:

1. No signal, ever: a program that counts every signal a profiler could send (no
   SA_RESTART, so one would also surface as EINTR) and checks its sleeps, polls and
   reads, profiled with KESTREL_PROFILE_ENGINE=perf at 997 and 10000 Hz: nothing
   noticed, and the profile is right: the busy thread's on-CPU samples match its CPU
   time x rate and land in the busy function; the blocked thread's waiting samples
   match its blocked time x rate, and where the kernel sampled the switches their
   stacks pass through the blocking function.
2. Threads made by threads: each of a chain of three (main's thread, its thread, and
   that one's) gets on-CPU samples for its CPU time x rate, through the per-CPU events
   they inherit (the file says how many CPU rings); a raw clone() thread that never
   registered gets none, and its samples are counted as dropped, not given to others.
3. auto picks perf where perf_event_open is allowed, silently.
4. perf_event_open refused by a seccomp filter (tests/perf/noperf.c): auto falls back
   to the signal engine with one line on stderr saying why; perf forced says why.
"""
import json, os, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from rawjson import load as load_raw  # noqa: E402  (a streamed raw file's chunks joined)

LIB = os.path.abspath("build/lib/libkestrel.so")
QUIET = os.path.abspath("build/tests/perf/quiet")
WORK = os.path.abspath("build/tests/perf/work")
NOPERF = os.path.abspath("build/tests/perf/noperf")
NESTED = os.path.abspath("build/tests/perf/nested")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)
    else:
        print("ok:", what, file=sys.stderr)


def steal_s():
    """CPU time the hypervisor took from this machine's CPUs so far (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else 0.0


def profiled(cmd, raw, engine, hz, wrap=()):
    """Runs cmd profiled; a wrapper (seccomp, setpriv) runs first, unprofiled. The
    result's .steal_s is the time the hypervisor took from the CPUs meanwhile: the
    kernel's sampling timer runs on through it, a thread's CPU clock does not, so a
    thread running then gets samples beyond its CPU time x rate (at most that x rate)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env.pop("LD_PRELOAD", None)
    prof = [f"LD_PRELOAD={LIB}", f"KESTREL_PROFILE={raw}", f"KESTREL_PROFILE_HZ={hz}"]
    if engine:
        prof.append(f"KESTREL_PROFILE_ENGINE={engine}")
    s0 = steal_s()
    p = subprocess.run(list(wrap) + ["env"] + prof + cmd, env=env, capture_output=True,
                       text=True, timeout=120)
    p.steal_s = steal_s() - s0
    return p


def thread_rows(raw, tid):
    idx = [i for i, t in enumerate(raw["threads"]) if t.get("tid") == tid]
    return [r for r in raw["samples"] if r[1] in idx]


def in_range(pc, rng):
    return rng[0] <= pc < rng[1]


def test_no_signals(tmp, hz, nobody=False):
    raw_p, side_p = os.path.join(tmp, f"q{hz}{nobody}.json"), os.path.join(tmp, f"q{hz}{nobody}.side")
    wrap = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if nobody else []
    p = profiled([QUIET, "1.0", side_p], raw_p, "perf", hz, wrap)
    hz_label = hz
    hz = f"{hz} (unprivileged)" if nobody else hz
    check(p.returncode == 0, f"{hz} Hz: the program noticed nothing (exit {p.returncode}, "
          f"stderr {p.stderr.strip()!r})")
    side = json.load(open(side_p))
    check(side["signals"] == 0, f"{hz} Hz: no signal delivered ({side['signals']})")
    check(side["eintr"] == 0 and side["short_waits"] == 0,
          f"{hz} Hz: no EINTR ({side['eintr']}), no wait cut short ({side['short_waits']})")
    raw = load_raw(raw_p)
    check(raw.get("engine") == "perf", f"{hz} Hz: the file says engine perf ({raw.get('engine')!r})")
    check(p.stderr.strip() == "", f"{hz} Hz: nothing on stderr ({p.stderr.strip()!r})")

    burn = [r for r in thread_rows(raw, side["burn_tid"]) if r[3] == 0]
    want = side["burn_cpu_ns"] / 1e9 * hz_label
    # Within 5% below and 2% above CPU time x rate, or 2*sqrt(k) either side over the
    # thread's k slices (the CPU's sampling clock runs on across threads that inherit
    # the events, see test_nested), plus above it the samples of the time the
    # hypervisor took meanwhile (the sampling timer's time, not the thread's CPU time).
    slack = 2 * (side["burn_switches"] + 1) ** 0.5 + 2
    stolen = p.steal_s * hz_label
    check(want - max(slack, 0.05 * want) <= len(burn) <=
          max(want + slack, 1.02 * want + 2) + stolen,
          f"{hz} Hz: busy thread {len(burn)} on-CPU samples for {want:.0f} expected "
          f"(+{slack:.0f}: {side['burn_switches']} context switches; +{stolen:.0f}: "
          f"{p.steal_s:.2f} s stolen by the hypervisor)")
    leaf_in = sum(1 for r in burn if raw["stacks"][r[2]] and
                  in_range(raw["stacks"][r[2]][0], side["burn"]))
    check(leaf_in >= 0.95 * len(burn) and burn,
          f"{hz} Hz: {leaf_in}/{len(burn)} busy samples have their leaf in the busy function")
    check(all(len(r) >= 5 and r[4] > 0 for r in burn),
          f"{hz} Hz: every on-CPU sample carries its CPU ns")

    wrows = thread_rows(raw, side["wait_tid"])
    waiting = [r for r in wrows if r[3] == 1]
    want_w = side["wait_ns"] / 1e9 * hz_label
    # The thread is blocked all but a few microseconds per 3-5 ms round.
    check(0.90 * want_w <= len(waiting) <= 1.02 * want_w + 2,
          f"{hz} Hz: blocked thread {len(waiting)} waiting samples for about {want_w:.0f}")
    oncpu_w = len(wrows) - len(waiting)
    check(oncpu_w <= 0.05 * len(wrows) + 2,
          f"{hz} Hz: blocked thread has few on-CPU samples ({oncpu_w})")
    stats = raw.get("engine_stats", {})
    through = sum(1 for r in waiting
                  if any(in_range(pc, side["wait"]) for pc in raw["stacks"][r[2]]))
    if stats.get("switch_stacks"):
        check(through >= 0.9 * len(waiting) and waiting,
              f"{hz} Hz: {through}/{len(waiting)} waiting stacks pass through the blocking "
              "function (switches sampled by the kernel)")
    else:
        # Stacks read from /proc while blocked, reused for the short episodes between
        # two drains (counted as guessed).
        check(through >= 0.8 * len(waiting) and waiting,
              f"{hz} Hz: {through}/{len(waiting)} waiting stacks pass through the blocking "
              f"function (read from /proc; {stats.get('waits_guessed')} reused)")
    check(stats.get("switch_stacks") == (0 if nobody else stats.get("switch_stacks")),
          f"{hz} Hz: the file says whether switches were sampled ({stats})")


def test_nested(tmp, hz=997):
    raw_p, side_p = os.path.join(tmp, "nested.json"), os.path.join(tmp, "nested.side")
    p = profiled([NESTED, "400", side_p], raw_p, "perf", hz)
    check(p.returncode == 0 and p.stderr.strip() == "",
          f"nested threads: exit {p.returncode}, stderr {p.stderr.strip()!r}")
    raw, side = load_raw(raw_p), json.load(open(side_p))
    stats = raw.get("engine_stats", {})
    release = tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
    if release >= (5, 13):  # inherit_thread
        check(1 <= stats.get("cpu_rings", 0) <= os.cpu_count(),
              f"nested threads: per-CPU rings on this kernel ({stats})")
    # Threads that inherit the per-CPU events share a CPU's sampling clock: a period
    # that starts in one thread can end in the next, and across a chain of threads
    # made by threads the kernel moves samples between them (measured here: each
    # thread within -12%..+13% of CPU time x rate, perf record -9%..+8%; docs/perf-engine.md).
    # The total is kept: every sample goes to the thread running when it fired.
    total_got = total_want = 0
    for i, t in enumerate(side["threads"]):
        got = sum(1 for r in thread_rows(raw, t["tid"]) if r[3] == 0)
        want = t["cpu_ns"] / 1e9 * hz
        total_got += got
        total_want += want
        check(0.8 * want <= got <= 1.2 * want,
              f"nested threads: thread at depth {i + 1}: {got} on-CPU samples for {want:.0f}")
    rt = side["raw"]
    check(not thread_rows(raw, rt["tid"]), "the raw clone() thread has no samples of its own")
    want = rt["cpu_ns"] / 1e9 * hz
    unreg = stats.get("samples_unregistered", 0)
    if stats.get("cpu_rings"):
        check(0.8 * want <= unreg <= 1.2 * want,
              f"its {unreg} samples are counted as unregistered (about {want:.0f})")
        total_got += unreg
        total_want += want
        check(0.98 * total_want - 2 <= total_got <= 1.02 * total_want + 2 + p.steal_s * hz,
              f"nested threads: {total_got} samples in all for {total_want:.0f} "
              "(CPU time x rate of the four)")


def test_auto_takes_perf(tmp):
    raw_p = os.path.join(tmp, "auto.json")
    p = profiled([WORK, "2", "60", os.path.join(tmp, "w.side")], raw_p, "auto", 997)
    raw = load_raw(raw_p)
    check(p.returncode == 0 and raw.get("engine") == "perf" and p.stderr == "",
          f"auto with perf_event_open allowed: engine {raw.get('engine')!r}, "
          f"stderr {p.stderr.strip()!r}")


def test_fallback(tmp):
    raw_p = os.path.join(tmp, "fallback.json")
    p = profiled([WORK, "2", "120", os.path.join(tmp, "w.side")], raw_p, "auto", 997,
                 wrap=[NOPERF])
    check(p.returncode == 0, f"refused perf_event_open: program exit {p.returncode}")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(len(lines) == 1, f"refused perf_event_open: one line on stderr ({lines!r})")
    line = lines[0] if lines else ""
    check(line.startswith("kestrel:") and "perf" in line and "signal" in line and
          ("EACCES" in line or "refused" in line or "denied" in line.lower()),
          f"the line says perf was refused and the signal engine runs: {line!r}")
    raw = load_raw(raw_p) if os.path.exists(raw_p) else {}
    check(raw.get("engine") == "signal", f"the file says engine signal ({raw.get('engine')!r})")
    # 2 threads x 120 ms of work: 100 samples at 997 Hz, in proportion at the signal
    # engine's rate, which its timers bound by the kernel's tick rate (the coarse clock
    # moves once a tick)
    hz = min(997, round(1 / time.clock_getres(6)))  # 6: CLOCK_MONOTONIC_COARSE
    check(raw.get("rate_hz") == hz, f"the signal engine samples at {hz} Hz ({raw.get('rate_hz')})")
    check(sum(1 for r in raw.get("samples", []) if r[3] == 0) > 100 * hz / 997,
          "the signal engine sampled the work")

    raw_p = os.path.join(tmp, "forced.json")
    p = profiled([WORK, "1", "30", os.path.join(tmp, "w.side")], raw_p, "perf", 997,
                 wrap=[NOPERF])
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(p.returncode == 0 and len(lines) == 1 and "perf" in lines[0],
          f"perf forced and refused: the program runs, one line says why ({lines!r})")
    check(not os.path.exists(raw_p) or load_raw(raw_p).get("engine") != "signal",
          "perf forced never silently becomes the signal engine")


def main():
    with tempfile.TemporaryDirectory(prefix="kestrel-perf-") as tmp:
        for hz in (997, 10000):
            test_no_signals(tmp, hz)
        if os.geteuid() == 0:  # the same as an unprivileged user: exclude_kernel only
            os.chmod(tmp, 0o777)
            test_no_signals(tmp, 997, nobody=True)
        test_nested(tmp)
        test_auto_takes_perf(tmp)
        test_fallback(tmp)
    print(f"{failures} failed", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

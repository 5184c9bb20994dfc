#!/usr/bin/env python3
"""Every system call the engines use, refused by a seccomp filter (tests/perf/deny.c,
EPERM), is named in the profile as the cause of what it cost:

- timer_create refused: the signal engine signals threads from its sampler; its note
  names timer_create and EPERM, and the work is still sampled;
- rt_tgsigqueueinfo refused (alone, and with timer_create): the note names it, with
  the CPU time that has no sample for it; the generic "threads that ended before the
  next tick" sentence does not blame anything else for that time;
- perf_event_open refused: perf forced says so on stderr and profiling is off; auto
  takes the signal engine and the report's note says why;
- tgkill refused: nothing is lost (the engines do not need it to sample), no note.
"""
import json, os, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import rawjson  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LIB = os.path.join(ROOT, "build", "lib", "libkestrel.so")
KESTREL = os.path.join(ROOT, "build", "bin", "kestrel")
DENY = os.path.join(ROOT, "build", "tests", "perf", "deny")
PROG = os.path.join(ROOT, "build", "tests", "perf", "syscalls")
failures = 0


def check(cond, what):
    global failures
    print(("ok: " if cond else "FAIL: ") + what, file=sys.stderr)
    failures += 0 if cond else 1


def run(tmp, calls, engine, extra=None):
    raw = os.path.join(tmp, "%s-%s.json" % (calls.replace(",", "+"), engine))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env.update(LD_PRELOAD=LIB, KESTREL_PROFILE=raw, KESTREL_PROFILE_ENGINE=engine, **(extra or {}))
    p = subprocess.run([DENY, calls, PROG, "dd", "0.5"], env=env, capture_output=True,
                       text=True, timeout=120)
    d = rawjson.load(raw) if os.path.exists(raw) else None
    rep = subprocess.run([KESTREL, "report", raw], capture_output=True, text=True,
                         timeout=120).stdout if d else ""
    return p, d, rep


def on_cpu(d):
    return sum(1 for s in d["samples"] if s[3] == 0)


def main():
    with tempfile.TemporaryDirectory(prefix="kestrel-deny-") as tmp:
        p, d, rep = run(tmp, "timer_create", "signal")
        notes = " | ".join(d.get("engine_notes", [])) if d else ""
        check(d and "timer_create" in notes and "EPERM" in notes and on_cpu(d) > 20,
              "timer_create refused: named, and the work sampled (%d samples): %s" %
              (on_cpu(d) if d else -1, notes))
        check("timer_create" in rep, "timer_create refused: the report says it")
        # With the timers working, the sampler signals a thread only now and then (a wait
        # on a run queue, which a quiet machine may never give): the sampler's trigger
        # makes every sample one of its signals, so the refusal always costs samples.
        for calls in ("rt_tgsigqueueinfo", "timer_create,rt_tgsigqueueinfo"):
            p, d, rep = run(tmp, calls, "signal", {"KESTREL_PROFILE_TRIGGER": "sampler"})
            notes = d.get("engine_notes", []) if d else []
            named = [n for n in notes if "rt_tgsigqueueinfo" in n and "EPERM" in n]
            check(len(named) == 1 and "ms of CPU time has no sample" in named[0],
                  "%s refused: rt_tgsigqueueinfo named with the time it cost: %s" %
                  (calls, notes))
            check(not any("ended before the next tick" in n for n in notes),
                  "%s refused: no other cause blamed (%s)" % (calls, notes))
            check("rt_tgsigqueueinfo" in rep, "%s refused: the report says it" % calls)
        p, d, rep = run(tmp, "perf_event_open", "perf")
        check(d is None and "perf_event_open refused" in p.stderr,
              "perf_event_open refused, perf forced: off, and says why (%r)" % p.stderr.strip())
        p, d, rep = run(tmp, "perf_event_open", "auto")
        check(d and d.get("engine") == "signal" and "perf_event_open refused" in rep and
              "auto chose the signal engine" in rep,
              "perf_event_open refused, auto: the signal engine, and the report says why")
        p, d, rep = run(tmp, "tgkill", "signal")
        check(d and not d.get("engine_notes") or all("tgkill" not in n for n in d.get("engine_notes", [])),
              "tgkill refused: nothing to name (%s)" % (d.get("engine_notes") if d else None))
    print("%d failed" % failures, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

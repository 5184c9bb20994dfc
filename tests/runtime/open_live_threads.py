#!/usr/bin/env python3
"""10,000 threads alive at once (tests/runtime/prog_livethreads.c: each works 2 ms of
CPU, then waits until all exist): every one is registered (10,001 thread records,
nothing past the registry's limits, 10,001 registered at once), the profile's CPU
time is the threads' own within 5%, and nearly every thread has on-CPU samples (each
ran two periods at 997 Hz: under the perf engine at least 99% of them; the signal
engine's timers fire on the kernel's tick, so there a thread of two periods may get
none, and 80% is asked). The report never says a table is full, and where samples
were lost its header says its CPU total is without them and a note names the
threads hit most."""
import os
import subprocess

from rtlib import ENGINE, Checker, load, prog, profiled_env, tmpdir, validate

N, US = 10000, 2000
c = Checker()
d_ = tmpdir()
path = os.path.join(d_, "t.json")
p = subprocess.run([prog("prog_livethreads"), str(N), str(US)], env=profiled_env(path, hz=997),
                   capture_output=True, text=True, timeout=600)
c.check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr[-500:]))
out = dict(l.split() for l in p.stdout.splitlines() if l.strip())
c.check(int(out.get("alive", 0)) == N, "%s threads alive at once" % out.get("alive"))
d = load(path)
validate(d, c, "live threads")
threads = d["threads"]
c.check(sum(1 for t in threads if t.get("label") == "thread") == N,
        "%d thread records of label thread, want %d" %
        (sum(1 for t in threads if t.get("label") == "thread"), N))
past = d.get("past_limits", {})
c.check(past.get("threads", 0) == 0 and past.get("threads_at_once", 0) == 0,
        "nothing past the registry's limits: %s" % past)
at_once = d.get("tables", {}).get("threads_at_once", [0, 0])
c.check(at_once[0] >= N + 1, "registered at once: %s (want %d)" % (at_once, N + 1))
# Rows, and past the row table (the waiting samples of 10,000 threads fill it) the
# untimed counts: [thread, stack, state, count, cpu_ns].
rows = [(s[1], s[3], s[4]) for s in d["samples"]]
rows += [(u[0], u[2], u[4]) for u in d.get("untimed", [])]
sampled = {t for t, st, _ in rows if st == 0 and threads[t].get("label") == "thread"}
want = 0.99 if ENGINE == "perf" else 0.80
c.check(len(sampled) >= want * N, "%d of %d threads have on-CPU samples (want %.0f%%)" %
        (len(sampled), N, 100 * want))
cpu_ms = sum(ns for t, _, ns in rows if threads[t].get("label") == "thread") / 1e6
own = float(out.get("thread_cpu_ms", 0))
c.check(abs(cpu_ms - own) <= 0.05 * own, "the threads' CPU in the profile %.1f ms, their own "
        "clocks %.1f ms" % (cpu_ms, own))
rep = subprocess.run([os.path.join(os.path.dirname(prog("x")), "..", "..", "bin", "kestrel"),
                      "report", path], capture_output=True, text=True, timeout=300)
if d.get("dropped"):
    lost = [l for l in rep.stdout.splitlines() if "lost" in l]
    c.check(("(without %d lost sample" % d["dropped"]) in rep.stdout and
            any("threads" in l and "most" in l for l in lost),
            "%d samples lost: the header's total says so and a note names the threads: %s" %
            (d["dropped"], lost))
c.check(rep.returncode == 0 and " full:" not in rep.stdout,
        "the report says no table is full: %r" %
        [l for l in rep.stdout.splitlines() if "full" in l])
c.exit()

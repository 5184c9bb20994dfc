#!/usr/bin/env python3
"""Short-lived threads' CPU time is accounted for (prog_manythreads.c): 4,000 threads of
150 µs one after another, and 500 threads of 2.2 ms alive at once. The raw file's
engine_stats.threads_cpu_ns is the threads' CPU time as they measured it themselves;
what the samples stand for plus cpu_unsampled_ns is that total, and where most of it
has no sample (the perf engine samples a thread's CPU time in whole periods, which a
150 µs thread never completes) a note says so, in the file and in `kestrel report`."""
import os
import subprocess

from rtlib import BUILD, ENGINE, Checker, load, prog, profiled_env, tmpdir, validate

c = Checker()
kestrel = os.path.join(BUILD, "bin", "kestrel")

for total, us, alive in ((4000, 150, 1), (500, 2200, 500)):
    what = "%d threads of %d us, %d at once, %s engine" % (total, us, alive, ENGINE)
    d = tmpdir()
    path = os.path.join(d, "p.json")
    p = subprocess.run([prog("prog_manythreads"), str(total), str(us), str(alive)],
                       env=profiled_env(path), capture_output=True, text=True, timeout=300)
    if not c.check(p.returncode == 0 and os.path.exists(path), "%s: exit %d, %s" %
                   (what, p.returncode, p.stderr)):
        continue
    own_ns = float(p.stdout.split()[1]) * 1e6
    prof = load(path)
    validate(prof, c, what)
    st = prof.get("engine_stats", {})
    cpu, unsampled = st.get("threads_cpu_ns"), st.get("cpu_unsampled_ns")
    if not c.check(cpu is not None and unsampled is not None, "%s: stats %s" % (what, st)):
        continue
    sampled = sum(s[4] for s in prof["samples"])
    print("%s: threads %.1f ms (their own count %.1f ms), samples %.1f ms, unsampled %.1f ms"
          % (what, cpu / 1e6, own_ns / 1e6, sampled / 1e6, unsampled / 1e6))
    # The registered threads include main, which made them: at least the threads' own.
    c.check(0.95 * own_ns <= cpu <= 1.5 * own_ns + 50e6,
            "%s: threads_cpu_ns %.1f ms, the threads counted %.1f ms" % (what, cpu / 1e6, own_ns / 1e6))
    c.check(abs(sampled + unsampled - cpu) <= 0.1 * cpu + 20e6,
            "%s: samples %.1f ms + unsampled %.1f ms against %.1f ms" %
            (what, sampled / 1e6, unsampled / 1e6, cpu / 1e6))
    notes = prof.get("engine_notes", [])
    said = [n for n in notes if "has no sample" in n]
    if unsampled > 0.05 * cpu and unsampled > 10e6:
        c.check(len(said) == 1, "%s: a note says it: %s" % (what, notes))
        r = subprocess.run([kestrel, "report", path], capture_output=True, text=True, timeout=120)
        c.check(r.returncode == 0 and any(("note: engine: " + n) in r.stdout for n in said),
                "%s: kestrel report says it" % what)
    else:
        c.check(not said, "%s: no note for %.1f ms: %s" % (what, unsampled / 1e6, notes))
    if ENGINE == "perf" and alive == 1:
        c.check(unsampled >= 0.5 * own_ns, "%s: the lost CPU is counted: %.1f ms of %.1f ms" %
                (what, unsampled / 1e6, own_ns / 1e6))

c.exit()

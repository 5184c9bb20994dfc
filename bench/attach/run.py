#!/usr/bin/env python3
"""Profilers attached to a running program, side by side: kestrel record -p, perf
record -p with frame-pointer callchains (-g) and with dwarf (--call-graph dwarf), and
samply record -p (when installed: cargo install --locked samply; run in a mount
namespace where /proc/sys/kernel/perf_event_paranoid reads 1, which samply checks
itself), at 997 and 4999 Hz. Run as root.

The target (bench/attach/work.c) makes two threads that wait 400 ms, then do fixed work, and
prints its own CPU time (user + system: the kernel's sampling work is charged to it)
and the work's wall time. Each profiler attaches by pid as soon as the target starts.
Per configuration, medians over interleaved rounds (every configuration once per round,
in a rotating order):
  target CPU   the target's CPU time over the unprofiled runs' median (slowdown)
  wall         the work's wall time over the unprofiled runs' median
  profiler CPU the profiler's own CPU while it recorded: perf's and samply's whole
               process (and children), which only record and write their file;
               kestrel's recording (`recording_cpu_ns` in its raw file: everything
               up to the last stack walked), without the symbolizing and the
               exports that follow, which perf and samply leave to a later `perf
               report` or the viewer (their wall time is `after`)
  samples      on-CPU samples the profiler kept

Usage: run.py [--rounds N] [--rates 997,4999] [--markdown FILE] [--kestrel LABEL=PATH ...]

--kestrel adds another kestrel binary as a configuration of its own ("kestrel LABEL"):
another build, side by side with this one in the same interleaved rounds.
"""
import argparse, glob, json, os, shutil, signal, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.path.join(ROOT, "build/bench/attach/work")
KESTREL = os.path.join(ROOT, "build/bin/kestrel")
UNITS = "500"
KESTRELS = {"kestrel": KESTREL}  # configuration name: binary
SAMPLY_PARANOID = None  # a file holding "1", bound over /proc/sys/kernel/perf_event_paranoid for samply


def profiler_cmd(name, hz, pid, out):
    if name in KESTRELS:
        return [KESTRELS[name], "record", "-p", str(pid), "-F", str(hz), "-o", out, "--report=/dev/null"]
    if name == "perf -g":
        return ["perf", "record", "-q", "-F", str(hz), "-g", "-p", str(pid), "-o", out + ".data"]
    if name == "perf dwarf":
        return ["perf", "record", "-q", "-F", str(hz), "--call-graph", "dwarf", "-p", str(pid),
                "-o", out + ".data"]
    if name == "samply":
        # samply reads perf_event_paranoid itself and refuses above 1, root or not; in a
        # mount namespace of its own it reads 1 from a file bound over it (the kernel's
        # setting, the machine's, is untouched: as root every event is allowed anyway).
        return ["unshare", "-m", "sh", "-c",
                f"mount --bind {SAMPLY_PARANOID} /proc/sys/kernel/perf_event_paranoid && "
                f"exec samply record --save-only -r {hz} -p {pid} -o {out}.json.gz"]
    return None


def samples_of(name, out):
    try:
        if name in KESTRELS:
            n = 0
            for f in glob.glob(out + ".raw/*.raw.json"):
                n += sum(1 for s in json.load(open(f))["samples"] if s[3] == 0)
            return n
        if name.startswith("perf"):
            r = subprocess.run(["perf", "script", "-i", out + ".data", "-F", "tid"],
                               capture_output=True, text=True)
            return sum(1 for l in r.stdout.splitlines() if l.strip())
        if name == "samply":
            import gzip
            d = json.load(gzip.open(out + ".json.gz"))
            return sum(t["samples"]["length"] for t in d.get("threads", []))
    except (OSError, ValueError, KeyError):
        return None
    return None


def one(name, hz, tmp, k):
    out = os.path.join(tmp, f"r{k}")
    target = subprocess.Popen([WORK, "2", UNITS, "400"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.1)  # its threads made: perf record -p samples only those it finds
    prof = None
    if name != "none":
        prof = subprocess.Popen(profiler_cmd(name, hz, target.pid, out),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stdout, _ = target.communicate()
    prof_cpu = after = 0
    if prof:
        t0 = time.time()
        deadline = t0 + 5
        while True:  # a profiler that waits for ^C gets one
            pid, status, ru = os.wait4(prof.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                prof.send_signal(signal.SIGINT)
                deadline = t0 + 120
            time.sleep(0.01)
        prof.returncode = os.waitstatus_to_exitcode(status)
        after = time.time() - t0
        prof_cpu = (ru.ru_utime + ru.ru_stime) * 1e9
        if name in KESTRELS:
            prof_cpu = 0
            for f in glob.glob(out + ".raw/*.raw.json"):
                prof_cpu = max(prof_cpu, json.load(open(f))["engine_stats"]["recording_cpu_ns"])
    cpu, wall = map(int, stdout.split())
    return {"cpu": cpu, "wall": wall, "prof_cpu": prof_cpu, "after_s": after,
            "samples": samples_of(name, out) if prof else None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rates", default="997,4999")
    ap.add_argument("--markdown")
    ap.add_argument("--kestrel", action="append", default=[], metavar="LABEL=PATH")
    a = ap.parse_args()
    for kv in a.kestrel:
        label, _, path = kv.partition("=")
        KESTRELS["kestrel " + label] = os.path.abspath(path)
    rates = [int(x) for x in a.rates.split(",")]
    global SAMPLY_PARANOID
    fd, SAMPLY_PARANOID = tempfile.mkstemp(prefix="kestrel-paranoid-")
    os.write(fd, b"1\n")
    os.close(fd)
    samply_why = ("samply is not installed" if not shutil.which("samply") else
                  "" if os.geteuid() == 0 else
                  "samply refuses to record while perf_event_paranoid is above 1 and this "
                  "benchmark is not root (it shows samply 1 through a mount namespace)")
    peers = list(KESTRELS) + ["perf -g", "perf dwarf"] + ([] if samply_why else ["samply"])
    configs = [("none", 0)] + [(p, hz) for hz in rates for p in peers]
    res = {c: [] for c in configs}
    tmp = tempfile.mkdtemp(prefix="kestrel-attach-bench-")
    k = 0
    try:
        for r in range(a.rounds):
            order = configs[r % len(configs):] + configs[:r % len(configs)]
            for c in order:
                res[c].append(one(c[0], c[1], tmp, k))
                k += 1
                for f in glob.glob(os.path.join(tmp, "*")):
                    shutil.rmtree(f, ignore_errors=True) if os.path.isdir(f) else os.unlink(f)
            print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        os.unlink(SAMPLY_PARANOID)
    base_cpu = statistics.median(x["cpu"] for x in res[("none", 0)])
    base_wall = statistics.median(x["wall"] for x in res[("none", 0)])
    load = os.getloadavg()[0]
    lines = ["## Attached mode: kestrel record -p beside perf record -p and samply record -p", "",
             f"`bench/attach/run.py --rounds {a.rounds}` ({time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; "
             f"{os.cpu_count()} cores, shared with other work: load average {load:.1f} at the end). "
             f"Target: bench/attach/work.c, two threads of fixed work, unprofiled median "
             f"{base_cpu / 1e9:.2f} s CPU, {base_wall / 1e9:.2f} s wall. Medians of {a.rounds} "
             "interleaved rounds; ratios against the unprofiled runs of the same benchmark. "
             "Profiler CPU: perf's and samply's whole process tree (they record and write their "
             "file: symbolizing is left to `perf report` or the viewer); kestrel's recording (`recording_cpu_ns`: "
             "everything up to the last stack walked, before the symbolizing and exports, "
             "whose wall seconds are in `after`)." +
             (f" No samply rows: {samply_why}." if samply_why else
              " samply (" + subprocess.run(["samply", "--version"], capture_output=True,
                                          text=True).stdout.strip() +
              ") reads perf_event_paranoid itself and refuses above 1 even as root: it ran "
              "in a mount namespace of its own where that file reads 1 (the kernel's "
              "setting stayed 2)."),
             "",
             "| profiler | Hz | target CPU | target wall | profiler CPU (ms) | on-CPU samples | after (s) |",
             "|---|---|---|---|---|---|---|"]
    for c in configs:
        xs = res[c]
        med = lambda key: statistics.median(x[key] for x in xs)
        smp = [x["samples"] for x in xs if x["samples"] is not None]
        lines.append(f"| {c[0]} | {c[1] or '-'} | {med('cpu') / base_cpu:.3f} | "
                     f"{med('wall') / base_wall:.3f} | {med('prof_cpu') / 1e6:.1f} | "
                     f"{statistics.median(smp) if smp else '-'} | {med('after_s'):.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    main()

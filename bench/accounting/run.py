#!/usr/bin/env python3
"""What counting every sample costs, beside perf record, at 100, 997 and 4999 Hz.

Fixed work of tests/perf/syscalls.c: `dd` (2,000,000 blocks of 4 KiB read from /dev/zero
and written to /dev/null: system calls, little user code) and `server` (100,000
requests over a socket pair between two threads, each appended to a file: a context
switch per request and reply). Each round runs, interleaved:

  none          the program alone
  perf          kestrel's perf engine as root: switch samples in a ring of their own
  perf-user     kestrel's perf engine as an unprivileged user (perf_event_paranoid 2,
                set by the benchmark and restored): system-call time filled in from the
                threads' CPU clocks at each drain
  signal-user   the signal engine as that user (what auto takes there)
  perf-g        perf record -g (frame pointers) as root
  perf-dwarf    perf record --call-graph dwarf as root

and reports per setting the median wall time of the work and the median CPU time of
the program's process (kestrel's thread included; perf record's own process not),
each as a ratio to `none` of the same round (median of the rounds' ratios).
Needs root, perf, useradd and runuser.

--lib-b LIB adds `perf-B`: kestrel's perf engine as root from another build of
libkestrel.so (an earlier commit's), to see what a change costs; --settings, --progs
and --rates choose a part of the table.
"""
import argparse, os, re, shutil, statistics, subprocess, sys, tempfile, time, uuid

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LIB = os.path.join(ROOT, "build", "lib", "libkestrel.so")
PROG = os.path.join(ROOT, "build", "tests", "perf", "syscalls")
PARANOID = "/proc/sys/kernel/perf_event_paranoid"
WORK = {"dd": "2000000x", "server": "100000x"}
SETTINGS = ["perf", "perf-user", "signal-user", "perf-g", "perf-dwarf"]


LIB_B = None


def one(setting, hz, prog, tmp, user):
    work = tempfile.mkdtemp(dir=tmp)
    os.chmod(work, 0o777)
    argv = [PROG, prog, WORK[prog]] + ([work] if prog == "server" else [])
    raw = os.path.join(work, "r.json")
    env = {"LD_PRELOAD": LIB, "KESTREL_PROFILE": raw, "KESTREL_PROFILE_HZ": str(hz)}
    if setting == "none":
        cmd = argv
    elif setting in ("perf", "perf-B"):
        if setting == "perf-B":
            env["LD_PRELOAD"] = LIB_B
        cmd = ["env", "KESTREL_PROFILE_ENGINE=perf"] + ["%s=%s" % kv for kv in env.items()] + argv
    elif setting in ("perf-user", "signal-user"):
        eng = setting.split("-")[0]
        cmd = ["runuser", "-u", user, "--", "env", "KESTREL_PROFILE_ENGINE=" + eng] + \
              ["%s=%s" % kv for kv in env.items()] + argv
    else:
        cg = ["-g"] if setting == "perf-g" else ["--call-graph", "dwarf"]
        cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(hz)] + cg + \
              ["-o", os.path.join(work, "p.data"), "--"] + argv
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    m = re.search(r"all_ns (\d+)", p.stdout)
    if p.returncode != 0 or not m:
        raise SystemExit("%s %s %d Hz failed: %s" % (setting, prog, hz, p.stderr[-300:]))
    shutil.rmtree(work, ignore_errors=True)
    return wall, int(m.group(1)) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--markdown", help="append the table to this file")
    ap.add_argument("--lib-b", help="another libkestrel.so, as setting perf-B")
    ap.add_argument("--settings", default=",".join(SETTINGS))
    ap.add_argument("--progs", default=",".join(WORK))
    ap.add_argument("--rates", default="100,997,4999")
    a = ap.parse_args()
    global LIB_B
    LIB_B = a.lib_b
    settings = a.settings.split(",") + (["perf-B"] if a.lib_b else [])
    progs = a.progs.split(",")
    rates = [int(x) for x in a.rates.split(",")]
    if os.geteuid() != 0:
        print("needs root (perf record, useradd, runuser, the paranoid sysctl)", file=sys.stderr)
        return 1
    user = "kbn" + uuid.uuid4().hex[:8]
    old = open(PARANOID).read().strip()
    tmp = tempfile.mkdtemp(prefix="kestrel-acct-bench-")
    os.chmod(tmp, 0o777)
    subprocess.run(["useradd", "-M", "-N", "-s", "/bin/sh", user], check=True)
    ratios = {}  # (prog, hz, setting) -> [(wall ratio, cpu ratio)]
    try:
        with open(PARANOID, "w") as f:
            f.write("2")
        for r in range(a.rounds):
            for prog in progs:
                for hz in rates:
                    base = one("none", hz, prog, tmp, user)
                    for s in settings:
                        w, c = one(s, hz, prog, tmp, user)
                        ratios.setdefault((prog, hz, s), []).append((w / base[0], c / base[1]))
            print("round %d done" % (r + 1), file=sys.stderr)
    finally:
        with open(PARANOID, "w") as f:
            f.write(old)
        subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    lines = ["| program | Hz | " + " | ".join(settings) + " |",
             "|---|---|" + "---|" * len(settings)]
    for prog in progs:
        for hz in rates:
            cells = []
            for s in settings:
                v = ratios[(prog, hz, s)]
                cells.append("%.2f / %.2f" % (statistics.median(x[0] for x in v),
                                              statistics.median(x[1] for x in v)))
            lines.append("| %s | %d | %s |" % (prog, hz, " | ".join(cells)))
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

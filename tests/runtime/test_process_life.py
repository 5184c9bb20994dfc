#!/usr/bin/env python3
"""Process life under profiling: normal exit, exec (execl, execvp), SIGTERM, SIGINT,
SIGHUP, abort, SIGQUIT, crashes (SIGSEGV, SIGFPE from the kernel), SIGPIPE, a
program's own SIGTERM handler, the ends that run no destructor (_exit, _Exit,
quick_exit, syscall(SYS_exit_group), _exit from a signal handler), and fork from a multi-threaded program
while sampling. Each mode ends with exactly the status it has unprofiled, and the
files that must exist do, complete (valid JSON with samples), with no temporary file
left behind; the file of an image replaced by exec is <path>.exec0. An exec that
fails goes on profiled: one foreseen to fail (no such file) leaves one whole file, one
that fails anyway (ENOEXEC) the file of the time before it and a file of the rest.

Under qemu-user (KESTREL_TEST_ARCH=aarch64) the program execs itself through the
wrapper that started it (KESTREL_TEST_SELF: the kernel here cannot run an aarch64
program), and the modes that fork while sampling (tree, fork) are left out: qemu 7.2
aborts a threaded program's fork child that starts a thread, as the runtime's child
does (`cpu_exec: assertion failed: (cpu == current_cpu)`). There fpe returns 101 from
main, as a mode that does not end the program does: aarch64's division by zero gives
0 and raises no signal."""
import glob
import os
import resource
import subprocess
import sys

from rtlib import EMULATED, Checker, load, prog, profiled_env, rate_of, tmpdir, validate

c = Checker()
exe = prog("prog_life")
plain_env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the crash modes leave no core file


def run(mode, env):
    p = subprocess.run([exe, mode], env=env, capture_output=True, text=True, timeout=120,
                       preexec_fn=no_core)
    return p.returncode, p.stdout


def complete(path, what, min_samples=20):
    try:
        d = load(path)
    except Exception as e:  # a truncated or missing file
        c.check(False, "%s: %s unreadable: %s" % (what, path, e))
        return None
    validate(d, c, what)
    c.check(len(d["samples"]) >= min_samples, "%s: %d samples" % (what, len(d["samples"])))
    return d


for mode, files in (("exit", ["p.{pid}.json"]),
                    ("exec", ["p.{pid}.json.exec0", "p.{pid}.json"]),
                    ("execvp", ["p.{pid}.json.exec0", "p.{pid}.json"]),
                    ("term", ["p.{pid}.json"]), ("int", ["p.{pid}.json"]),
                    ("hup", ["p.{pid}.json"]), ("abort", ["p.{pid}.json"]),
                    ("quit", ["p.{pid}.json"]), ("segv", ["p.{pid}.json"]),
                    ("fpe", ["p.{pid}.json"]), ("pipe", ["p.{pid}.json"]),
                    ("own", ["p.{pid}.json"]), ("_exit", ["p.{pid}.json"]),
                    ("_Exit", ["p.{pid}.json"]), ("quick_exit", ["p.{pid}.json"]),
                    ("exit_group", ["p.{pid}.json"]), ("handler_exit", ["p.{pid}.json"]),
                    ("execfail", ["p.{pid}.json"]),
                    ("execbad", ["p.{pid}.json.exec0", "p.{pid}.json"])):
    want, _ = run(mode, plain_env)
    d = tmpdir()
    got, _ = run(mode, profiled_env(os.path.join(d, "p.%p.json")))
    c.check(got == want, "%s: status %d profiled, %d unprofiled" % (mode, got, want))
    found = sorted(os.path.basename(f) for f in glob.glob(os.path.join(d, "*")))
    pids = {f.split(".")[1] for f in found}
    c.check(len(pids) == 1, "%s: one pid in %s" % (mode, found))
    pid = pids.pop() if pids else "?"
    expect = sorted(f.format(pid=pid) for f in files)
    c.check(found == expect, "%s: files %s, expected %s" % (mode, found, expect))
    for f in found:
        dd = complete(os.path.join(d, f), "%s %s" % (mode, f))
        if dd:
            c.check(str(dd["pid"]) == pid, "%s: pid %s in %s" % (mode, dd["pid"], f))

# a failed exec: the profile goes on to the end (300 ms of CPU in all, 150 after)
d = tmpdir()
got, _ = run("execfail", profiled_env(os.path.join(d, "p.%p.json")))
f = glob.glob(os.path.join(d, "p.*.json"))
dd = complete(f[0], "execfail", min_samples=1) if len(f) == 1 else None
if dd:
    span = max(s[0] for s in dd["samples"]) if dd["samples"] else 0
    c.check(span >= 250 * 10**6, "execfail: samples span %.0f ms of the 300" % (span / 1e6))
    c.check(len(dd["samples"]) >= 0.5 * 0.3 * rate_of(dd, c, 997),
            "execfail: %d samples for 300 ms" % len(dd["samples"]))

if EMULATED:
    print("tree, fork: not run under qemu-user", file=sys.stderr)
    c.exit()

# a path without %p: the process that started the tree's profile owns it, every other
# one (a fork child and what it execs, a posix_spawn child) adds its pid: no two
# processes write one file (the parent used to overwrite its exec'd child's), CPU and heap
d = tmpdir()
env = profiled_env(os.path.join(d, "p.json"), extra={"KESTREL_HEAP": os.path.join(d, "h.pb.gz")})
p = subprocess.run([exe, "tree"], env=env, capture_output=True, text=True, timeout=120)
c.check(p.returncode == 0, "tree: status %d" % p.returncode)
kids = p.stdout.split()
found = sorted(os.path.basename(f) for f in glob.glob(os.path.join(d, "*")))
if c.check(len(kids) == 2, "tree: %r" % p.stdout):
    want = sorted(["p.json", "p.json.%s" % kids[0], "p.json.%s.exec0" % kids[0],
                   "p.json.%s" % kids[1], "h.pb.gz", "h.pb.gz.%s" % kids[0], "h.pb.gz.%s" % kids[1]])
    c.check(found == want, "tree: files %s, expected %s" % (found, want))
    for f, pid in (("p.json", None), ("p.json." + kids[0], kids[0]),
                   ("p.json." + kids[1], kids[1])):
        dd = complete(os.path.join(d, f), "tree " + f, min_samples=1) if f in found else None
        if dd and pid:
            c.check(str(dd["pid"]) == pid, "tree: %s has pid %s" % (f, dd["pid"]))
        if dd and not pid:
            c.check(str(dd["pid"]) not in kids, "tree: p.json is the parent's (pid %s)" % dd["pid"])

# fork while two threads are being sampled: 20 children, each with its own file.
d = tmpdir()
got, out = run("fork", profiled_env(os.path.join(d, "p.%p.json")))
c.check(got == 0 and out.strip() == "20", "fork: status %d, %s children fine" % (got, out.strip()))
found = glob.glob(os.path.join(d, "*"))
c.check(len(found) == 21, "fork: 21 files (parent and 20 children), got %d" % len(found))
parent = children = 0
for f in found:
    dd = complete(f, "fork " + os.path.basename(f), min_samples=1)
    if not dd:
        continue
    if len(dd["threads"]) == 3:
        parent += 1
    elif len(dd["threads"]) == 1 and dd["threads"][0]["label"] == "main":
        children += 1
c.check(parent == 1 and children == 20, "fork: parent %d, children %d" % (parent, children))

# Without %p, a fork child writes <path>.<pid> instead of the parent's file.
d = tmpdir()
got, _ = run("fork", profiled_env(os.path.join(d, "p.json")))
names = sorted(os.path.basename(f) for f in glob.glob(os.path.join(d, "*")))
c.check("p.json" in names and len(names) == 21, "fork without %%p: %d files" % len(names))
c.exit()

#!/usr/bin/env python3
"""The program's descriptors are its own (prog_fds.c): a program that dup2s its log over
every anonymous-inode descriptor it finds (the perf engine's eventfd, epoll set and
events), or closes everything above 2 with close_range and reuses the numbers, or
starts with descriptor 1 closed, keeps its log intact (0123456789, never 8 bytes of an
eventfd counter), an exec'd shell keeps every descriptor the program gave it, and a
program started without stdout still gets descriptor 1 for its first file and all of
its output. The profile is still written, with samples of the work done after the
descriptors were taken, and the perf engine counts what it lost (engine_stats.fds_lost).

Under qemu-user the close_range and closed-stdout cases are left out: qemu serves a
guest's /proc/self/maps from a file it creates and fills itself, through a descriptor
number of the process's own table, so a program that closes and reuses every number
races with the emulator (its log was found holding the emulated maps, filled by qemu
into the number the program had just taken), not with kestrel."""
import glob
import os
import subprocess

from rtlib import EMULATED, Checker, load, prog, profiled_env, rate_of, tmpdir, validate

c = Checker()
exe = prog("prog_fds")
plain_env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}


def run(args, env, close_stdout=False):
    pre = (lambda: os.close(1)) if close_stdout else None
    p = subprocess.run([exe] + args, env=env, capture_output=not close_stdout,
                       stderr=subprocess.PIPE if close_stdout else None, text=True,
                       timeout=120, preexec_fn=pre)
    return p.returncode, p.stdout or "", p.stderr


def read(path):
    with open(path, "rb") as f:
        return f.read()


def profile(d, what, replaced):
    files = sorted(glob.glob(os.path.join(d, "p.*.json*")))
    first = [f for f in files if f.endswith(".exec0")] or files
    if not c.check(bool(first), "%s: a profile was written: %s" % (what, files)):
        return
    p = load(first[0])
    validate(p, c, what)
    on_cpu = sum(1 for s in p["samples"] if s[3] == 0)
    c.check(on_cpu >= 0.25 * 0.2 * rate_of(p, c, 997),
            "%s: %d on-CPU samples of 200 ms of work" % (what, on_cpu))
    if p["engine"] == "perf":
        lost = p.get("engine_stats", {}).get("fds_lost")
        c.check(replaced(lost), "%s: fds_lost %s" % (what, lost))


for end in ("exit", "exec"):
    for env_name, env in (("unprofiled", plain_env), ("profiled", None)):
        d = tmpdir()
        log = os.path.join(d, "log")
        if env is None:
            env = profiled_env(os.path.join(d, "p.%p.json"))
        rc, out, err = run(["dup2", log, end], env)
        what = "dup2 %s %s" % (end, env_name)
        c.check(rc == 0, "%s: exit %d (%s)" % (what, rc, err))
        numbers = err.split(":", 1)[1].split() if "replaced" in err else []
        c.check(read(log) == b"0123456789", "%s: log holds %r" % (what, read(log)))
        if env_name == "unprofiled" or env["KESTREL_PROFILE_ENGINE"] == "signal":
            c.check(numbers == [], "%s: no anonymous-inode descriptor: %s" % (what, numbers))
        else:
            c.check(len(numbers) >= 3, "%s: the perf engine's descriptors: %s" % (what, numbers))
            c.check(all(int(n) >= 100 for n in numbers),
                    "%s: runtime descriptors above the program's range: %s" % (what, numbers))
        if end == "exec":
            c.check(out.split() == numbers, "%s: the shell has %r of %r" % (what, out, numbers))
        if env_name == "profiled":
            profile(d, what, lambda lost, n=len(numbers): lost == n)

for env_name, env in () if EMULATED else (("unprofiled", plain_env), ("profiled", None)):
    d = tmpdir()
    log = os.path.join(d, "log")
    if env is None:
        env = profiled_env(os.path.join(d, "p.%p.json"))
    rc, out, err = run(["closerange", log], env)
    what = "close_range %s" % env_name
    c.check(rc == 0, "%s: exit %d (%s)" % (what, rc, err))
    c.check("log fd 3" in err, "%s: the log got descriptor 3: %s" % (what, err))
    c.check(read(log) == b"0123456789", "%s: log holds %r" % (what, read(log)))
    c.check(out.split() == "3 4 5 6 7 8 9".split(), "%s: the shell has %r" % (what, out))
    if env_name == "profiled":
        profile(d, what, lambda lost: lost is not None and lost >= 3)  # every one closed

for env_name, env in () if EMULATED else (("unprofiled", plain_env), ("profiled", None)):
    d = tmpdir()
    log = os.path.join(d, "log")
    if env is None:
        env = profiled_env(os.path.join(d, "p.%p.json"))
    rc, out, err = run(["stdout", log], env, close_stdout=True)
    what = "stdout closed %s" % env_name
    c.check(rc == 0, "%s: exit %d (%s)" % (what, rc, err))
    c.check("log fd 1" in err, "%s: the log got descriptor 1: %s" % (what, err))
    want = "".join("line %d\n" % i for i in range(5)).encode()
    c.check(read(log) == want, "%s: log holds %r" % (what, read(log)))
    if env_name == "profiled":
        profile(d, what, lambda lost: lost == 0)

c.exit()

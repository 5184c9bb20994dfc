#!/usr/bin/env python3
"""Guessed stacks are marked as such, per stack, in the raw file and in every export.

Run by a user who is not root at perf_event_paranoid 2 (the test, as root, creates the
user with useradd and sets the level, restoring it at the end), the perf engine has no
switch samples and no kernel samples: a wait that began and ended between two drains
gets the thread's earlier blocking stack (engine_stats.waits_guessed) and the time in
system calls its last on-CPU stack (kernel_samples_guessed). tests/perf/syscalls.c's
server (a client and a server thread over a socket pair, the server syncing a file)
has plenty of both. For that run, and for one as root (privileged: its guesses, if any,
only from lost switch samples):

- the raw file's `stacks_guessed` names exactly the stacks of those samples: the rows on
  them are waits_guessed waiting samples and kernel_samples_guessed running ones;
- every export marks the same samples: the folded file (`--state all`) and speedscope
  under a `[guessed stack]` frame just inside the thread's root, the cpuprofile's
  `[guessed stack]` nodes (running samples), pprof's `stack=guessed` label (read by
  `go tool pprof -raw`), the OTLP export's `kestrel.stack=guessed` attribute (decoded by
  tests/http/otlpcheck with the official OTLP types), profile.json's `stacks.guessed`,
  the report's `guessed stacks:` line and its waiting table;
- the unprivileged run has guesses of both kinds (else the test proves nothing);
- as root nearly every wait has its real stack: under 5% of the waiting samples guessed
  (the kernel writes a switch sample, with a stack copy, at each of the server's tens of
  thousands of context switches a second; with 65,000-byte copies it lost most of them
  and 60-80% of the waits were guessed);
- the runtime's own scrape endpoint (KESTREL_HTTP on a Unix socket, `/debug/pprof/
  profile?seconds=1&state=all`) of the same program run by that user labels samples
  `stack=guessed`, running and waiting ones.
Skipped (exit 77) when not root or without useradd and runuser."""
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import rawjson  # noqa: E402

KESTREL = os.path.join(ROOT, "build", "bin", "kestrel")
OTLPCHECK = os.path.join(ROOT, "build", "tests", "http", "otlpcheck")
PROG = os.path.join(ROOT, "build", "tests", "perf", "syscalls")
PARANOID = "/proc/sys/kernel/perf_event_paranoid"
MARK = "[guessed stack]"
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    failures += 0 if cond else 1
    return cond


def record(tag, work, user):
    stem = os.path.join(work, tag)
    argv = [KESTREL, "record", "--engine", "perf", "--state", "all", "-o", stem, "--",
            PROG, "server", "2", work]
    if user:
        argv = ["runuser", "-u", user, "--", "env", "PATH=" + os.environ.get("PATH", "")] + argv
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "%s: kestrel record exits 0" % tag)
    if p.returncode:
        print(p.stderr[-3000:])
    return stem, p.stderr


def verify(tag, stem, report, work, want_guesses):
    raw = rawjson.load(glob.glob(stem + ".raw/*.raw.json")[0])
    es = raw.get("engine_stats", {})
    waits, kern = es.get("waits_guessed", 0), es.get("kernel_samples_guessed", 0)
    guessed = set(raw.get("stacks_guessed", []))
    rows = [s for s in raw["samples"] if s[2] in guessed]
    run = sum(1 for s in rows if s[3] == 0)
    wait = sum(1 for s in rows if s[3] == 1)
    if want_guesses:
        check(waits > 0 and kern > 0,
              "%s: waits (%d) and system-call time (%d) were guessed" % (tag, waits, kern))
    else:
        # Privileged: the switch samples give each wait its stack; only lost ones guess.
        waiting = sum(1 for s in raw["samples"] if s[3] == 1)
        check(waiting >= 500 and waits < 0.05 * waiting,
              "%s: %d of %d waiting samples guessed (under 5%%; switch samples read %s, "
              "lost %s)" % (tag, waits, waiting, es.get("switch_samples"),
                            es.get("switch_samples_lost")))
    check(run == kern and wait == waits,
          "%s: stacks_guessed holds the guessed samples: %d running (kernel_samples_guessed "
          "%d), %d waiting (waits_guessed %d)" % (tag, run, kern, wait, waits))
    check(not raw.get("untimed"), "%s: every sample is a row" % tag)
    # Every format is held to the engine's own counts, not to stacks_guessed.
    run, wait = kern, waits
    n = run + wait
    total = len(raw["samples"])

    # folded, --state all: the mark right under the thread's root, on exactly those.
    marked = other = 0
    for line in open(stem + ".folded"):
        frames, c = line.rstrip("\n").rsplit(" ", 1)
        frames = frames.split(";")
        if MARK in frames:
            marked += int(c)
            # Inside [incomplete stack] when the guess is also cut (docs/exports.md).
            at = frames.index(MARK)
            other += not (at == 1 or (at == 2 and frames[1] == "[incomplete stack]"))
    check(marked == n and other == 0,
          "%s: folded: %d samples under %s just inside the thread (want %d; %d elsewhere)" %
          (tag, marked, MARK, n, other))

    # speedscope: the running and the waiting profiles of each thread.
    sp = json.load(open(stem + ".speedscope.json"))
    fi = [i for i, f in enumerate(sp["shared"]["frames"]) if f["name"] == MARK]
    in_sp = 0
    for pr in sp["profiles"]:
        for s, w in zip(pr["samples"], pr["weights"]):
            if fi and fi[0] in s:
                in_sp += w  # sample counts (unit none): consecutive equal stacks summed
    # The mark is a frame of the file only where some sample is under it.
    check(len(fi) == (1 if n else 0) and in_sp == n,
          "%s: speedscope: %d samples under %s (want %d)" % (tag, in_sp, MARK, n))

    # cpuprofile: the running samples under a [guessed stack] node.
    cp = json.load(open(stem + ".cpuprofile"))
    nodes = {nd["id"]: nd for nd in cp["nodes"]}
    parent = {c: nd["id"] for nd in cp["nodes"] for c in nd.get("children", [])}
    in_cp = 0
    for s in cp["samples"]:
        k = s
        while k in nodes and nodes[k]["callFrame"]["functionName"] != MARK:
            k = parent.get(k)
        in_cp += k in nodes
    check(in_cp == run, "%s: cpuprofile: %d samples under %s (want the %d running)" %
          (tag, in_cp, MARK, run))

    # pprof, as go tool pprof reads it: the stack=guessed label.
    g = go_pprof_raw(stem + ".pb.gz", work)
    labelled = unlabelled = 0
    lines = g.stdout.splitlines()
    for i, l in enumerate(lines):
        f = l.split()
        if len(f) >= 2 and f[0].isdigit() and f[-1] != ":" and ":" in l and i + 1 < len(lines):
            if "stack:[guessed]" in lines[i + 1]:
                labelled += int(f[0])
            elif "state:[" in lines[i + 1]:
                unlabelled += int(f[0])
    check(g.returncode == 0 and labelled == n and labelled + unlabelled == total,
          "%s: pprof: %d samples labelled stack=guessed (want %d), %d in all (want %d)" %
          (tag, labelled, n, labelled + unlabelled, total))

    # OTLP, every state, decoded with the official types.
    otlp = stem + ".otlp.pb"
    e = subprocess.run([KESTREL, "export", "--format", "otlp", "--state", "all", "-o", otlp,
                        stem + ".raw"], capture_output=True, text=True, timeout=300)
    o = subprocess.run([OTLPCHECK, "-otlp", otlp], capture_output=True, text=True, timeout=300)
    want = "kestrel.stack=guessed: %d running, %d waiting" % (run, wait)
    check(e.returncode == 0 and want in o.stdout, "%s: OTLP: %s (%s)" %
          (tag, want, [l for l in o.stdout.splitlines() if "kestrel.stack" in l] or
           (e.stderr + o.stderr)[-300:]))

    # profile.json (--state all: every sample counted).
    pj = json.load(open(stem + ".profile.json"))
    gs = pj["stacks"].get("guessed", {})
    check(gs.get("samples") == n, "%s: profile.json stacks.guessed.samples %s (want %d)" %
          (tag, gs.get("samples"), n))

    # The report (record's, of every sample: --state all) and its waiting table.
    said = "guessed stacks:" in report
    check(said == (n > 0), "%s: the report %s guessed stacks (%d samples)" %
          (tag, "names" if said else "does not name", n))
    rep = subprocess.run([KESTREL, "report", "--state", "waiting", stem + ".raw"],
                         capture_output=True, text=True, timeout=120).stdout
    check(("guessed stacks:" in rep) == (wait > 0) and (MARK in rep) == (wait > 0),
          "%s: the waiting report marks the %d guessed waiting samples" % (tag, wait))


def go_pprof_raw(path, work):
    # Go's build cache stays where it is: pprof is built into it on demand, for minutes.
    cache = subprocess.run(["go", "env", "GOCACHE"], capture_output=True, text=True).stdout
    return subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True,
                          text=True, timeout=600,
                          env=dict(os.environ, HOME=work, GOCACHE=cache.strip()))


def scrape(work, user):
    """The runtime's CPU window of one second, with every state, as `user` runs the
    server under the perf engine: its samples labelled stack=guessed, by state."""
    sock = os.path.join(work, "pprof.sock")
    env = ["KESTREL_HTTP=unix:" + sock, "KESTREL_PROFILE_ENGINE=perf",
           "LD_PRELOAD=" + os.path.join(ROOT, "build", "lib", "libkestrel.so")]
    prog = subprocess.Popen(["runuser", "-u", user, "--", "env"] + env +
                            [PROG, "server", "4", work], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    body = b""
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(sock)
        s.sendall(b"GET /debug/pprof/profile?seconds=1&state=all HTTP/1.0\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        head, _, body = data.partition(b"\r\n\r\n")
        check(head.startswith(b"HTTP/1.1 200") or head.startswith(b"HTTP/1.0 200"),
              "scrape: /debug/pprof/profile answers 200 (%r)" % head[:40])
    finally:
        prog.wait(timeout=60)
    path = os.path.join(work, "window.pb.gz")
    open(path, "wb").write(body)
    g = go_pprof_raw(path, work)
    by = {"running": 0, "waiting": 0}
    lines = g.stdout.splitlines()
    for i, l in enumerate(lines[:-1]):
        f = l.split()
        if len(f) >= 2 and f[0].isdigit() and "stack:[guessed]" in lines[i + 1]:
            for st in by:
                by[st] += int(f[0]) if "state:[%s]" % st in lines[i + 1] else 0
    check(g.returncode == 0 and by["running"] > 0 and by["waiting"] > 0,
          "scrape: samples labelled stack=guessed in the window: %s" % by)


def main():
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("useradd", "runuser")):
        print("skipped: needs root, useradd and runuser")
        return 77
    b = subprocess.run(["go", "build", "-o", OTLPCHECK, "."], capture_output=True, text=True,
                       cwd=os.path.join(ROOT, "tests", "http", "otlpcheck"), timeout=1800)
    check(b.returncode == 0, "otlpcheck builds: %s" % b.stderr[-500:])
    work = tempfile.mkdtemp(prefix="kestrel-guessed-")
    os.chmod(work, 0o777)
    user = "kg" + uuid.uuid4().hex[:8]
    old = open(PARANOID).read().strip()
    subprocess.run(["useradd", "-M", "-N", "-s", "/bin/sh", user], check=True)
    try:
        with open(PARANOID, "w") as f:
            f.write("2")
        stem, rep = record("unprivileged", work, user)
        if os.path.exists(stem + ".folded"):
            verify("unprivileged", stem, rep, work, True)
        scrape(work, user)
        stem, rep = record("root", work, None)
        if os.path.exists(stem + ".folded"):
            verify("root", stem, rep, work, False)
    finally:
        with open(PARANOID, "w") as f:
            f.write(old)
        subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d failed" % failures)
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

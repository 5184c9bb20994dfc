#!/usr/bin/env python3
"""An epoll server of the project's own (bench/evloop/server: two threads, 20 µs of
CPU per request in handle_request, non-blocking keep-alive sockets) under its load
generator on loopback, profiled at 997 Hz: every epoll_wait, read and write returns
what it would unprofiled (the server exits non-zero on an EINTR or a short write), the
clients' requests all complete, handle_request has running samples, no signal-mask
function is among the report's top 10, and the blocking-call wrappers'
own code (src/runtime/cpu/blocking.c) holds under 2% of the running samples.

The signal engine's samples against the server's own clocks: the workers' mean running
share is within 3 standard errors of their mean CPU time over wall time, and
handle_request's share of the running samples within 3 standard errors of its share of
the threads' CPU time, which the server estimates from its calibration (at 2 SE an
unbiased engine would fail one run in 20). Its on-CPU samples come from the threads'
CPU-time timers, taken where a tick found the thread; a signal sent from another CPU
reached a running worker 10-50 µs later, often at the end of the read or write it had
entered meanwhile, and handle_request read 44-58% of a truth near 68%. The perf engine's
figures are printed, not checked: its switch records split the states
(docs/perf-engine.md), and its cost slows this server by a fifth (BENCHMARKS.md).
"""
import os
import re
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                                "evloop"))
import server_out  # noqa: E402

from rtlib import BUILD, ENGINE, Checker, load, profiled_env, rate_of, tmpdir, validate

ROW = re.compile(r"^\s*[█▉▊▋▌▍▎▏]*\s+([\d.]+)%\s+[\d.]+\s+([\d.]+)%\s+(\d+)\s+\d+\s+(\S+)\s+(\S+)")
B = os.path.join(BUILD, "bench", "evloop")
KESTREL = os.path.join(BUILD, "bin", "kestrel")
c = Checker()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = str(s.getsockname()[1])
    s.close()
    return port


def serve(name):
    """The server profiled under the client's load: (raw path, {tid: cpu/wall} of its
    workers, handle_request's share of its threads' CPU time), or None when it failed."""
    path = os.path.join(tmpdir(), name)
    port = free_port()
    srv = subprocess.Popen([os.path.join(B, "server"), port, "2", "20", "4"],
                           env=profiled_env(path, hz=997), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    cl = subprocess.run([os.path.join(B, "client"), port, "8", "0.5", "3"],
                        capture_output=True, text=True, timeout=120)
    out, err = srv.communicate(timeout=120)
    ok = c.check(srv.returncode == 0, "%s engine: server exit %d: %s" % (ENGINE, srv.returncode, err))
    ok &= c.check(cl.returncode == 0 and cl.stdout.startswith("requests "),
                  "client: exit %d %s %s" % (cl.returncode, cl.stdout, cl.stderr))
    ok &= c.check("requests" in out and int(out.split("requests ")[-1].split()[0]) > 1000,
                  "server: requests served: %s" % out)
    got = server_out.parse(out)
    ok &= c.check(os.path.exists(path), "%s engine: a profile" % ENGINE)
    return (path, got["workers"], got["work_share"]) if ok else None


def report_rows(path):
    r = subprocess.run([KESTREL, "report", "--state", "running", "--wide", path],
                       capture_output=True, text=True, timeout=120)
    rows = [m.groups() for m in map(ROW.match, r.stdout.splitlines()) if m]
    c.check(len(rows) >= 3, "report rows: %s %s" % (r.stdout, r.stderr))
    return rows, r.stdout


def handle_request_share(path):
    """The share of the running samples with handle_request on their stack, and how
    many running samples there are."""
    r = subprocess.run([KESTREL, "export", "--format", "folded", "-o", "-", path],
                       capture_output=True, text=True, timeout=120)
    total = inside = 0
    for line in r.stdout.splitlines():
        stack, _, n = line.rpartition(" ")
        total += int(n)
        inside += int(n) if "handle_request" in stack.split(";") else 0
    return (inside / total if total else 0.0), total


got = serve("ev.json")
if got:
    path, truth, work_share = got
    p = load(path)
    validate(p, c, "event loop")
    rows, text = report_rows(path)
    funcs = [f for _, _, _, f, _ in rows]
    hr = [int(n) for _, _, n, f, _ in rows if f in ("handle_request", "lcg_rounds")]
    c.check(sum(hr) >= 50, "running samples in handle_request (and lcg_rounds, inlined in "
            "it): %s" % rows)
    mask = [f for f in funcs if "sigmask" in f or "sigprocmask" in f]
    c.check(not mask, "no signal-mask function in the top 10: %s" % mask)
    wrap = sum(float(pc) for pc, _, _, f, loc in rows if loc.startswith("blocking.c") or
               f.startswith("blk_"))
    c.check(wrap < 2.0, "the wrappers' own code: %.1f%% of the running samples: %s"
            % (wrap, text))

    # The workers' running share against their CPU/wall: each printed, their mean checked.
    threads = p["threads"]
    hz = rate_of(p, c, 997)
    runs, shares, variances = [], [], []
    for tid, share in sorted(truth.items()):
        idx = [i for i, t in enumerate(threads) if t.get("tid") == tid]
        if not c.check(len(idx) == 1, "worker %d among the profile's threads" % tid):
            continue
        states = [s[3] for s in p["samples"] if s[1] == idx[0]]
        n = len(states)
        run = sum(1 for s in states if s == 0) / n if n else 0.0
        print("%s engine: worker %d running %.3f ±%.3f over %d samples, CPU/wall %.3f"
              % (ENGINE, tid, run, (run * (1 - run) / n) ** 0.5 if n else 0.0, n, share))
        c.check(n >= 0.5 * hz * 4, "%s engine: worker %d has %d samples" % (ENGINE, tid, n))
        runs.append(run)
        shares.append(share)
        variances.append(share * (1 - share) / n if n else 1.0)
    if ENGINE == "signal" and runs:
        k = len(runs)
        run, share = sum(runs) / k, sum(shares) / k
        se = sum(variances) ** 0.5 / k
        c.check(abs(run - share) <= 3 * se, "signal engine: the workers' running share %.3f "
                "against their CPU/wall %.3f (3 SE %.3f)" % (run, share, 3 * se))

    hr_share, n_run = handle_request_share(path)
    se = (work_share * (1 - work_share) / n_run) ** 0.5 if n_run else 1.0
    print("%s engine: handle_request on %.1f%% of the %d running samples (SE %.1f), %.1f%% "
          "of the threads' CPU time" % (ENGINE, 100 * hr_share, n_run, 100 * se, 100 * work_share))
    if ENGINE == "signal":
        c.check(abs(hr_share - work_share) <= 3 * se,
                "signal engine: handle_request on %.3f of the running samples, %.3f of the "
                "CPU time (3 SE %.3f)" % (hr_share, work_share, 3 * se))
c.exit()

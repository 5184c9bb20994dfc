#!/usr/bin/env python3
"""An epoll server of the project's own (bench/evloop/server: two threads, 20 µs of
CPU per request in handle_request, non-blocking keep-alive sockets) under its load
generator on loopback, profiled at 997 Hz: every epoll_wait, read and write returns
what it would unprofiled (the server exits non-zero on an EINTR or a short write), the
clients' requests all complete, handle_request has running samples, no signal-mask
function is among the report's top 10, and the blocking-call wrappers'
own code (src/runtime/cpu/blocking.c) holds under 2% of the running samples."""
import os
import re
import socket
import subprocess

from rtlib import BUILD, ENGINE, Checker, load, profiled_env, tmpdir, validate

ROW = re.compile(r"^\s*[█▉▊▋▌▍▎▏]*\s+([\d.]+)%\s+[\d.]+\s+[\d.]+%\s+(\d+)\s+\d+\s+(\S+)\s+(\S+)")
c = Checker()
B = os.path.join(BUILD, "bench", "evloop")
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = str(s.getsockname()[1])
s.close()
path = os.path.join(tmpdir(), "ev.json")
srv = subprocess.Popen([os.path.join(B, "server"), port, "2", "20", "4"],
                       env=profiled_env(path, hz=997), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
cl = subprocess.run([os.path.join(B, "client"), port, "8", "0.5", "3"], capture_output=True,
                    text=True, timeout=120)
out, err = srv.communicate(timeout=120)
c.check(srv.returncode == 0, "%s engine: server exit %d: %s" % (ENGINE, srv.returncode, err))
c.check(cl.returncode == 0 and cl.stdout.startswith("requests "),
        "client: exit %d %s %s" % (cl.returncode, cl.stdout, cl.stderr))
c.check("requests" in out and int(out.split("requests ")[-1].split()[0]) > 1000,
        "server: requests served: %s" % out)
if c.check(os.path.exists(path), "a profile"):
    validate(load(path), c, "event loop")
    r = subprocess.run([os.path.join(BUILD, "bin", "kestrel"), "report", "--state", "running",
                        "--wide", path], capture_output=True, text=True, timeout=120)
    rows = [m.groups() for m in map(ROW.match, r.stdout.splitlines()) if m]
    c.check(len(rows) >= 3, "report rows: %s %s" % (r.stdout, r.stderr))
    funcs = [f for _, _, f, _ in rows]
    hr = [int(n) for _, n, f, _ in rows if f in ("handle_request", "lcg_rounds")]
    c.check(sum(hr) >= 50, "running samples in handle_request (and lcg_rounds, inlined in "
            "it): %s" % rows)
    mask = [f for f in funcs if "sigmask" in f or "sigprocmask" in f]
    c.check(not mask, "no signal-mask function in the top 10: %s" % mask)
    wrap = sum(float(p) for p, _, f, loc in rows if loc.startswith("blocking.c") or
               f.startswith("blk_"))
    c.check(wrap < 2.0, "the wrappers' own code: %.1f%% of the running samples: %s"
            % (wrap, r.stdout))
c.exit()

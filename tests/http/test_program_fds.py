#!/usr/bin/env python3
"""The scrape server's descriptors are the runtime's own (src/runtime/rtfd.h): a program
that, while a CPU window of 2 s waits, closes every descriptor above 2 and dup2s its own
log file onto every number up to 1023 (as a daemon does) keeps its log exactly as it
wrote it and every one of those descriptors open — the window's connection, the
listening socket are not written, accepted on or closed under it — and the server says
on stderr that it ended. The program's
output equals its unprofiled output."""
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

from httplib import BUILD, ENGINE, LIB, Checker, free_port

c = Checker()
PROG = os.path.join(BUILD, "tests", "http", "prog_closer")
d = tempfile.mkdtemp(prefix="kestrel-http-fds-")


def run(profiled):
    log = os.path.join(d, "log.%d" % profiled)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env.pop("LD_PRELOAD", None)
    port = free_port()
    if profiled:
        env.update(LD_PRELOAD=LIB, KESTREL_PROFILE_ENGINE=ENGINE,
                   KESTREL_HTTP="127.0.0.1:%d" % port)
    p = subprocess.Popen([PROG, log], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    got = {}
    if profiled:
        def window():
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=20)
                s.sendall(b"GET /debug/pprof/profile?seconds=2 HTTP/1.1\r\nHost: x\r\n\r\n")
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                got["answer"] = data
            except OSError as e:
                got["answer"] = repr(e).encode()
        t = threading.Thread(target=window)
        t.start()
        time.sleep(0.5)  # the window is open and waiting
    out, err = p.communicate("go\n", timeout=60)
    if profiled:
        t.join(30)
    return p.returncode, first + out, err, got.get("answer")


rc0, out0, err0, _ = run(0)
c.check(rc0 == 0 and "log: 0123456789\nclosed under it: 0\n" in out0,
        "unprofiled: exit 0, log intact, nothing closed: %r" % out0)
rc, out, err, answer = run(1)
c.check(rc == 0, "profiled: exit %d (%s)" % (rc, err[-300:]))
c.check(out == out0, "profiled: the program's output is its unprofiled output: %r" % out)
c.check("the program closed the server's socket" in err,
        "the server's end said on stderr: %r" % err[-300:])
c.check(answer is not None and not answer.startswith(b"HTTP/1.1 200"),
        "the window's client got no profile from a connection the program took: %r" %
        (answer or b"")[:80])
c.exit()

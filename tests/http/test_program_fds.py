#!/usr/bin/env python3
"""The scrape server's descriptors are out of the program's reach (src/runtime/http/
server.c: its thread has a descriptor table of its own, rtthread.h): a program that,
while a CPU window of 1 s waits, closes every descriptor above 2 and dup2s its own log
file onto every number up to 1023 (as a daemon does) keeps its log exactly as it wrote
it and every one of those descriptors open, its output equals its unprofiled output,
and the server goes on: the window's client gets its profile, and a request made after
the program took every number is answered."""
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
        def get(path, key):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=20)
                s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                got[key] = data
            except OSError as e:
                got[key] = repr(e).encode()
        t = threading.Thread(target=get, args=(b"/debug/pprof/profile?seconds=1", "window"))
        t.start()
        time.sleep(0.5)  # the window is open and waiting
    p.stdin.write("go\n")
    p.stdin.flush()
    if profiled:
        time.sleep(0.3)  # the program has taken every number by now (about 1 ms)
        get(b"/debug/pprof/", "after")
    out, err = p.communicate(timeout=60)
    if profiled:
        t.join(30)
    return p.returncode, first + out, err, got


rc0, out0, err0, _ = run(0)
c.check(rc0 == 0 and "log: 0123456789\nclosed under it: 0\n" in out0,
        "unprofiled: exit 0, log intact, nothing closed: %r" % out0)
rc, out, err, got = run(1)
c.check(rc == 0, "profiled: exit %d (%s)" % (rc, err[-300:]))
c.check(out == out0, "profiled: the program's output is its unprofiled output: %r" % out)
c.check((got.get("window") or b"").startswith(b"HTTP/1.1 200"),
        "the window's client got its profile: %r" % (got.get("window") or b"")[:80])
c.check((got.get("after") or b"").startswith(b"HTTP/1.1 200"),
        "a request after the program took every number is answered: %r" %
        (got.get("after") or b"")[:80])
c.check("KESTREL_HTTP" not in err, "nothing said about the server: %r" % err[-300:])
c.exit()

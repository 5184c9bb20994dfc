#!/usr/bin/env python3
"""The scrape endpoints against requests a scraper should not send, each answered
the way it should be, while the program's own work goes on unaffected (its output is
the unprofiled one): seconds=0, -1, huge and not a number; a 1 MB header; a request
that never finishes (the server answers others afterwards, and the CPU window running
meanwhile still ends on time); a second CPU request during a window; an unknown path;
a wrong method; a heap profile asked of a process without one. Then the address rules:
a non-loopback bind is refused (and allowed with KESTREL_HTTP_ALLOW_REMOTE=1, said on
stderr), a port in use is one stderr line, and the program runs on. Descriptors: none
in the program's table, the listening socket in the server thread's own, high and
close-on-exec, and none in a fork child."""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from httplib import (Checker, Server, free_port, get, reference_output, request, task_fds,
                     wait_listening)

c = Checker()
ref = reference_output()
c.check("same=1" in ref, "the unprofiled program ran")


def go_error(r, status, what, text=None):
    ok = c.check(r is not None and r[0] == status, what + ": status %d: %r" % (status, r and r[:2]))
    if ok:
        c.check(r[1].get("x-go-pprof") == "1", what + ": X-Go-Pprof: 1")
        c.check(r[1].get("content-type", "").startswith("text/plain"), what + ": text/plain")
        if text:
            c.check(text in r[2].decode(), what + ": says %r: %r" % (text, r[2]))


port = free_port()
s = Server({"KESTREL_HTTP": "127.0.0.1:%d" % port}, args=["fork"])
c.check(wait_listening(port), "the server listens")

go_error(get(port, "/debug/pprof/profile?seconds=0"), 400, "seconds=0", "positive")
go_error(get(port, "/debug/pprof/profile?seconds=-1"), 400, "seconds=-1", "positive")
go_error(get(port, "/debug/pprof/profile?seconds=abc"), 400, "seconds=abc", "positive")
go_error(get(port, "/debug/pprof/profile?seconds=99999999999"), 400, "seconds huge",
         "KESTREL_HTTP_MAX_SECONDS")
go_error(get(port, "/debug/pprof/goroutine"), 404, "a profile kestrel has not", "Unknown profile")
go_error(get(port, "/nothing/here"), 404, "an unknown path", "404 page not found")
r = get(port, "/debug/pprof/heap", method="DELETE")
go_error(r, 405, "DELETE /heap")
c.check(r and r[1].get("allow") == "GET, HEAD", "405 says what is allowed")
go_error(get(port, "/debug/pprof/heap"), 404, "no heap profile runs", "KESTREL_HEAP")
go_error(get(port, "/debug/pprof/allocs"), 404, "no heap profile runs (allocs)", "kestrel_heap_start")

# a 1 MB header: refused once its limit is past, without reading the rest
big = b"GET /debug/pprof/ HTTP/1.1\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n"
result = {}


def send_big():
    try:
        sk = socket.create_connection(("127.0.0.1", port), timeout=20)
        try:
            sk.sendall(big)
        except OSError:
            pass  # the server closed its end once it had answered
        data = b""
        try:
            while True:
                d = sk.recv(65536)
                if not d:
                    break
                data += d
        except OSError:
            pass
        result["big"] = data
    except OSError as e:
        result["big"] = repr(e).encode()


t = threading.Thread(target=send_big)
t.start()
t.join(30)
from httplib import parse_response
go_error(parse_response(result.get("big", b"")), 431, "a 1 MB header")

# a CPU window of 3 s, and meanwhile: a second CPU request, a request that never
# finishes, and the index page after it
win = {}


def window():
    t0 = time.time()
    win["r"] = get(port, "/debug/pprof/profile?seconds=3")
    win["t"] = time.time() - t0


tw = threading.Thread(target=window)
tw.start()
time.sleep(0.5)
go_error(get(port, "/debug/pprof/profile?seconds=1"), 409, "a second CPU request", "already in use")
slow = socket.create_connection(("127.0.0.1", port), timeout=20)
slow.sendall(b"GET /debug/pprof/heap HTTP/1.1\r\nHost: x\r\n")  # never finished
t0 = time.time()
r = get(port, "/debug/pprof/")  # waits behind the slow one, at most its read limit
c.check(r and r[0] == 200 and b"profile" in r[2], "the index is served after a stalled client")
c.check(time.time() - t0 < 6, "the stalled client held the server %.1f s (limit 3 s)" % (time.time() - t0))
data = b""
try:
    while True:
        d = slow.recv(65536)
        if not d:
            break
        data += d
except OSError:
    pass
go_error(parse_response(data), 408, "a request that never finishes")
tw.join(30)
r = win.get("r")
c.check(r is not None and r[0] == 200, "the window answered 200: %r" % (r and r[:2],))
if r:
    c.check(r[1].get("content-type") == "application/octet-stream", "a profile is octet-stream")
    c.check(r[2][:2] == b"\x1f\x8b", "a profile is gzip'd")
c.check(3.0 <= win.get("t", 0) < 7.0, "the 3 s window took %.1f s" % win.get("t", 0))

# descriptors: none of the server's in the program's table; the server's thread holds
# its listening socket, high and close-on-exec; the fork child has none
pid = s.p.pid
mine = [fd for fd, l in task_fds(pid).items() if l.startswith("socket:")]
c.check(mine == [], "the program's table holds none of the server's sockets: %r" % mine)
server = task_fds(pid, "kestrel-http")
socks = [fd for fd, l in server.items() if l.startswith("socket:")]
c.check(len(socks) == 1 and socks[0] >= 512,
        "the server's thread holds one socket, numbered high: %r" % server)
if socks:
    tid = [t for t in os.listdir("/proc/%d/task" % pid)
           if open("/proc/%d/task/%s/comm" % (pid, t)).read().strip() == "kestrel-http"][0]
    with open("/proc/%d/task/%s/fdinfo/%d" % (pid, tid, socks[0])) as f:
        flags = int([l for l in f if l.startswith("flags:")][0].split()[1], 8)
    c.check(flags & 0o2000000, "the socket is close-on-exec")
with open(s.err_path) as f:
    child = [l for l in f.read().splitlines() if l.startswith("child ")]
if c.check(child, "the program forked"):
    cpid = int(child[0].split()[1])
    links = [os.readlink("/proc/%d/fd/%s" % (cpid, fd)) for fd in os.listdir("/proc/%d/fd" % cpid)]
    c.check(not [l for l in links if l.startswith("socket:")], "the fork child holds no socket: %r" % links)

out, err, rc = s.stop()
c.check(rc == 0 and out == ref, "the program's output is the unprofiled one: %r" % out)

# addresses
for addr, allow in (("0.0.0.0", None), ("0.0.0.0", "1")):
    p2 = free_port()
    env = {"KESTREL_HTTP": "%s:%d" % (addr, p2)}
    if allow:
        env["KESTREL_HTTP_ALLOW_REMOTE"] = allow
    s = Server(env)
    listening = wait_listening(p2, timeout=2)
    out, err, rc = s.stop()
    if allow:
        c.check(listening, "0.0.0.0 allowed: it listens")
        c.check("KESTREL_HTTP_ALLOW_REMOTE=1" in err and "beyond this machine" in err,
                "0.0.0.0 allowed: stderr says so: %r" % err)
    else:
        c.check(not listening, "0.0.0.0 refused: nothing listens")
        c.check("not a loopback address" in err, "0.0.0.0 refused: stderr says why: %r" % err)
    c.check(rc == 0 and out == ref, "%s allow=%s: the output is the unprofiled one" % (addr, allow))

busy = socket.socket()
busy.bind(("127.0.0.1", 0))
busy.listen(1)
p3 = busy.getsockname()[1]
s = Server({"KESTREL_HTTP": "127.0.0.1:%d" % p3})
out, err, rc = s.stop()
lines = [l for l in err.splitlines() if "KESTREL_HTTP" in l]
c.check(len(lines) == 1 and "Address already in use" in lines[0], "port in use: one line: %r" % err)
c.check(rc == 0 and out == ref, "port in use: the program runs on, output the unprofiled one")
busy.close()
c.exit()

#!/usr/bin/env python3
"""The scrape endpoints under abuse, and who may read them.

1,000 connections are opened and left idle (900 that never send a byte, 100 that send
half a request and stop); a CPU scrape (profile?seconds=2) made then is answered within
1 s of its seconds, with a real profile. Meanwhile the server holds a bounded number of
descriptors (what /proc/PID/fd says) and the program's RSS grows by less than 2 MiB,
the connections past its bound are closed by it
(refused, not queued), and the program's own work goes on unaffected (its output is the
unprofiled one).

Then the peer check: a user the test creates (runuser) is refused (403) on
/debug/pprof/symbol and /debug/pprof/profile, while root and the program's own user
are served; KESTREL_HTTP_ALLOW_ANY_USER=1 opens it to that user and says so on stderr.
A Unix socket (KESTREL_HTTP=unix:PATH) is created owner-only (0600) and serves its
owner; the other user cannot connect to it."""
import os
import resource
import socket
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from httplib import Checker, Server, free_port, get, parse_response, reference_output, wait_listening

c = Checker()
ref = reference_output()
c.check("same=1" in ref, "the unprofiled program ran")

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft < 2200:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))


def server_fds(pid):
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:"):
                n += 1
        except OSError:
            pass
    return n


# ---- 1,000 idle and slow connections, then a scrape ----
port = free_port()
s = Server({"KESTREL_HTTP": "127.0.0.1:%d" % port})
c.check(wait_listening(port), "the server listens")
def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])
    return 0


rss_before = rss_kib(s.p.pid)
idle = []
t0 = time.time()
for i in range(1000):
    k = socket.socket()
    k.settimeout(10)
    try:
        k.connect(("127.0.0.1", port))
        if i % 10 == 0:
            k.sendall(b"GET /debug/pprof/profile?seconds=1 HTTP/1.1\r\nHost: x\r\n")
    except OSError as e:
        c.check(False, "connection %d: %s" % (i, e))
        k.close()
        break
    idle.append(k)
print("1000 connections opened in %.2f s" % (time.time() - t0))
c.check(len(idle) == 1000, "1,000 connections opened (%d)" % len(idle))
held = server_fds(s.p.pid)
rss_after = rss_kib(s.p.pid)
print("the program's RSS: %d KiB before, %d KiB with 1,000 connections open" % (rss_before, rss_after))
c.check(rss_after - rss_before < 2048, "the server's memory stays bounded: +%d KiB" % (rss_after - rss_before))
print("sockets held by the server with 1,000 connections open: %d" % held)
c.check(held <= 32 + 2, "the server holds at most 32 connections and its listening "
        "socket (%d sockets)" % held)

t0 = time.time()
r = get(port, "/debug/pprof/profile?seconds=2", timeout=30)
took = time.time() - t0
print("scrape of 2 s with 1,000 connections open answered in %.2f s" % took)
c.check(r is not None and r[0] == 200, "the scrape is answered 200: %r" % (r and r[:2],))
c.check(r is not None and r[2][:2] == b"\x1f\x8b", "the answer is a gzip'd profile")
c.check(took < 3.0, "answered within 1 s of its seconds (%.2f s)" % took)

# the connections past the bound were closed by the server: EOF on most of them
closed = 0
for k in idle:
    k.setblocking(False)
    try:
        d = k.recv(4096)
        if d == b"" or d.startswith(b"HTTP/1.1 "):
            closed += 1
    except BlockingIOError:
        pass
    except OSError:
        closed += 1
print("connections closed or answered by the server: %d of 1000" % closed)
c.check(closed >= 1000 - 32, "the connections past the bound were closed, not queued "
        "(%d of 1000)" % closed)
for k in idle:
    k.close()
# a second scrape, with the flood gone, still works
r = get(port, "/debug/pprof/symbol", timeout=10)
c.check(r is not None and r[0] == 200, "served again after the flood: %r" % (r and r[:2],))
out, err, rc = s.stop()
c.check(rc == 0 and out == ref, "the program's output is the unprofiled one (rc %d)" % rc)

# ---- a second user ----
USER = "kestrel-scrape-test"
subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
uid = int(subprocess.run(["id", "-u", USER], capture_output=True, text=True).stdout)
c.check(uid != os.geteuid() and uid != 0, "a second user exists (uid %d)" % uid)


def as_user(args):
    """curl as the second user: (http status or 0, body)."""
    r = subprocess.run(["runuser", "-u", USER, "--", "curl", "-s", "-m", "15", "-w", "\n%{http_code}"] + args,
                       capture_output=True)
    body, _, code = r.stdout.rpartition(b"\n")
    return int(code or 0), body


port = free_port()
s = Server({"KESTREL_HTTP": "127.0.0.1:%d" % port})
c.check(wait_listening(port), "the server listens")
base = "http://127.0.0.1:%d/debug/pprof/" % port
code, body = as_user([base + "symbol"])
c.check(code == 403, "uid %d refused on /symbol: %d %r" % (uid, code, body))
c.check(b"only this program's user" in body, "the refusal says why: %r" % body)
code, body = as_user([base + "profile?seconds=1"])
c.check(code == 403, "uid %d refused on /profile: %d %r" % (uid, code, body))
r = get(port, "/debug/pprof/symbol", timeout=10)
c.check(r is not None and r[0] == 200, "root is served: %r" % (r and r[:2],))
out, err, rc = s.stop()
c.check(rc == 0 and out == ref, "the program's output is the unprofiled one")

# the program's own user: the server runs as the second user, its user asks
port = free_port()
d = tempfile.mkdtemp(prefix="kestrel-http-user-")
os.chmod(d, 0o755)
from httplib import LIB, SERVER
# the second user must reach the library and the program: the checkout's parents may
# be closed to it, so both are copied to a directory it can read
lib2, srv2 = os.path.join(d, "libkestrel.so"), os.path.join(d, "prog_server")
subprocess.run(["cp", LIB, lib2]); subprocess.run(["cp", SERVER, srv2])
os.chmod(lib2, 0o755); os.chmod(srv2, 0o755)
# (env after runuser: runuser itself, root, must not be the one preloaded)
p = subprocess.Popen(["runuser", "-u", USER, "--", "env", "LD_PRELOAD=" + lib2,
                      "KESTREL_HTTP=127.0.0.1:%d" % port, srv2], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
p.stdout.readline()
c.check(wait_listening(port), "the second user's server listens")
code, body = as_user(["http://127.0.0.1:%d/debug/pprof/symbol" % port])
c.check(code == 200, "the program's own user is served: %d %r" % (code, body[:80]))
r = get(port, "/debug/pprof/symbol", timeout=10)
c.check(r is not None and r[0] == 200, "root is served by the other user's program")
p.communicate(b"", timeout=60)

# opened explicitly: every user, said on stderr
port = free_port()
s = Server({"KESTREL_HTTP": "127.0.0.1:%d" % port, "KESTREL_HTTP_ALLOW_ANY_USER": "1"})
c.check(wait_listening(port), "the server listens")
code, body = as_user(["http://127.0.0.1:%d/debug/pprof/symbol" % port])
c.check(code == 200, "KESTREL_HTTP_ALLOW_ANY_USER=1: uid %d served: %d" % (uid, code))
out, err, rc = s.stop()
c.check("every user" in err and "KESTREL_HTTP_ALLOW_ANY_USER=1" in err,
        "it is said on stderr: %r" % err)

# ---- a Unix socket, owner-only ----
d = tempfile.mkdtemp(prefix="kestrel-http-unix-")
os.chmod(d, 0o755)
path = os.path.join(d, "pprof.sock")
s = Server({"KESTREL_HTTP": "unix:" + path})
for _ in range(100):
    if os.path.exists(path):
        break
    time.sleep(0.05)
st = os.stat(path)
c.check(stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600,
        "the socket is owner-only: %o" % st.st_mode)
k = socket.socket(socket.AF_UNIX)
k.connect(path)
k.sendall(b"GET /debug/pprof/profile?seconds=1 HTTP/1.1\r\nHost: x\r\n\r\n")
data = b""
while True:
    chunk = k.recv(65536)
    if not chunk:
        break
    data += chunk
r = parse_response(data)
c.check(r is not None and r[0] == 200 and r[2][:2] == b"\x1f\x8b",
        "the owner reads a CPU profile over the Unix socket: %r" % (r and r[:2],))
code, body = as_user(["--unix-socket", path, "http://x/debug/pprof/symbol"])
c.check(code != 200, "the other user gets nothing from the Unix socket (curl status %d)" % code)
out, err, rc = s.stop()
c.check(rc == 0 and out == ref, "the program's output is the unprofiled one")
c.exit()

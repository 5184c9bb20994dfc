#!/usr/bin/env python3
"""The scrape endpoints' bounds, reached for real, and the peer check over IPv6.

- 64 MiB of answers in flight: clients that ask /debug/pprof/symbol for ~3.4 MB
  answers (1 MB of addresses of one long-named function) and read them no further
  than the headers, one after another. The server holds exactly as many as fit in
  64 MiB (each answer's Content-Length says its size); the next is a 503 ("too many
  answers in flight"); the program's RSS grows by less than 64 MiB + 8 MiB; once one
  client goes, a request is served again.
- 32 connections: one CPU scrape (profile?seconds=4) waiting for its window and 31
  slow readers of ~1 MB answers (31 MB, under the 64 MiB cap) fill every slot; one more
  connection gets a 503 ("too many connections") at once, not queued; the CPU scrape is
  still answered, and when the slow readers go a request is served again.
- [::1] (tcp6): the peer's uid from /proc/net/tcp6. A second user (runuser) is refused
  by a root-owned program with a 403 naming that user's uid; root is served; the second
  user's own program serves that user over [::1].

A slow reader is a socket with a small receive buffer and a small MSS, so that the
kernel's buffers on both ends hold little of an answer and the rest waits in the
server, as it would for a client that stopped reading."""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from httplib import (LIB, SERVER, Checker, Server, free_port, parse_response, reference_output,
                     task_fds, wait_listening)

PENDING_MAX = 64 << 20  # HTTP_PENDING_MAX
CONN_MAX = 32           # HTTP_CONN_MAX
WRITE_S = 10.0          # HTTP_WRITE_MS: a held answer is dropped after this

c = Checker()
ref = reference_output()


def long_name_address(pid):
    """The run-time address of the longest-named function libkestrel.so exports."""
    base = None
    with open("/proc/%d/maps" % pid) as f:
        for l in f:
            x = l.split()
            if len(x) >= 6 and os.path.realpath(x[5]) == os.path.realpath(LIB) and int(x[2], 16) == 0:
                base = int(x[0].split("-")[0], 16)
                break
    nm = subprocess.run(["nm", "-D", "--defined-only", LIB], capture_output=True, text=True).stdout
    syms = sorted((len(x[2]), int(x[0], 16)) for x in (l.split() for l in nm.splitlines())
                  if len(x) == 3 and x[1] in "Tt")
    return base + syms[-1][1]


def slow_symbol(port, addr, body_bytes, family=socket.AF_INET, host="127.0.0.1"):
    """POSTs body_bytes of `addr+addr+…` to /symbol and reads the answer's head only:
    (socket, status, Content-Length, head bytes)."""
    k = socket.socket(family)
    k.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    k.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
    k.settimeout(10)
    k.connect((host, port))
    one = ("%#x+" % addr).encode()
    body = one * (body_bytes // len(one))
    k.sendall(b"POST /debug/pprof/symbol HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
              % len(body) + body)
    d = b""
    while b"\r\n\r\n" not in d:
        chunk = k.recv(256)
        if not chunk:
            break
        d += chunk
    m = re.match(rb"HTTP/1\.1 (\d+)", d)
    n = re.search(rb"Content-Length: (\d+)", d)
    return k, int(m.group(1)) if m else 0, int(n.group(1)) if n else 0, d


def read_all(k):
    data = b""
    while True:
        try:
            chunk = k.recv(65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data


def sockets_of(pid):
    """The sockets of the program's table and of the server thread's own."""
    links = set(task_fds(pid).values()) | set(task_fds(pid, "kestrel-http").values())
    return sum(1 for l in links if l.startswith("socket:"))


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])
    return 0


def served_again(port, addr, what):
    """A small /symbol request is answered 200 within 3 s (the server notices a gone
    client at its next send)."""
    end = time.time() + 3
    st = 0
    while time.time() < end:
        k, st, n, d = slow_symbol(port, addr, 100)
        k.close()
        if st == 200:
            break
        time.sleep(0.1)
    c.check(st == 200, "%s: a request is served again (%d)" % (what, st))


# ---- 64 MiB of answers in flight ----
port = free_port()
s = Server({"KESTREL_HTTP": "127.0.0.1:%d" % port})
c.check(wait_listening(port), "the server listens")
addr = long_name_address(s.p.pid)
rss_before = rss_kib(s.p.pid)
held, sizes, refused = [], [], None
t0 = time.time()
for i in range(CONN_MAX - 1):
    k, st, n, head = slow_symbol(port, addr, 1000000)
    if st != 200:
        refused = (st, head, k.recv(4096))
        k.close()
        break
    held.append(k)
    sizes.append(n)
took = time.time() - t0
print("answers held: %d of %s bytes in %.2f s; then %r" % (len(held), sorted(set(sizes)), took,
                                                           refused and refused[:1]))
c.check(took < WRITE_S - 1, "the requests were made within the time an answer is held (%.2f s)" % took)
c.check(sizes and min(sizes) > PENDING_MAX // (CONN_MAX - 1),
        "each answer is large enough for 64 MiB to be reached within 31 connections (%s)" % sizes[:1])
c.check(sum(sizes) <= PENDING_MAX, "the answers held fit 64 MiB: %d bytes" % sum(sizes))
c.check(sizes and sum(sizes) + sizes[-1] > PENDING_MAX,
        "one more answer would not fit 64 MiB: %d + %d bytes" % (sum(sizes), sizes[-1] if sizes else 0))
c.check(refused is not None and refused[0] == 503 and b"too many answers in flight" in refused[1] + refused[2],
        "the request past 64 MiB is refused with a 503: %r" % (refused,))
rss_held = rss_kib(s.p.pid)
print("the program's RSS: %d KiB before, %d KiB with %d bytes of answers held (+%d KiB)"
      % (rss_before, rss_held, sum(sizes), rss_held - rss_before))
c.check(rss_held - rss_before < (PENDING_MAX >> 10) + 8192,
        "the program's memory stays within 64 MiB of answers and 8 MiB more: +%d KiB" % (rss_held - rss_before))
# one client goes: its answer's bytes leave the count
held.pop(0).close()
served_again(port, addr, "one held answer gone")
k, st, n, head = slow_symbol(port, addr, 1000000)
c.check(st == 200 and n == sizes[0], "a large answer fits again after one went: %d" % st)
k.close()
for k in held:
    k.close()
out, err, rc = s.stop()
c.check(rc == 0 and out == ref, "the program's output is the unprofiled one (rc %d)" % rc)

# ---- 32 connections, each being answered ----
port = free_port()
s = Server({"KESTREL_HTTP": "127.0.0.1:%d" % port})
c.check(wait_listening(port), "the server listens")
addr = long_name_address(s.p.pid)
cpu = socket.create_connection(("127.0.0.1", port), timeout=30)
cpu.sendall(b"GET /debug/pprof/profile?seconds=4 HTTP/1.1\r\nHost: x\r\n\r\n")
t_cpu = time.time()
time.sleep(0.3)
held, sizes = [], []
for i in range(CONN_MAX - 1):
    k, st, n, head = slow_symbol(port, addr, 300000)
    c.check(st == 200, "slow reader %d is answered: %d %r" % (i, st, head[:60]))
    held.append(k)
    sizes.append(n)
print("slow readers: %d, answers of %s bytes (%d in all), after %.2f s"
      % (len(held), sorted(set(sizes)), sum(sizes), time.time() - t_cpu))
c.check(sum(sizes) < PENDING_MAX // 2, "the answers held are well under 64 MiB (%d bytes)" % sum(sizes))
n_sock = sockets_of(s.p.pid)
c.check(n_sock == CONN_MAX + 1, "the server holds 32 connections and its listening socket (%d sockets)"
        % n_sock)
t0 = time.time()
k = socket.create_connection(("127.0.0.1", port), timeout=10)
k.sendall(b"GET /debug/pprof/symbol HTTP/1.1\r\nHost: x\r\n\r\n")
r = parse_response(read_all(k))
k.close()
took = time.time() - t0
print("the 33rd connection: %r in %.3f s" % (r and (r[0], r[2]), took))
c.check(r is not None and r[0] == 503 and b"too many connections" in r[2],
        "the 33rd connection is refused with a 503: %r" % (r and r[:1],))
c.check(took < 1.0, "refused at once, not queued (%.3f s)" % took)
c.check(time.time() - t_cpu < 4, "the refusal came while the CPU window was still open")
r = parse_response(read_all(cpu))
took = time.time() - t_cpu
cpu.close()
c.check(r is not None and r[0] == 200 and r[2][:2] == b"\x1f\x8b",
        "the CPU scrape is answered with a profile (%r) in %.2f s" % (r and r[:1], took))
c.check(took < 4 + 1.5, "within its seconds and the grace (%.2f s)" % took)
for k in held:
    k.close()
served_again(port, addr, "the slow readers gone")
out, err, rc = s.stop()
c.check(rc == 0 and out == ref, "the program's output is the unprofiled one (rc %d)" % rc)

# ---- [::1]: the peer's uid from /proc/net/tcp6 ----
USER = "kestrel-scrape-test"
subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
uid = int(subprocess.run(["id", "-u", USER], capture_output=True, text=True).stdout)
c.check(uid != os.geteuid() and uid != 0, "a second user exists (uid %d)" % uid)


def as_user(url):
    r = subprocess.run(["runuser", "-u", USER, "--", "curl", "-g", "-s", "-m", "15", "-w", "\n%{http_code}",
                        url], capture_output=True)
    body, _, code = r.stdout.rpartition(b"\n")
    return int(code or 0), body


def get6(port, target):
    k = socket.create_connection(("::1", port), timeout=15)
    k.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % target).encode())
    r = parse_response(read_all(k))
    k.close()
    return r


def wait6(port):
    end = time.time() + 10
    while time.time() < end:
        try:
            socket.create_connection(("::1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


port = free_port()
s = Server({"KESTREL_HTTP": "[::1]:%d" % port})
c.check(wait6(port), "the server listens on [::1]")
code, body = as_user("http://[::1]:%d/debug/pprof/symbol" % port)
c.check(code == 403 and (b"uid %d may not" % uid) in body,
        "uid %d refused over [::1], named by its uid: %d %r" % (uid, code, body))
r = get6(port, "/debug/pprof/symbol")
c.check(r is not None and r[0] == 200, "root, the program's user, is served over [::1]: %r" % (r and r[:1],))
out, err, rc = s.stop()
c.check(rc == 0 and out == ref, "the program's output is the unprofiled one (rc %d)" % rc)

# the second user's own program: served to that user over [::1]
d = tempfile.mkdtemp(prefix="kestrel-http-user6-")
os.chmod(d, 0o755)
lib2, srv2 = os.path.join(d, "libkestrel.so"), os.path.join(d, "prog_server")
subprocess.run(["cp", LIB, lib2])
subprocess.run(["cp", SERVER, srv2])
os.chmod(lib2, 0o755)
os.chmod(srv2, 0o755)
port = free_port()
p = subprocess.Popen(["runuser", "-u", USER, "--", "env", "LD_PRELOAD=" + lib2,
                      "KESTREL_HTTP=[::1]:%d" % port, srv2], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
p.stdout.readline()
c.check(wait6(port), "the second user's server listens on [::1]")
code, body = as_user("http://[::1]:%d/debug/pprof/symbol" % port)
c.check(code == 200 and body.startswith(b"num_symbols: 1"),
        "the program's own user is served over [::1]: %d %r" % (code, body[:60]))
p.communicate(b"", timeout=60)
c.exit()

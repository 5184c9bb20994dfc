"""Shared helpers of the scrape endpoints' tests: start the test server program
preloaded with libkestrel.so and KESTREL_HTTP, talk to it over raw sockets, and read
`go tool pprof -raw`."""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime"))
from rtlib import BUILD, ENGINE, LIB, ROOT, Checker  # noqa: E402,F401  (one copy of each)

KESTREL = os.path.join(BUILD, "bin", "kestrel")
SERVER = os.path.join(BUILD, "tests", "http", "prog_server")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """The test server program, running until stop(); its stdout and stderr kept."""

    def __init__(self, env_extra, args=(), preload=True):
        env = dict(os.environ)
        for k in ("KESTREL_PROFILE", "KESTREL_HEAP", "KESTREL_HTTP", "LD_PRELOAD"):
            env.pop(k, None)
        if preload:
            env["LD_PRELOAD"] = LIB
            env["KESTREL_PROFILE_ENGINE"] = sys.modules[__name__].ENGINE
        env.update(env_extra)
        self.dir = tempfile.mkdtemp(prefix="kestrel-http-")
        self.err_path = os.path.join(self.dir, "stderr")
        self.err = open(self.err_path, "w")
        self.p = subprocess.Popen([SERVER] + list(args), env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err, text=True)
        self.first = self.p.stdout.readline()  # "phase two": the workers are in phase two

    def stop(self):
        out, _ = self.p.communicate("", timeout=120)
        self.err.close()
        with open(self.err_path) as f:
            err = f.read()
        return self.first + out, err, self.p.returncode


def task_fds(pid, task=None):
    """{number: link} of the descriptor table of a process (its first thread's, the
    program's) or of its thread named `task` (the scrape server's is "kestrel-http",
    with a table of its own: src/runtime/http/server.c)."""
    where = "/proc/%d/fd" % pid
    if task:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                    if f.read().strip() == task:
                        where = "/proc/%d/task/%s/fd" % (pid, tid)
                        break
            except OSError:
                pass
        else:
            return {}
    fds = {}
    for fd in os.listdir(where):
        try:
            fds[int(fd)] = os.readlink(os.path.join(where, fd))
        except OSError:
            pass
    return fds


def reference_output():
    s = Server({}, preload=False)
    out, err, rc = s.stop()
    return out


def request(port, raw, timeout=30.0, send_all=True):
    """Sends raw bytes, returns (status, headers dict lowercased, body bytes) or None when
    the connection closed without an answer."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        if send_all:
            s.sendall(raw)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    return parse_response(data)


def parse_response(data):
    if b"\r\n\r\n" not in data:
        return None
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for l in lines[1:]:
        k, v = l.split(":", 1)
        headers[k.strip().lower()] = v.strip()
    return status, headers, body


def get(port, target, method="GET", body=b"", timeout=60.0):
    raw = ("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n"
           % (method, target, len(body))).encode() + body
    return request(port, raw, timeout=timeout)


def pprof_raw(url_or_file, symbolize="remote"):
    """`go tool pprof -raw` with symbols from /debug/pprof/symbol only (no local
    binaries: HOME and PPROF_BINARY_PATH point at an empty directory)."""
    empty = tempfile.mkdtemp(prefix="kestrel-nohome-")
    # Go's own build cache stays where it is: `go tool pprof` is built on demand into it,
    # and rebuilding it in an empty HOME takes minutes on a loaded machine.
    gocache = subprocess.run(["go", "env", "GOCACHE"], capture_output=True, text=True).stdout.strip()
    env = dict(os.environ, HOME=empty, PPROF_BINARY_PATH=empty, PPROF_TMPDIR=empty, GOCACHE=gocache)
    env.pop("LD_PRELOAD", None)
    r = subprocess.run(["go", "tool", "pprof", "-symbolize=" + symbolize, "-raw", url_or_file],
                       env=env, capture_output=True, text=True, timeout=180)
    return r.returncode, r.stdout, r.stderr


def parse_raw(text):
    """-raw output: sample types (with the default marked), samples (values, location
    ids, labels), locations (id -> address, function names leaf-first)."""
    types, samples, locs = [], [], {}
    section = None
    cur = None
    for line in text.splitlines():
        if line.startswith("Samples:"):
            section = "samples"
            continue
        if line.startswith("Locations"):
            section = "locations"
            continue
        if line.startswith("Mappings"):
            section = "mappings"
            continue
        if section == "samples":
            if not types:
                types = line.split()
                continue
            m = re.match(r"^\s+([\d\s]+):\s*([\d\s]*)$", line)
            if m:
                vals = [int(v) for v in m.group(1).split()]
                cur = {"values": vals, "locs": [int(x) for x in m.group(2).split()], "labels": {}}
                samples.append(cur)
                continue
            for k, v in re.findall(r"(\w+):\[([^\]]*)\]", line):
                if cur is not None:
                    cur["labels"][k] = v
        elif section == "locations":
            m = re.match(r"^\s+(\d+):\s+(0x[0-9a-f]+)\s+M=\d+\s*(\S*)", line)
            if m:
                cur_loc = int(m.group(1))
                locs[cur_loc] = {"addr": int(m.group(2), 16), "names": [m.group(3)] if m.group(3) else []}
            else:
                m = re.match(r"^\s+(\S+)\s+\S*:\d+", line)  # an inlined frame's line
                if m and locs:
                    locs[max(locs)]["names"].append(m.group(1))
    return types, samples, locs


def leaf_totals(samples, locs, index):
    """Value `index` summed per leaf function name."""
    t = {}
    for s in samples:
        if not s["locs"]:
            continue
        names = locs.get(s["locs"][0], {}).get("names") or ["?"]
        t[names[0]] = t.get(names[0], 0) + s["values"][index]
    return sorted(t.items(), key=lambda kv: -kv[1])


def wait_listening(port, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False

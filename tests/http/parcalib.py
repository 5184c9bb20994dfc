"""A Parca server for the tests: built once by scripts/parca.sh (cached), started on a
free port with a configuration of the test's, and asked through its own HTTP API
(the gRPC gateway under /api: profiles/types, profiles/query_range, profiles/query)."""
import base64
import datetime
import gzip
import json
import os
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

from httplib import ROOT, free_port


def parca_binary():
    r = subprocess.run([os.path.join(ROOT, "scripts", "parca.sh")], capture_output=True, text=True,
                       timeout=3600)
    if r.returncode != 0:
        raise RuntimeError("scripts/parca.sh: " + r.stderr.strip())
    return r.stdout.strip()


def rfc3339(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Parca:
    def __init__(self, config_yaml):
        self.dir = tempfile.mkdtemp(prefix="kestrel-parca-")
        self.port = free_port()
        cfg = os.path.join(self.dir, "parca.yaml")
        with open(cfg, "w") as f:
            f.write(config_yaml)
        self.log = open(os.path.join(self.dir, "parca.log"), "w")
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        self.p = subprocess.Popen([parca_binary(), "--config-path=" + cfg,
                                   "--http-address=127.0.0.1:%d" % self.port,
                                   "--debuginfod-upstream-servers=", "--debuginfo-cache-dir=" + self.dir,
                                   "--log-level=" + os.environ.get("PARCA_LOG_LEVEL", "info")],
                                  cwd=self.dir, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        end = time.time() + 60
        while time.time() < end:
            try:
                self.get("profiles/types")
                return
            except Exception:
                time.sleep(0.5)
        raise RuntimeError("parca did not answer: " + self.logs()[-2000:])

    def logs(self):
        with open(os.path.join(self.dir, "parca.log")) as f:
            return f.read()

    def get(self, path, **params):
        url = "http://127.0.0.1:%d/api/%s" % (self.port, path)
        if params:
            url += "?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=60) as r:
            return json.loads(r.read())

    def types(self):
        return self.get("profiles/types").get("types", [])

    def query_range(self, query, start, end):
        """[(timestamp, value, duration_ns)] of every series' samples."""
        r = self.get("profiles/query_range", query=query, start=rfc3339(start), end=rfc3339(end),
                     step="1s")
        out = []
        for s in r.get("series", []):
            for x in s.get("samples", []):
                ts = datetime.datetime.strptime(x["timestamp"][:19], "%Y-%m-%dT%H:%M:%S").replace(
                    tzinfo=datetime.timezone.utc).timestamp()
                out.append((ts, int(x.get("value", 0)), int(x.get("duration", 0))))
        return out

    def merged_pprof(self, query, start, end):
        """The merged profile of [start, end] as pprof bytes."""
        r = self.get("profiles/query", mode="MODE_MERGE", **{"merge.query": query,
                     "merge.start": rfc3339(start), "merge.end": rfc3339(end)},
                     reportType="REPORT_TYPE_PPROF")
        return base64.b64decode(r["pprof"])

    def stop(self):
        self.p.terminate()
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.log.close()


def pprof_top(data):
    """go tool pprof -top of pprof bytes: [(function, flat)] and the total, in the
    profile's default unit as pprof prints it (no symbolization: names as stored)."""
    d = tempfile.mkdtemp(prefix="kestrel-parca-pprof-")
    path = os.path.join(d, "p.pb")
    with open(path, "wb") as f:
        f.write(data)
    r = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-raw", path],
                       capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def _pb_fields(buf):
    """(field number, wire type, value) of one protobuf message: ints for varints, bytes
    for length-delimited fields (the only wire types pprof uses)."""
    i = 0
    while i < len(buf):
        key, i = _pb_varint(buf, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _pb_varint(buf, i)
        elif wt == 2:
            n, i = _pb_varint(buf, i)
            v, i = buf[i:i + n], i + n
        else:
            raise ValueError("wire type %d in a pprof message" % wt)
        yield f, wt, v


def _pb_varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, i


def _pb_ints(wt, v):
    """A repeated integer field's values: packed or one."""
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _pb_varint(v, i)
        out.append(x)
    return out


def pprof_folded(data):
    """A pprof profile's stacks as {"root;…;leaf": first value summed}, each frame named
    by its line's function (inlined calls are frames; a location without lines has
    none). Read with the profile.proto field numbers, no library between."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    strings, samples, locs, funcs = [], [], {}, {}
    for f, wt, v in _pb_fields(data):
        if f == 2:  # Sample
            s = {"locs": [], "values": []}
            for g, gwt, gv in _pb_fields(v):
                if g == 1:
                    s["locs"] += _pb_ints(gwt, gv)
                elif g == 2:
                    s["values"] += [x - (1 << 64) if x >= 1 << 63 else x for x in _pb_ints(gwt, gv)]
            samples.append(s)
        elif f == 4:  # Location
            lid, lines = 0, []
            for g, gwt, gv in _pb_fields(v):
                if g == 1:
                    lid = gv
                elif g == 4:
                    fid = dict((h, hv) for h, _, hv in _pb_fields(gv)).get(1, 0)
                    lines.append(fid)
            locs[lid] = lines
        elif f == 5:  # Function
            fd = dict((h, hv) for h, _, hv in _pb_fields(v))
            funcs[fd.get(1, 0)] = fd.get(2, 0)
        elif f == 6:
            strings.append(v.decode("utf-8", "replace"))
    out = {}
    for s in samples:
        names = [strings[funcs.get(fid, 0)] if fid else "" for lid in s["locs"] for fid in locs.get(lid, [])]
        key = ";".join(n.replace(";", "\uFFFD") for n in reversed(names))
        out[key] = out.get(key, 0) + (s["values"][0] if s["values"] else 0)
    return out

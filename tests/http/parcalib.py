"""A Parca server for the tests: built once by scripts/parca.sh (cached), started on a
free port with a configuration of the test's, and asked through its own HTTP API
(the gRPC gateway under /api: profiles/types, profiles/query_range, profiles/query)."""
import base64
import datetime
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

#!/usr/bin/env python3
"""A program that takes the signal engine's signal: a Go program (tests/perf/gospin,
built with cgo so that the preloaded runtime reaches it) whose runtime installs a
handler for every signal, the engine's spares included. A CPU profile scraped from
its /debug/pprof/profile endpoint (KESTREL_HTTP, signal engine) while it spins has no
running sample, and must say why: a comment names the signal, that the program took
it, and that on-CPU sampling stopped. `go tool pprof` reads the comments.
Skipped (exit 77) without go or curl."""
import os, random, shutil, subprocess, sys, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LIB = os.path.join(ROOT, "build", "lib", "libkestrel.so")
SRC = os.path.join(ROOT, "tests", "perf", "gospin")
failures = 0


def check(cond, what):
    global failures
    print(("ok: " if cond else "FAIL: ") + what, file=sys.stderr)
    failures += 0 if cond else 1
    return cond


def main():
    go = shutil.which("go")
    if not go or not shutil.which("curl"):
        print("skipped: needs go and curl", file=sys.stderr)
        return 77
    with tempfile.TemporaryDirectory(prefix="kestrel-go-") as tmp:
        exe = os.path.join(tmp, "gospin")
        env = dict(os.environ, CGO_ENABLED="1", GOFLAGS="-mod=mod",
                   GOCACHE=os.path.join(ROOT, "build", "go-cache"))
        b = subprocess.run([go, "build", "-o", exe, "."], cwd=SRC, env=env,
                           capture_output=True, text=True, timeout=600)
        if not check(b.returncode == 0, "go build: %s" % b.stderr[-300:]):
            return 1
        for attempt in range(5):
            port = random.randint(20000, 60000)
            penv = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
            penv.update(LD_PRELOAD=LIB, KESTREL_HTTP="127.0.0.1:%d" % port,
                        KESTREL_PROFILE_ENGINE="signal")
            p = subprocess.Popen([exe, "6s"], env=penv, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
            time.sleep(1)
            pb = os.path.join(tmp, "w.pb.gz")
            c = subprocess.run(["curl", "-sf", "-o", pb, "http://127.0.0.1:%d/debug/pprof/"
                                "profile?seconds=2" % port], capture_output=True, timeout=60)
            p.kill()
            p.wait()
            if c.returncode == 0:
                break
        if not check(c.returncode == 0, "scraped a CPU window"):
            return 1
        raw = subprocess.run([go, "tool", "pprof", "-raw", pb], capture_output=True,
                             text=True, timeout=120).stdout
        comments = subprocess.run([go, "tool", "pprof", "-comments", pb], capture_output=True,
                                  text=True, timeout=120).stdout
        samples = raw.split("Samples:", 1)[1].split("Locations", 1)[0] if "Samples:" in raw else ""
        running = [l for l in samples.splitlines() if l.strip()][1:]  # past the types' line
        check(not running, "the window has no running sample (%d)" % len(running))
        named = [l for l in comments.splitlines()
                 if "the signal engine's" in l and "taken by the program" in l and
                 "sampling stopped" in l]
        check(len(named) == 1, "a comment says the program took the signal and sampling "
              "stopped: %r" % comments.splitlines())
    print("%d failed" % failures, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

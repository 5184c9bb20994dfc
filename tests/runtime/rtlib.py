"""Shared helpers of the CPU runtime's process tests: run a program with
libkestrel.so preloaded, read and check the raw JSON it leaves, look symbols up."""
import contextlib
import json
import os as _os
import sys as _sys
_sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), ".."))
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, "build")
# KESTREL_TEST_ARCH=aarch64 (tests/arch): the aarch64 runtime and helpers of
# build/aarch64, each helper started through its qemu-aarch64 wrapper.
ARCH = os.environ.get("KESTREL_TEST_ARCH") or "x86_64"
if ARCH == "x86_64":
    LIB = os.path.join(BUILD, "lib", "libkestrel.so")
    PROGS = os.path.join(BUILD, "tests", "runtime")
else:
    LIB = os.path.join(BUILD, ARCH, "lib", "libkestrel.so")
    PROGS = os.path.join(BUILD, ARCH, "tests", "runtime", "qemu")
# Under qemu-user what the kernel counts for the process (page faults, VmSize) is the
# emulator's as much as the program's.
EMULATED = ARCH != "x86_64"
# The engine under test: the environment's, else the signal engine (auto would pick
# perf where the kernel allows it; tests/perf/rules.mk runs this suite again with perf).
ENGINE = os.environ.get("KESTREL_PROFILE_ENGINE") or "signal"


class Checker:
    """CHECK as in tests/check.h: records failures, keeps going."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def check(self, cond, what):
        self.n += 1
        if not cond:
            self.failed += 1
            print("check failed: " + what, file=sys.stderr)
        return cond

    def exit(self):
        print("%d checks, %d failed" % (self.n, self.failed), file=sys.stderr)
        sys.exit(1 if self.failed else 0)


def prog(name):
    return os.path.join(PROGS, name)


def program_file(name):
    """The program a helper runs as: under qemu the aarch64 file its wrapper starts."""
    return os.path.join(os.path.dirname(PROGS), name) if EMULATED else prog(name)


# A thread's name when the program names none: its executable's, under qemu-user the
# emulator's (the kernel's comm of the host process).
def default_thread_name(name):
    return "qemu-" + ARCH if EMULATED else name[:15]


def profiled_env(path, hz=None, extra=None):
    env = dict(os.environ)
    env["LD_PRELOAD"] = LIB
    env["KESTREL_PROFILE"] = path
    env["KESTREL_PROFILE_ENGINE"] = ENGINE
    if hz is not None:
        env["KESTREL_PROFILE_HZ"] = str(hz)
    if extra:
        env.update(extra)
    return env


def run(argv, env, timeout=300, **kw):
    return subprocess.run(argv, env=env, timeout=timeout, capture_output=True, text=True, **kw)


def tmpdir():
    return tempfile.mkdtemp(prefix="kestrel-rt-")


@contextlib.contextmanager
def full_disk(c, parent):
    """A folder on a 16 KiB tmpfs whose space a file "fill" takes (root): yields its
    path, or None where it could not be mounted (a failed check); unmounted after."""
    full = os.path.join(parent, "full")
    os.mkdir(full)
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", full],
                       capture_output=True, text=True)
    if not c.check(m.returncode == 0, "a tmpfs for the full disk: %s" % m.stderr.strip()):
        yield None
        return
    try:
        fd = os.open(os.path.join(full, "fill"), os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        yield full
    finally:
        subprocess.run(["umount", full])


def load(path):
    """A raw profile, its chunks joined (tests/rawjson.py), or any other JSON file."""
    import rawjson
    return rawjson.load(path)


# The kernel's tick rate: the coarse clock (CLOCK_MONOTONIC_COARSE, 6) moves once a tick.
TICK_HZ = round(1 / time.clock_getres(6))


def rate_of(d, c, hz):
    """The rate profile d samples at, asked for `hz` (clamped to 10..10000): the signal
    engine's per-thread CPU-time timers fire at most once per kernel tick, so it samples
    at min(hz, tick rate) where it has them (natively always; under qemu it may signal
    threads instead, at hz). Checks that the file says so."""
    timers = d.get("engine_stats", {}).get("tick_hz", 0)
    if d.get("engine") == "signal" and not EMULATED:
        c.check(timers == TICK_HZ, "the signal engine's timers: tick_hz %s, the kernel's %d"
                % (timers, TICK_HZ))
    want = min(hz, timers) if d.get("engine") == "signal" and timers else hz
    c.check(d.get("rate_hz") == want, "rate_hz %s for %d Hz asked (tick %d)"
            % (d.get("rate_hz"), hz, TICK_HZ))
    return want


def expected_engine():
    return ENGINE if ENGINE in ("perf", "signal") else None


def validate(d, c, where=""):
    """FORMATS.md §1 and the optional fields the runtime writes (docs/raw-format.md)."""
    w = where + ": " if where else ""
    for k, t in (("version", int), ("pid", int), ("exe", str), ("rate_hz", int),
                 ("platform", str), ("start_unix_ns", int), ("end_unix_ns", int),
                 ("images", list), ("threads", list), ("stacks", list), ("samples", list),
                 ("dropped", int), ("engine", str), ("requested_hz", int),
                 ("tables", dict), ("past_limits", dict), ("walks_cut_short", int)):
        c.check(isinstance(d.get(k), t), w + "field %s is %s" % (k, t.__name__))
    c.check(d.get("version") == 1, w + "version 1")
    c.check(d.get("platform") == "linux-" + ARCH, w + "platform")
    c.check(d.get("end_unix_ns", 0) >= d.get("start_unix_ns", 1), w + "end >= start")
    if expected_engine():
        c.check(d.get("engine") == expected_engine(), w + "engine %s" % d.get("engine"))
    else:
        c.check(d.get("engine") in ("signal", "perf"), w + "engine")
    for im in d.get("images", []):
        for k in ("path", "base", "slide", "text", "text_size", "arch"):
            c.check(k in im, w + "image field " + k)
    for t in d.get("threads", []):
        c.check(isinstance(t.get("fiber"), int) and isinstance(t.get("label"), str),
                w + "thread fiber/label")
    nst, nth = len(d.get("stacks", [])), len(d.get("threads", []))
    wall = d.get("end_unix_ns", 0) - d.get("start_unix_ns", 0)
    bad = 0
    for s in d.get("samples", []):
        ok = (len(s) == 5 and 0 <= s[1] < nth and 0 <= s[2] < nst and s[3] in (0, 1)
              and 0 <= s[0] <= wall + 10**9 and s[4] >= 0)
        bad += not ok
    c.check(bad == 0, w + "%d malformed sample rows" % bad)
    ends = d.get("stack_ends")
    c.check(isinstance(ends, list) and len(ends) == nst and
            all(isinstance(e, int) and 0 <= e < 32 for e in ends),
            w + "stack_ends: one walk-end code per stack")
    stops = d.get("walk_stops", {})
    whole = ("end", "top", "cfi_end", "not_walked")
    c.check(sum(v for k, v in stops.items() if k not in whole) == d.get("walks_cut_short"),
            w + "walks_cut_short %s is the cut codes of walk_stops %s" %
            (d.get("walks_cut_short"), stops))
    for k in ("stacks", "stack_words", "samples", "threads", "images"):
        v = d.get("tables", {}).get(k)
        c.check(isinstance(v, list) and len(v) == 2 and 0 <= v[0] <= v[1],
                w + "tables.%s = %r" % (k, v))


def image_of(d, addr):
    for im in d["images"]:
        if im["text"] <= addr < im["text"] + im["text_size"]:
            return im
    return None


def symbols(path):
    """{name: (start, end)} of the function symbols of an ELF file (nm)."""
    out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True,
                         text=True).stdout
    syms = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in "tT":
            a, n = int(p[0], 16), int(p[1], 16)
            syms[p[3]] = (a, a + n)
    return syms


def name_of(d, syms_by_path, addr):
    """The function of an address, for images whose symbols we loaded."""
    im = image_of(d, addr)
    if not im or im["path"] not in syms_by_path:
        return None
    off = addr - im["slide"]
    for n, (a, b) in syms_by_path[im["path"]].items():
        if a <= off < b:
            return n
    return None


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    return None

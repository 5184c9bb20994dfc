"""Shared by the unwinder's process tests: where the build is, and a check that
prints each result and keeps the failures (the test exits 1 when there are any)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from rawjson import load as load_raw  # noqa: E402  (a streamed raw file's chunks joined)
KESTREL = os.path.join(ROOT, "build", "bin", "kestrel")
B = os.path.join(ROOT, "build", "tests", "unwind")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


WHOLE = ("end", "top", "cfi_end")


def stop_names(raw):
    """The names of the walk-end codes, in code order (walk_stops lists every one)."""
    return list(raw["walk_stops"].keys())


def running_by_end(raw, threads=None):
    """On-CPU samples of the raw file by how their stack's walk ended: {name: count},
    over the threads whose index `threads` holds (all when None)."""
    names, ends = stop_names(raw), raw["stack_ends"]
    out = {}
    for row in raw["samples"]:
        if row[3] != 0 or (threads is not None and row[1] not in threads):
            continue
        name = names[ends[row[2]]]
        out[name] = out.get(name, 0) + 1
    return out


def whole_share(by_end):
    n = sum(by_end.values())
    return sum(by_end.get(k, 0) for k in WHOLE) / n if n else 0.0, n

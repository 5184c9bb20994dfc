"""Shared by the unwinder's process tests: where the build is, and a check that
prints each result and keeps the failures (the test exits 1 when there are any)."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KESTREL = os.path.join(ROOT, "build", "bin", "kestrel")
B = os.path.join(ROOT, "build", "tests", "unwind")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)

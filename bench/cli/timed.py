#!/usr/bin/env python3
"""Runs a command and prints `WALL_S MAXRSS_KIB CPU_S` (CPU = user + system of the
child, from getrusage, microsecond resolution: /usr/bin/time rounds to 10 ms, too
coarse for a symbolizer that finishes in 20 ms).

    timed.py [--stdin FILE] -- CMD [ARGS]      (the command's stdout is discarded)"""
import os
import subprocess
import sys
import time

args = sys.argv[1:]
stdin = None
if args[0] == "--stdin":
    stdin = open(args[1], "rb")
    args = args[2:]
if args[0] == "--":
    args = args[1:]
t0 = time.monotonic()
p = subprocess.Popen(args, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
wall = time.monotonic() - t0
if os.waitstatus_to_exitcode(status):
    sys.exit(f"timed.py: {args[0]} exited with {os.waitstatus_to_exitcode(status)}")
print(f"{wall:.4f} {ru.ru_maxrss} {ru.ru_utime + ru.ru_stime:.4f}")

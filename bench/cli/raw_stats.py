#!/usr/bin/env python3
"""What a raw CPU profile (FORMATS.md §1) holds, as `key=value` words on one line:
samples, stacks, running and waiting samples, threads, distinct addresses, the
deepest stack, the engine and rate, and the samples the runtime had to put in its
"other stacks" bucket (past its stack table's limit).

    raw_stats.py RAW.json"""
import json
import sys

r = json.load(open(sys.argv[1]))
samples, stacks = r["samples"], r["stacks"]
waiting = sum(1 for s in samples if s[3] == 1)
print(f"samples={len(samples)} stacks={len(stacks)} running={len(samples) - waiting} "
      f"waiting={waiting} threads={len(r['threads'])} "
      f"addresses={len({a for s in stacks for a in s})} "
      f"max_depth={max((len(s) for s in stacks), default=0)} "
      f"engine={r.get('engine', '?')} rate_hz={r.get('rate_hz', 0)} "
      f"other_stacks_samples={r.get('past_limits', {}).get('other_stacks_samples', 0)} "
      f"dropped={r.get('dropped', 0)}")

#!/usr/bin/env python3
"""Compares kestrel's frames for a list of addresses with llvm-symbolizer's, address
by address: the same inline chain of (function, file, line), innermost first.

    compare_symbols.py KESTREL_DUMP LLVM_OUTPUT

KESTREL_DUMP is `export_bench symbolize RAW DUMP`'s file; LLVM_OUTPUT is what
`llvm-symbolizer --obj=BIN` printed for the same addresses in the same order. Prints
`agree N of M addresses` and the first few differences."""
import sys


def blocks(text):
    return [b for b in text.split("\n\n")]


def ours(path):
    out = []
    for b in open(path).read().split("\n\n"):
        if not b.strip():
            continue
        frames = []
        for line in b.strip("\n").split("\n"):
            name, loc = line.split("\t")
            f, _, ln = loc.rpartition(":")
            frames.append((name, f if f != "??" else "", int(ln)))
        out.append(frames)
    return out


def llvm(path):
    out = []
    for b in open(path).read().split("\n\n"):
        if not b.strip():
            continue
        lines = b.strip("\n").split("\n")
        frames = []
        for name, loc in zip(lines[0::2], lines[1::2]):
            parts = loc.split(":")
            f, ln = parts[0], int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
            frames.append((name, f if f != "??" else "", ln))
        out.append(frames)
    return out


a, b = ours(sys.argv[1]), llvm(sys.argv[2])
if len(a) != len(b):
    sys.exit(f"compare_symbols: {len(a)} addresses from kestrel, {len(b)} from llvm-symbolizer")
diff = [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if x != y]
print(f"agree {len(a) - len(diff)} of {len(a)} addresses")
for i, x, y in diff[:5]:
    print(f"  address {i}: kestrel {x}\n              llvm    {y}")

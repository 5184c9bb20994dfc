#!/usr/bin/env python3
"""Prints the unique addresses of a raw profile that fall in one image, as that
image's file addresses, one `0x...` per line, for llvm-symbolizer and addr2line.
Every frame but the leaf is a return address and is given as address - 1, the call's
own instruction, as kestrel's symbolizer looks it up.

    addresses.py RAW.json IMAGE_PATH"""
import json
import sys

raw = json.load(open(sys.argv[1]))
image = next(im for im in raw["images"] if im["path"] == sys.argv[2])
lo, hi = image["text"], image["text"] + image["text_size"]
seen = set()
for stack in raw["stacks"]:
    for i, a in enumerate(stack):
        a = a if i == 0 else a - 1
        if lo <= a < hi:
            seen.add(a - image["slide"])
for a in sorted(seen):
    print(hex(a))

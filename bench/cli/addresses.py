#!/usr/bin/env python3
"""The unique addresses of a raw profile that fall in one image, for comparing
symbolizers on the same work.

    addresses.py RAW.json IMAGE_PATH OUT.raw.json > ADDRS.txt

Every frame but the leaf is a return address and is taken as address - 1 (the call's
own instruction, which is what kestrel's symbolizer looks up). ADDRS.txt lists them
as the image's file addresses, `0x...` one per line, for llvm-symbolizer and
addr2line; OUT.raw.json is a raw profile with the same addresses, each a one-frame
stack (a leaf, so kestrel looks it up as it is), one sample each."""
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
            seen.add(a)
addrs = sorted(seen)
for a in addrs:
    print(hex(a - image["slide"]))
out = dict(raw, images=[image], threads=raw["threads"][:1], stacks=[[a] for a in addrs],
           samples=[[i, 0, i, 0] for i in range(len(addrs))])
json.dump(out, open(sys.argv[3], "w"))

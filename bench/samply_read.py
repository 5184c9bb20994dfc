"""samply as a benchmark peer: how to run it here and how to read what it saves.

run_argv(argv, tmp): the command line that runs samply (argv: samply and its arguments).
samply 0.13 reads perf_event_paranoid and stops when it is above 1, even for root,
after any failure to open its first event (on this VM: there is no hardware cycles
counter, which it would otherwise replace by cpu-clock; its error code is read wrong,
so the ENOENT looks like EPERM). It runs in a mount namespace of its own that shows it
"1" there; the kernel's setting is unchanged for every other process.

stacks(path): the stacks of a profile saved by `samply record --save-only
--unstable-presymbolicate -o PATH.json.gz` (Firefox Profiler's processed format, frames
as addresses in their libraries), each frame named from the PATH.json.syms.json beside it,
as a list of (frames leaf first, weight). Leading underscores are dropped from the
names: samply's names of libc's functions may lose one, so compare without them."""
import gzip
import json
import os
import shutil

SAMPLY = shutil.which("samply") or os.path.expanduser("~/.cargo/bin/samply")


def run_argv(argv, tmp):
    p = os.path.join(tmp, "paranoid1")
    with open(p, "w") as f:
        f.write("1\n")
    return ["unshare", "-m", "sh", "-c", 'mount --bind "$0" /proc/sys/kernel/perf_event_paranoid '
            '&& exec "$@"', p] + argv


def stacks(path):
    prof = json.load(gzip.open(path))
    syms = json.load(open(path[:-len(".gz")] + ".syms.json"))
    names = syms["string_table"]
    tables = {d["code_id"]: sorted((e["rva"], e["rva"] + e["size"], names[e["symbol"]])
                                   for e in d["symbol_table"]) for d in syms["data"]}
    libtab = [tables.get(lib.get("codeId"), []) for lib in prof["libs"]]

    def name(lib, addr):
        t = libtab[lib] if lib is not None and 0 <= lib < len(libtab) else []
        lo, hi = 0, len(t)
        while lo < hi:
            mid = (lo + hi) // 2
            if t[mid][0] <= addr:
                lo = mid + 1
            else:
                hi = mid
        return t[lo - 1][2].lstrip("_") if lo and addr < t[lo - 1][1] else ""

    out = []
    for th in prof["threads"]:
        ft, fu, rt, st, sa = (th["frameTable"], th["funcTable"], th["resourceTable"],
                              th["stackTable"], th["samples"])
        memo = {}
        for i, s in enumerate(sa["stack"]):
            if s is None:
                continue
            if s not in memo:
                fr, k = [], s
                while k is not None:
                    f = ft["func"][st["frame"][k]]
                    res = fu["resource"][f]
                    lib = rt["lib"][res] if res is not None and res >= 0 else None
                    fr.append(name(lib, ft["address"][st["frame"][k]]))
                    k = st["prefix"][k]
                memo[s] = fr
            out.append((memo[s], sa["weight"][i] if sa.get("weight") else 1))
    return out

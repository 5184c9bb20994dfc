#!/usr/bin/env python3
"""The CFI decoder against readelf: for libc, the dynamic loader, the vdso's file
where one is installed, and test programs, every row that `readelf
--debug-dump=frames-interp` prints gives the same CFA rule, return-address rule and
rbp rule in kestrel's table at that address, and each FDE's end is either the next
FDE's start or an address kestrel's table says has no CFI. Rows kestrel does not
evaluate (a CFA in another register, an expression it does not know) must be rows
whose rule readelf also shows as something other than rsp/rbp+N or c-N."""
import bisect
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DUMP = os.path.join(ROOT, "build", "tests", "unwind", "cfi_dump")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL", what)


def vdso_file():
    """The vdso as this process has it mapped (its CFI exists only in memory)."""
    for line in open("/proc/self/maps"):
        if line.rstrip().endswith("[vdso]"):
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            with open("/proc/self/mem", "rb") as f:
                f.seek(lo)
                data = f.read(hi - lo)
            path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "kestrel-vdso-%d.so" % os.getpid())
            with open(path, "wb") as out:
                out.write(data)
            return path
    return None


def ours(name, *libs):
    p = subprocess.run([DUMP, name, *libs], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "cfi_dump %s: exit %d %s" % (name, p.returncode, p.stderr))
    path, rows = None, []
    for line in p.stdout.splitlines():
        if line.startswith("# ") and " slide=" in line:
            path = line[2:].split(" slide=")[0]
        elif not line.startswith("#"):
            loc, cfa, ra, fp = line.split()
            rows.append((int(loc, 16), cfa, ra, fp))
    return path, rows


def theirs(path):
    # readelf exits 1 on warnings about other sections; its frames are what count
    p = subprocess.run(["readelf", "-wF", path], capture_output=True, text=True, timeout=120)
    fdes, cur, cols = [], None, []
    for line in p.stdout.splitlines():
        if " CIE" in line or "ZERO terminator" in line:
            cur = None
            continue
        m = re.search(r"FDE cie=\w+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", line)
        if m:
            cur = {"lo": int(m.group(1), 16), "hi": int(m.group(2), 16), "rows": []}
            fdes.append(cur)
            continue
        if cur is None:
            continue
        if line.strip().startswith("LOC"):
            cols = line.split()
            continue
        parts = []
        for tok in line.split():  # "r10 (r10)": a rule naming another register
            if parts and re.fullmatch(r"\(\w+\)", tok) and re.fullmatch(r"r\d+", parts[-1]):
                parts[-1] += " " + tok
            else:
                parts.append(tok)
        if len(parts) >= 2 and re.fullmatch(r"[0-9a-f]{8,16}", parts[0]) and cols:
            # readelf pads each column to a width; cells may be blank only at the end
            vals = dict(zip(cols[1:], parts[1:]))
            cur["rows"].append((int(parts[0], 16), vals))
    return fdes


def simple(cfa, ra, fp):
    return (re.fullmatch(r"rs?[bp]p\+\d+", cfa or "") and ra in ("c-8", "u")
            and (fp in (None, "u", "s") or re.fullmatch(r"c-\d+", fp or "")))


def compare(name, *libs):
    path, rows = ours(name, *libs)
    if not path:
        return
    if path == "exe":
        path = DUMP
    if path == "linux-vdso.so.1":
        path = vdso_file()
    locs = [r[0] for r in rows]

    def at(a):
        i = bisect.bisect_right(locs, a) - 1
        return rows[i] if i >= 0 else (a, "none", "", "")

    fdes = theirs(path)
    check(len(fdes) > 0, "%s: readelf shows FDEs" % path)
    starts = {f["lo"] for f in fdes if f["hi"] > f["lo"]}
    n = bad = unsup = 0
    for f in fdes:
        if f["hi"] <= f["lo"]:
            continue
        for loc, v in f["rows"]:
            if loc >= f["hi"]:
                continue
            n += 1
            _, cfa, ra, fp = at(loc)
            tcfa, tra, tfp = v.get("CFA"), v.get("ra"), v.get("rbp")
            if cfa.startswith("?"):
                unsup += 1
                ok = not simple(tcfa, tra, tfp) or cfa == "?%s" % tcfa
                check(ok, "%s %x: kestrel does not evaluate a rule readelf shows as %s %s %s"
                      % (path, loc, tcfa, tra, tfp))
                continue
            ok = (cfa == "*" or cfa == tcfa) and ra == tra
            if fp in ("s",):
                ok = ok and tfp in (None, "u", "s")
            else:
                ok = ok and fp == tfp
            if not ok:
                bad += 1
                if bad <= 10:
                    check(False, "%s %x: kestrel %s %s %s, readelf %s %s %s"
                          % (path, loc, cfa, ra, fp, tcfa, tra, tfp))
        if f["hi"] not in starts:
            check(at(f["hi"])[1] == "none", "%s %x: FDE end, kestrel says %s" %
                  (path, f["hi"], at(f["hi"])[1]))
    check(bad == 0, "%s: %d of %d rows differ" % (path, bad, n))
    print("%s: %d readelf rows, %d FDEs, all alike (%d not evaluated, as readelf's rules say)"
          % (path, n, len(fdes), unsup) if bad == 0 else "%s: %d rows differ" % (path, bad))


compare("libc.so")
compare("ld-linux")
compare("libm.so", "libm.so.6")
compare("libstdc++", "libstdc++.so.6")
compare("exe")
compare("linux-vdso")
for f in os.listdir(os.environ.get("TMPDIR", "/tmp")):
    if f == "kestrel-vdso-%d.so" % os.getpid():
        os.unlink(os.path.join(os.environ.get("TMPDIR", "/tmp"), f))
if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all readelf rows matched")

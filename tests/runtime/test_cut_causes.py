#!/usr/bin/env python3
"""Every cut named by its true cause: recursion 400 deep (prog_deeprec, with frame
pointers, and prog_deeprec_nofp, without) is cut by the walk's depth limit. The report
names that cause for (nearly) all samples, and gives no frame-pointer advice: neither
"rebuild with -fno-omit-frame-pointer" nor "walks end in code that sets up no frame",
since frame pointers would not make those stacks whole. The raw file's walk_stops
count depth_limit for the samples."""
import os
import re
import subprocess

from rtlib import BUILD, ENGINE, Checker, prog, tmpdir

c = Checker()
d_ = tmpdir()
kestrel = os.path.join(BUILD, "bin", "kestrel")
for name in ("prog_deeprec", "prog_deeprec_nofp"):
    stem = os.path.join(d_, name)
    rep = os.path.join(d_, name + ".report")
    env = dict(os.environ, KESTREL_PROFILE_ENGINE=ENGINE)
    p = subprocess.run([kestrel, "record", "-o", stem, "--report=" + rep, "--", prog(name),
                        "400", "400"], env=env, timeout=300, capture_output=True, text=True)
    c.check(p.returncode == 0, "%s: exit %d: %s" % (name, p.returncode, p.stderr))
    text = open(rep).read() if os.path.exists(rep) else ""
    cut = [l for l in text.splitlines() if "of the cut walks" in l]
    m = re.search(r"([0-9.]+)% of the cut walks: deeper than the 128-frame depth limit",
                  " ".join(cut))
    c.check(m and float(m.group(1)) >= 95,
            "%s: the report names the depth limit, for >= 95%% of the cut walks: %s" %
            (name, cut))
    c.check("-fno-omit-frame-pointer" not in text and "sets up no frame" not in text,
            "%s: no frame-pointer advice: %s" %
            (name, [l for l in text.splitlines() if "frame pointer" in l]))
c.exit()

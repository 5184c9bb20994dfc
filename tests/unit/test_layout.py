#!/usr/bin/env python3
"""The source tree's dependencies, drawn from its includes (a call to another file needs
its header: the build is -Werror), keep the shape docs/DESIGN.md gives them: no circle
of files anywhere under src/ (a file and its header count as one), readers never
include a writer, the analysis library never includes the ground truth, the runtime and
src/common never include the analysis side, and every folder under src/ opens with a
README.md."""
import collections
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SRC = os.path.join(ROOT, "src")
fails = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)


files = [os.path.relpath(os.path.join(d, f), ROOT) for d, _, fs in os.walk(SRC) for f in fs
         if f.endswith((".c", ".h"))]
includes = {}
for p in files:
    text = open(os.path.join(ROOT, p), encoding="utf-8").read()
    includes[p] = [os.path.join("src", m) for m in re.findall(r'#include "([^"]+)"', text)
                   if os.path.exists(os.path.join(SRC, m))]
check(len(files) > 100 and sum(map(len, includes.values())) > 200,
      "%d files, %d includes read" % (len(files), sum(map(len, includes.values()))))

mod = lambda p: os.path.splitext(p)[0]
graph = collections.defaultdict(set)
for p, incs in includes.items():
    for i in incs:
        if mod(i) != mod(p):
            graph[mod(p)].add(mod(i))

# Tarjan's strongly connected components, iteratively.
index, low, on, stack, sccs, n = {}, {}, set(), [], [], 0
for root in sorted(graph):
    if root in index:
        continue
    work = [(root, iter(sorted(graph[root])))]
    index[root] = low[root] = n
    n += 1
    stack.append(root)
    on.add(root)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = n
                n += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(graph[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))
check(not sccs, "no circle of files under src/: %s" % sccs)


def edges(frm, to):
    return ["%s -> %s" % (p, i) for p, incs in includes.items() if p.startswith(frm)
            for i in incs if i.startswith(to)]


check(not edges("src/analysis/readers/", "src/analysis/writers/"),
      "readers include no writer: %s" % edges("src/analysis/readers/", "src/analysis/writers/"))
check(not edges("src/analysis/", "src/truth/"),
      "the analysis library includes nothing of the truth: %s" % edges("src/analysis/", "src/truth/"))
for side in ("src/runtime/", "src/common/"):
    bad = edges(side, "src/analysis/") + edges(side, "src/cli/") + edges(side, "src/truth/")
    check(not bad, "%s includes nothing of the analysis side: %s" % (side, bad))
folders = sorted(os.path.relpath(d, ROOT) for d, _, fs in os.walk(SRC)
                 if any(f.endswith((".c", ".h")) for f in fs))
missing = [d for d in folders if not os.path.exists(os.path.join(ROOT, d, "README.md"))
           and not os.path.exists(os.path.join(ROOT, os.path.dirname(d), "README.md"))]
check(not missing, "every folder of sources has a README.md (or its parent's): %s" % missing)
print("%d checks failed" % len(fails) if fails else "all passed")
sys.exit(1 if fails else 0)

#!/usr/bin/env bash
# The packaged extension: its manifest names the four commands, the settings and the
# title-bar button of C and C++ editors, it carries the compiled extension and host
# script, and its viewer files are web/'s, byte for byte (one viewer, no copy kept by
# hand); sources and tests stay out.
set -u
cd "$(dirname "$0")/../.."
python3 - build/editors/kestrel-profiler.vsix <<'PY'
import json, os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = set(z.namelist())
fail = 0
def check(what, ok):
    global fail
    if not ok:
        print("FAIL:", what); fail = 1
m = json.loads(z.read("extension/package.json"))
cmds = {c["command"]: c["title"] for c in m["contributes"]["commands"]}
check("the four commands", cmds == {"kestrel.profileCurrentFile": "Profile Current File", "kestrel.openProfile": "Open Profile…",
                                    "kestrel.recordCommand": "Record Command…", "kestrel.clearHeat": "Clear Heat"})
title = [x for x in m["contributes"]["menus"]["editor/title"] if x["command"] == "kestrel.profileCurrentFile"]
check("the flame button of C and C++ editors", len(title) == 1 and title[0]["when"] == "editorLangId == c || editorLangId == cpp")
props = m["contributes"]["configuration"]["properties"]
check("the settings", sorted(props) == ["kestrel.compilerFlags", "kestrel.engine", "kestrel.heap", "kestrel.path", "kestrel.rate", "kestrel.unwind"])
check("main is packaged", "extension/" + m["main"].lstrip("./") in names)
check("host script", "extension/media/host.js" in names)
web = sorted(f for f in os.listdir("web") if f == "viewer.html" or f.endswith((".js", ".css")))
check("web files present", len(web) >= 9)
for f in web:
    n = "extension/media/web/" + f
    check(n + " is web/" + f, n in names and z.read(n) == open("web/" + f, "rb").read())
check("no sources, tests or node_modules", not any(n.startswith(("extension/src/", "extension/test/", "extension/node_modules/")) for n in names))
print(f"vsix: {len(names)} files, {len(web)} viewer files identical to web/")
sys.exit(fail)
PY

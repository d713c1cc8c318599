#!/usr/bin/env python3
"""Runs the gaps corpus (test/Difftest/gaps/*.ln, each a lit test whose RUN
lines build, run and compare with the expected values or the interpreter)
with its compiled runs built for another target: each `linnet run %s` and
`linnet build %s ... --target cpu` gets FLAGS instead of the CPU target.

  run-gaps.py LINNET LINNET_SRC TMPDIR FLAGS...

Prints one line per program (`NAME: ok` or `NAME: FAILED: why`) and a
summary; exit 1 when one failed.
"""
import glob
import os
import re
import subprocess
import sys

linnet, src, tmp = sys.argv[1:4]
flags = " ".join(sys.argv[4:])
failed = xfail = 0
files = sorted(glob.glob(os.path.join(src, "test", "Difftest", "gaps", "*.ln")))
for path in files:
    name = os.path.basename(path)[:-3]
    t = os.path.join(tmp, name)
    text = open(path).read()
    # A gap still open (lit's `XFAIL:`) fails on every target: not this one's.
    if re.search(r"^// XFAIL:", text, re.M):
        print(f"{name}: expected to fail (XFAIL), skipped")
        xfail += 1
        continue
    lines = [m.group(1) for m in re.finditer(r"^// RUN: (.*)$", text, re.M)]
    why = None
    for line in lines:
        cmd = line.replace("%python", sys.executable).replace("%linnet_src", src)
        cmd = cmd.replace("%s", path).replace("%t", t)
        # The compiled side on the target under test; the interpreter stays.
        if "--interpret" not in cmd:
            cmd = re.sub(r"\blinnet run (\S+\.ln)\b", r"linnet run \1 " + flags, cmd)
            cmd = re.sub(r"--target cpu\b", flags, cmd)
        cmd = re.sub(r"(^|[ ;|&])linnet ", r"\1" + linnet + " ", cmd)
        p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True)
        if p.returncode != 0:
            out = (p.stdout + p.stderr).strip().splitlines()
            why = "%s (exit %d)" % (out[-1] if out else "no output", p.returncode)
            break
    if why:
        failed += 1
        print("%s: FAILED: %s" % (name, why))
    else:
        print("%s: ok" % name)
print("gaps: %d programs, %d agree, %d failed, %d expected to fail"
      % (len(files), len(files) - failed - xfail, failed, xfail))
sys.exit(1 if failed else 0)

"""Fails, saying so, when the tools under test were built from another
commit than the checkout's: cpack and the wheel target would then rebuild
and relink build/bin/linnet while the rest of the suite runs it in
parallel (those tests then fail with "Permission denied").

usage: built-commit.py LINNET SOURCE_DIR
"""
import subprocess
import sys

linnet, src = sys.argv[1], sys.argv[2]
try:
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=src, capture_output=True, text=True,
                          check=True).stdout.strip()
except (OSError, subprocess.CalledProcessError):
    print("built-commit: no git checkout; not checked")
    sys.exit(0)
version = subprocess.run([linnet, "--version"], capture_output=True, text=True, check=True).stdout
if f"(commit {head})" not in version:
    print(f"built-commit: {linnet} reports '{version.strip()}', the checkout is at {head}: "
          "rebuild before running the suite (packaging would relink the tools under the other tests)")
    sys.exit(1)
print("built-commit: current")

import os
import sys
import tempfile

# Tests run against the staged package: PYTHONPATH=<build>/python (set by
# scripts/test); fall back to build/python next to the sources.
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if not any(os.path.isdir(os.path.join(p, "linnet")) and
           os.path.exists(os.path.join(p, "linnet", "_config.py")) for p in sys.path if p):
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))

# A private artifact cache per test session unless one is given (a fixed
# name under /tmp could be another user's, and the cache refuses those).
if not os.environ.get("LINNET_CACHE_DIR"):
    os.environ["LINNET_CACHE_DIR"] = tempfile.mkdtemp(prefix="linnet-pytest-cache-")

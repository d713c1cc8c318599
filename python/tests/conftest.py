import os
import sys
import tempfile

import pytest

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


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    """examples/mlp.ln built (In 3, Hidden 5, Out 2) with random weights:
    (artifact, weights file, the weights as arrays)."""
    import numpy as np
    import linnet
    from linnet import _compiler
    art = _compiler.build_file(os.path.join(ROOT, "examples", "mlp.ln"), root="MLP",
                               dims={"In": 3, "Hidden": 5, "Out": 2})
    w = str(tmp_path_factory.mktemp("w") / "w.safetensors")
    rng = np.random.default_rng(0)
    weights = {"fc1.weight": rng.standard_normal((5, 3)).astype(np.float32),
               "fc2.weight": rng.standard_normal((2, 5)).astype(np.float32)}
    linnet._core.write_safetensors(w, weights)
    return art, w, weights

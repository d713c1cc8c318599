#!/usr/bin/python3
"""expect.py GOT.npy VALUES: compares a result with the expected values of a
test/Difftest/gaps program (a JSON list; floats to difftest's tolerance)."""
import json
import sys

import numpy as np

got = np.load(sys.argv[1])
exp = np.array(json.loads(sys.argv[2]), dtype=got.dtype)
if got.dtype.kind == "f":
    ok = got.shape == exp.shape and np.allclose(got, exp, rtol=1e-4, atol=1e-4)
else:
    ok = got.shape == exp.shape and bool((got == exp).all())
print("agree" if ok else "disagree: expected %s, found %s" % (exp.tolist(), got.tolist()))
sys.exit(0 if ok else 1)

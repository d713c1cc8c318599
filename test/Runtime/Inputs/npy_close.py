#!/usr/bin/python3
"""npy_close.py GOT.npy EXPECTED.npy: same shape and dtype, values within
1e-5 (relative and absolute); prints what differs otherwise."""
import sys

import numpy as np

got, exp = np.load(sys.argv[1]), np.load(sys.argv[2])
ok = got.shape == exp.shape and got.dtype == exp.dtype and np.allclose(got, exp, rtol=1e-5, atol=1e-5)
print("close" if ok else f"differ: expected {exp.dtype}{list(exp.shape)} {exp.tolist()}, "
      f"found {got.dtype}{list(got.shape)} {got.tolist()}")
sys.exit(0 if ok else 1)

"""run_paged.py LIB: calls @paged (test/Dialect/Gf/Inputs/paged.mlir) of a
compiled library through its C interface on a pool of pages shared by
three sequences of different lengths (one empty, one past its table's
capacity, clamped), against numpy. Prints the result and 'agree'."""
import ctypes
import sys

import numpy as np


def descriptor(a):
    ct = np.ctypeslib.as_ctypes_type(a.dtype)
    rank = a.ndim

    class MemRef(ctypes.Structure):
        _fields_ = [("allocated", ctypes.POINTER(ct)), ("aligned", ctypes.POINTER(ct)),
                    ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * rank),
                    ("strides", ctypes.c_int64 * rank)]

    p = a.ctypes.data_as(ctypes.POINTER(ct))
    d = MemRef(p, p, 0, tuple(a.shape), tuple(s // a.itemsize for s in a.strides))
    d._keep = a
    return d


P, B = 4, 3
table = np.array([[5, 0, 2], [1, 3, 4], [6, 6, 6], [2, 5, 1]], np.int32)  # pages of each sequence
lengths = np.array([9, 0, 20, 6], np.int64)  # 20 > B * P: clamped to 12
pool = 7 * P
x = np.arange(pool, dtype=np.float32) * 0.5 - 3.0
w = 1.0 + np.arange(pool, dtype=np.float32)
out = np.full(4, -1.0, np.float32)
lib = ctypes.CDLL(sys.argv[1])
args = [descriptor(a) for a in (table, lengths, x, w, out)]
lib._mlir_ciface_paged(*(ctypes.byref(d) for d in args))
want = np.zeros(4, np.float32)
for d in range(4):
    for j in range(min(max(lengths[d], 0), B * P)):
        s = table[d, j // P] * P + j % P
        want[d] += x[s] * w[s]
print(out.tolist())
print("agree" if np.allclose(out, want, rtol=1e-6) else "DIFFER: want %s" % want.tolist())

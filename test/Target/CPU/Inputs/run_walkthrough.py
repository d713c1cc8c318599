"""Calls _mlir_ciface_distributed of a compiled library on the seed's CSR
walkthrough through ctypes (docs/cpu-abi.md: one memref descriptor per
argument, the output buffer last)."""
import ctypes
import sys


def descriptor(ctype, values):
    n = len(values)

    class MemRef1D(ctypes.Structure):
        _fields_ = [("allocated", ctypes.POINTER(ctype)),
                    ("aligned", ctypes.POINTER(ctype)),
                    ("offset", ctypes.c_int64),
                    ("sizes", ctypes.c_int64 * 1),
                    ("strides", ctypes.c_int64 * 1)]

    data = (ctype * n)(*values)
    d = MemRef1D(ctypes.cast(data, ctypes.POINTER(ctype)),
                 ctypes.cast(data, ctypes.POINTER(ctype)), 0, (n,), (1,))
    d._keep = data
    return d, data


lib = ctypes.CDLL(sys.argv[1])
rp, _ = descriptor(ctypes.c_int64, [0, 2, 3, 3])
ci, _ = descriptor(ctypes.c_int64, [0, 1, 1])
x, _ = descriptor(ctypes.c_float, [2.0, 3.0])
w, _ = descriptor(ctypes.c_float, [4.0, 5.0, 2.0])
out, out_data = descriptor(ctypes.c_float, [-1.0, -1.0, -1.0])
lib._mlir_ciface_distributed(*(ctypes.byref(d) for d in (rp, ci, x, w, out)))
print(list(out_data))

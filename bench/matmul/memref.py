"""Calling linnet CPU libraries from Python: MLIR ranked memref descriptors
(docs/cpu-abi.md) built over numpy arrays, passed through ctypes."""
import ctypes

import numpy as np


def descriptor(array):
    """A C struct {allocated, aligned, offset, sizes[R], strides[R]} over array."""
    rank = array.ndim
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    struct = type("MemRef%d" % rank, (ctypes.Structure,), {"_fields_": fields})
    d = struct()
    d.allocated = d.aligned = array.ctypes.data
    d.offset = 0
    for i in range(rank):
        d.sizes[i] = array.shape[i]
        d.strides[i] = array.strides[i] // array.itemsize
    return d


class Kernel:
    """`_mlir_ciface_<name>` of a compiled library, called with numpy arrays."""

    def __init__(self, library, name):
        self.lib = ctypes.CDLL(library)
        self.fn = getattr(self.lib, "_mlir_ciface_" + name)
        self.fn.restype = None

    def bind(self, *arrays):
        """Returns a zero-argument callable running the kernel on arrays."""
        ds = [descriptor(a) for a in arrays]
        ptrs = [ctypes.byref(d) for d in ds]
        fn = self.fn

        def call():
            fn(*ptrs)
        call.keep = (ds, arrays)
        return call

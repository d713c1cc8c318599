"""Inputs from Python go through the runtime's one entry check
(rt::checkEntryInputs) and are read in their own byte order."""
import os
import struct

import numpy as np
import pytest

import linnet
from linnet import _compiler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROWSUM = os.path.join(ROOT, "test", "Runtime", "Inputs", "rowsum.ln")


def test_big_endian_inputs_are_converted(mlp):
    art, w, weights = mlp
    m = linnet.Model(art, w)
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    (want,) = m.call("forward", [x])
    xb = x.astype(">f4")
    assert not xb.dtype.isnative
    (got,) = m.call("forward", [xb])
    np.testing.assert_array_equal(got, want)


def test_write_safetensors_big_endian(tmp_path):
    path = str(tmp_path / "be.safetensors")
    a = np.array([1.5, -2.0, 3.25], dtype=">f4")
    b = np.array([[1, 2], [3, 300]], dtype=">i8")
    linnet._core.write_safetensors(path, {"a": a, "b": b})
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    import json
    hdr = json.loads(data[8:8 + n])
    body = data[8 + n:]
    for name, arr, code in (("a", a, "<f4"), ("b", b, "<i8")):
        lo, hi = hdr[name]["data_offsets"]
        np.testing.assert_array_equal(np.frombuffer(body[lo:hi], dtype=code).reshape(arr.shape), arr)


def test_huge_declared_shape_is_refused_before_allocating():
    # (2^40, 0) holds no bytes; its result would be 4 TiB.
    m = linnet.Model(_compiler.build_file(ROWSUM))
    x = np.empty((2**40, 0), dtype=np.float32)
    with pytest.raises(ValueError, match=r"result 0 of 'forward': f32\[1099511627776\] is 4398046511104 bytes, "
                                         r"over the \d+ byte limit of one call \(set LINNET_MAX_CALL_BYTES"):
        m.call("forward", [x])
    (y,) = m.call("forward", [np.ones((3, 2), dtype=np.float32)])
    np.testing.assert_array_equal(y, [2, 2, 2])

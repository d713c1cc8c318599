#!/usr/bin/env python3
"""Writes good and damaged .safetensors and .npy files for the runtime tests.

Usage: make_tensor_files.py OUTDIR. Standard library only.
"""
import json
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def st(name, header, data=b"", raw_len=None, raw_header=None):
    h = raw_header if raw_header is not None else json.dumps(header).encode()
    n = len(h) if raw_len is None else raw_len
    with open(os.path.join(out, name), "wb") as f:
        f.write(struct.pack("<Q", n) + h + data)


f32 = lambda *v: struct.pack("<%df" % len(v), *v)

st("good.safetensors", {
    "__metadata__": {"format": "pt"},
    "b": {"dtype": "F32", "shape": [2], "data_offsets": [24, 32]},
    "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
}, f32(1, 2, 3, 4, 5, 6) + f32(7, 8))
st("header-past-end.safetensors", {}, raw_len=1 << 40, raw_header=b"{}")
st("not-json.safetensors", None, raw_header=b"{this is not json")
st("unknown-dtype.safetensors", {"w": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}}, b"\0\0")
st("offsets-out-of-range.safetensors", {"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, f32(1, 2))
st("overlap.safetensors", {
    "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
    "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
}, f32(1, 2, 3))
st("shape-mismatch.safetensors", {"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, f32(1, 2))
st("negative-shape.safetensors", {"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}})
st("huge-shape.safetensors", {"w": {"dtype": "F32", "shape": [1 << 40, 1 << 40], "data_offsets": [0, 0]}})
with open(os.path.join(out, "short.safetensors"), "wb") as f:
    f.write(b"\x01\x02")


def npy(name, descr, shape, data, fortran=False, magic=b"\x93NUMPY", version=1):
    hdr = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False",
        "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")")
    hdr = hdr.encode()
    hdr += b" " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + b"\n"
    with open(os.path.join(out, name), "wb") as f:
        f.write(magic + bytes([version, 0]) + struct.pack("<H", len(hdr)) + hdr + data)


npy("good.npy", "<f4", [2, 2], f32(1, 2, 3, 4))
npy("truncated.npy", "<f4", [1000, 1000], f32(1, 2, 3))
npy("bad-magic.npy", "<f4", [1], f32(1), magic=b"\x93NUMPX")
npy("fortran.npy", "<f4", [2, 2], f32(1, 2, 3, 4), fortran=True)
npy("big-endian.npy", ">f4", [1], f32(1))
npy("version9.npy", "<f4", [1], f32(1), version=9)

# Hostile cases (docs/security.md): a repeated tensor name, bytes no tensor
# owns, a repeated or unknown .npy header key, deep JSON.
st("duplicate-name.safetensors", None, f32(1, 2),
   raw_header=b'{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
              b'"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}')
st("trailing.safetensors", {"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, f32(1, 2))
st("gap.safetensors", {"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, f32(1, 2))
st("deep.safetensors", None, raw_header=b'{"__metadata__": ' + b"[" * 100000 + b"]" * 100000 + b"}")


def npy_raw(name, hdr, data):
    hdr = hdr.encode()
    hdr += b" " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + b"\n"
    with open(os.path.join(out, name), "wb") as f:
        f.write(b"\x93NUMPY" + bytes([1, 0]) + struct.pack("<H", len(hdr)) + hdr + data)


npy_raw("duplicate-key.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'shape': (2,), }", f32(1, 2))
npy_raw("extra-key.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1, }", f32(1))
npy_raw("double-quotes.npy", '{"descr": "<f4", "fortran_order": False, "shape": (2,)}', f32(1, 2))
npy_raw("garbage-shape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, x), }", f32(1))

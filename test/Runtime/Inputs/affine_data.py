#!/usr/bin/env python3
"""Weights and inputs for the affine runtime test (standard library only)."""
import json, os, struct, sys

out = sys.argv[1]


def st(name, tensors):
    header, data = {}, b""
    for k, (dt, shape, raw) in sorted(tensors.items()):
        header[k] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    with open(os.path.join(out, name), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def npy(name, descr, shape, raw):
    hdr = ("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))).encode()
    hdr += b" " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + b"\n"
    with open(os.path.join(out, name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr + raw)


f = lambda *v: struct.pack("<%df" % len(v), *v)
W = ("F32", [2, 3], f(1, 0, 0, 0, 1, 2))
S = ("F32", [1], f(0.5))
st("good.safetensors", {"lin.weight": W, "scale": S})
st("hf.safetensors", {"model.lin.w": W, "model.scale": S})
st("bad.safetensors", {"lin.weight": ("F32", [3, 2], f(1, 0, 0, 0, 1, 2)), "scale": ("F64", [1], struct.pack("<d", 0.5)),
                       "lin.bias": ("F32", [2], f(0, 0)), "stray": ("F32", [1], f(0)),
                       "pooler.weight": ("F32", [2, 2], f(1, 2, 3, 4))})
npy("x.npy", "<f4", [2, 3], f(1, 2, 3, 4, 5, 6))
npy("x_bad.npy", "<f4", [2, 4], f(*range(8)))
npy("x_int.npy", "<i8", [2, 3], struct.pack("<6q", *range(6)))
with open(os.path.join(out, "binding.json"), "w") as fh:
    json.dump({"version": 1, "tensors": {"lin.weight": "model.lin.w", "scale": "model.scale"}}, fh)

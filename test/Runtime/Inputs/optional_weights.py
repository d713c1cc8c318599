#!/usr/bin/python3
"""optional_weights.py DIR: weights for examples/mlp.ln (In=4, Hidden=8,
Out=3) with both biases, with fc1's only, and with none; an input x.npy;
and the numpy result each must give (DIR/expect-{both,fc1,none}.npy)."""
import json
import struct
import sys

import numpy as np


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        b = np.ascontiguousarray(a, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


d = sys.argv[1]
rng = np.random.default_rng(7)
w1 = rng.standard_normal((8, 4)).astype(np.float32)
b1 = rng.standard_normal(8).astype(np.float32)
w2 = rng.standard_normal((3, 8)).astype(np.float32)
b2 = rng.standard_normal(3).astype(np.float32)
x = rng.standard_normal((2, 4)).astype(np.float32)
np.save(f"{d}/x.npy", x)


def mlp(bias1, bias2):
    h = x @ w1.T + (bias1 if bias1 is not None else 0)
    return np.maximum(h, 0) @ w2.T + (bias2 if bias2 is not None else 0)


for name, t, e in [
    ("both", {"fc1.weight": w1, "fc1.bias": b1, "fc2.weight": w2, "fc2.bias": b2}, mlp(b1, b2)),
    ("fc1", {"fc1.weight": w1, "fc1.bias": b1, "fc2.weight": w2}, mlp(b1, None)),
    ("none", {"fc1.weight": w1, "fc2.weight": w2}, mlp(None, None)),
]:
    write_safetensors(f"{d}/{name}.safetensors", t)
    np.save(f"{d}/expect-{name}.npy", e.astype(np.float32))

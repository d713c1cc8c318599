"""Helpers for the interpreter tests: .npy/.safetensors files, running
`linnet run` (compiled or --interpret), comparing results."""
import json
import struct
import subprocess
import sys

import numpy as np

ST_DTYPES = {np.dtype("float32"): "F32", np.dtype("float64"): "F64", np.dtype("int64"): "I64",
             np.dtype("int32"): "I32", np.dtype("int8"): "I8", np.dtype("uint8"): "U8",
             np.dtype("bool"): "BOOL", np.dtype("float16"): "F16"}


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        b = a.tobytes()
        header[name] = {"dtype": ST_DTYPES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def read_safetensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    inv = {v: k for k, v in ST_DTYPES.items()}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        s, e = t["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + s:8 + n + e], dtype=inv[t["dtype"]]).reshape(t["shape"])
    return out


def run(linnet, args, expect_ok=True):
    p = subprocess.run([linnet] + args, capture_output=True, text=True)
    if expect_ok and p.returncode != 0:
        sys.exit("linnet %s failed (%d):\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p


def compare(name, got, want, rtol=1e-4, atol=1e-6):
    """Exact for integers and bools, rtol/atol for floats; prints one line."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        sys.exit("%s: shape %s, expected %s" % (name, got.shape, want.shape))
    if got.dtype.kind in "iub":
        if not np.array_equal(got, want):
            sys.exit("%s: integers differ:\n got %s\nwant %s" % (name, got.tolist(), want.tolist()))
        print("%s: %s %s exact" % (name, got.dtype, list(got.shape)))
        return
    if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        sys.exit("%s: differs beyond rtol %g atol %g:\n got %s\nwant %s" % (name, rtol, atol, got, want))
    # Reported relative to the result's scale; the check is elementwise.
    fin = np.isfinite(want)
    err = np.max(np.abs(got - want)[fin]) / max(np.max(np.abs(want[fin])), atol) if fin.any() else 0.0
    print("%s: %s %s agree (max error %.1e of max |value|; rtol %g, atol %g)"
          % (name, got.dtype, list(got.shape), err, rtol, atol))

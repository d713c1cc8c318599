#!/usr/bin/env python3
"""Tiny .npy writer/reader for tests (standard library only).

  npy.py write FILE DTYPE SHAPE VALUES   e.g. npy.py write x.npy f4 2 2.0,3.0
  npy.py read FILE                       prints the values, comma-separated
"""
import ast
import struct
import sys

CODES = {"f4": "f", "f8": "d", "i8": "q", "i4": "i"}


def write(path, dtype, shape, values):
    shape = [int(s) for s in shape.split("x")] if shape else []
    vals = [float(v) if dtype.startswith("f") else int(v) for v in values.split(",") if v]
    hdr = "{'descr': '<%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    hdr = hdr.encode()
    hdr += b" " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr)
        f.write(struct.pack("<%d%s" % (len(vals), CODES[dtype]), *vals))


def read(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<H", data[8:10])
    hdr = ast.literal_eval(data[10:10 + n].decode())
    code = CODES[hdr["descr"][1:]]
    count = 1
    for s in hdr["shape"]:
        count *= s
    vals = struct.unpack("<%d%s" % (count, code), data[10 + n:])
    print(",".join("%g" % v for v in vals))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(*sys.argv[2:6])
    else:
        read(sys.argv[2])

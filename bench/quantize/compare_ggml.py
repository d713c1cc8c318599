"""Compares each quantized tensor of WORK/<type>.gguf with ggml_quantize_chunk's
bytes for the same f32 rows of the input safetensors; prints one line a type."""
import json
import os
import struct
import subprocess
import sys

import numpy as np

GGML = {"q8_0": 8, "q4_0": 2, "q4_K": 12, "q5_K": 13, "q6_K": 14}
SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def safetensors(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h, d = json.loads(b[8:8 + n]), b[8 + n:]
    return {k: (v["shape"], v["dtype"], d[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in h.items() if k != "__metadata__"}


def gguf(path):
    b, o = open(path, "rb").read(), 4
    _, nt, nk = struct.unpack_from("<IQQ", b, o)
    o += 20

    def string():
        nonlocal o
        n = struct.unpack_from("<Q", b, o)[0]
        o += 8 + n
        return b[o - n:o].decode()

    def value(t):
        nonlocal o
        if t == 8:
            string()
        elif t == 9:
            at, n = struct.unpack_from("<IQ", b, o)
            o += 12
            for _ in range(n):
                value(at)
        else:
            o += SIZES[t]
    align = 32
    for _ in range(nk):
        key = string()
        t = struct.unpack_from("<I", b, o)[0]
        o += 4
        if key == "general.alignment":
            align = struct.unpack_from("<I", b, o)[0]
        value(t)
    infos = []
    for _ in range(nt):
        name = string()
        nd = struct.unpack_from("<I", b, o)[0]
        o += 4 + 8 * nd
        t, off = struct.unpack_from("<IQ", b, o)
        o += 12
        infos.append((name, t, off))
    return b, (o + align - 1) // align * align, infos


def main():
    weights, work, tool = sys.argv[1:4]
    w = safetensors(weights)
    bad = 0
    for kind, tid in GGML.items():
        b, start, infos = gguf(os.path.join(work, kind + ".gguf"))
        same = total = 0
        for name, t, off in infos:
            if t != tid:
                continue
            shape, dtype, data = w[name]
            if dtype != "F32":
                data = np.frombuffer(data, {"F16": np.float16, "BF16": None}[dtype]).astype(np.float32).tobytes()
            rows, per = int(np.prod(shape[:-1])), shape[-1]
            src, out = os.path.join(work, "x.f32"), os.path.join(work, "ref.bin")
            open(src, "wb").write(data)
            subprocess.check_call([tool, str(tid), str(rows), str(per), src, out])
            ref = open(out, "rb").read()
            total += 1
            same += ref == b[start + off:start + off + len(ref)]
        bad += same != total
        print(f"{kind}: {same} of {total} tensors byte-identical to ggml_quantize_chunk")
    sys.exit(1 if bad else 0)


main()

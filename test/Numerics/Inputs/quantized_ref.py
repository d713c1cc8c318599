"""quantized_ref.py WEIGHTS.safetensors OUT_DIR IDS.npy X1.npy X3.npy: what
Inputs/quantized.ln's entries compute, in numpy (f64), from the weights'
values (a block format's as Runtime/Inputs/gguf.py --dequantized writes
them): ref-run.npy, ref-one.npy, ref-few.npy, ref-up_weight.npy (f32)."""
import json
import struct
import sys

import numpy as np

path, out, ids, x1, x3 = sys.argv[1:6]
raw = open(path, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
w = {}
for name, t in json.loads(raw[8:8 + n]).items():
    if name == "__metadata__":
        continue
    a, b = t["data_offsets"]
    w[name] = np.frombuffer(raw[8 + n + a:8 + n + b], np.float32).reshape(t["shape"]).astype(np.float64)


def linear(p, x):
    y = x @ w[p + ".weight"].T
    return y + w[p + ".bias"] if p + ".bias" in w else y


h = linear("up", w["emb.weight"][np.load(ids)])
np.save(f"{out}/ref-run.npy", linear("down", h * 0.5).astype(np.float32))
np.save(f"{out}/ref-one.npy", linear("up", np.load(x1).astype(np.float64)).astype(np.float32))
np.save(f"{out}/ref-few.npy", linear("up", np.load(x3).astype(np.float64)).astype(np.float32))
np.save(f"{out}/ref-up_weight.npy", w["up.weight"].astype(np.float32))

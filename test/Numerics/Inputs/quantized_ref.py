"""quantized_ref.py WEIGHTS.safetensors OUT_DIR IDS.npy X1.npy X3.npy: what
Inputs/quantized.ln's entries compute, in numpy (f64), from the weights'
values (a block format's as Runtime/Inputs/gguf.py --dequantized writes
them): ref-run.npy, ref-one.npy, ref-few.npy, ref-up_weight.npy (f32)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Runtime", "Inputs"))
from gguf import read_safetensors  # noqa: E402

path, out, ids, x1, x3 = sys.argv[1:6]
w = {name: np.frombuffer(raw, np.float32).reshape(shape).astype(np.float64)
     for name, dtype, shape, raw in read_safetensors(path)}


def linear(p, x):
    y = x @ w[p + ".weight"].T
    return y + w[p + ".bias"] if p + ".bias" in w else y


h = linear("up", w["emb.weight"][np.load(ids)])
np.save(f"{out}/ref-run.npy", linear("down", h * 0.5).astype(np.float32))
np.save(f"{out}/ref-one.npy", linear("up", np.load(x1).astype(np.float64)).astype(np.float32))
np.save(f"{out}/ref-few.npy", linear("up", np.load(x3).astype(np.float64)).astype(np.float32))
np.save(f"{out}/ref-up_weight.npy", w["up.weight"].astype(np.float32))

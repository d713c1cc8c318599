"""int8_weights.py DIR: int8 weights (every value in [-127, 127]), per-channel
scales and inputs for Inputs/int8.ln into DIR, with numpy's product as the
reference (each term exact in f32, the sum in f64)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Interp", "Inputs"))
from interp_util import write_safetensors  # noqa: E402

d = sys.argv[1]
r = np.random.default_rng(8)
w = r.integers(-127, 128, size=(40, 96)).astype(np.int8)
scale = (r.random(40).astype(np.float32) + 0.5) / 127
write_safetensors(os.path.join(d, "w.safetensors"), {"weight": w, "scale": scale})
for name, rows in (("x1", 1), ("x5", 5), ("x19", 19)):
    x = r.standard_normal((rows, 96)).astype(np.float32)
    np.save(os.path.join(d, f"{name}.npy"), x)
    ref = (x.astype(np.float64) @ w.T.astype(np.float64)) * scale.astype(np.float64)
    np.save(os.path.join(d, f"{name}-ref.npy"), ref.astype(np.float32))

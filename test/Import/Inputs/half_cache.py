"""The f16-cache attention of tensor-cast.ln's `step`, in numpy: keys and
values rounded to f16 and read back as f32, the online softmax over the
first start + r + 1 positions (the rest of the caches are zeros)."""
import sys

import numpy as np

d = sys.argv[1]
q, k, v = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in "qkv")
start = int(np.load(f"{d}/s.npy"))
keys = np.zeros((16, 8))
values = np.zeros((16, 8))
keys[start:start + 4] = k.astype(np.float32).astype(np.float16)
values[start:start + 4] = v.astype(np.float32).astype(np.float16)
want = np.empty((4, 8))
for r in range(4):
    s = keys[:start + r + 1] @ q[r]
    p = np.exp(s - s.max())
    want[r] = p @ values[:start + r + 1] / p.sum()
interp = np.load(f"{d}/step-want.npy")
got = {t: np.load(f"{d}/step-{t}.npy") for t in ("cpu", "cuda")}
# Compiled and interpreted agree to f32 rounding (softmax in blocks of keys:
# docs/interpreter.md); the interpreter against f64 numpy of the rounded cache.
print(" ".join(f"{t} {bool(np.allclose(g, interp, rtol=1e-5, atol=1e-6))}" for t, g in got.items()),
      "f16", bool(np.allclose(interp, want, rtol=1e-5, atol=1e-5)))

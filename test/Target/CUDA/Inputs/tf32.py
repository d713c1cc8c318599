"""tf32.py X W GOT WANT: GOT is y = x w^T computed with x and w rounded to
TF32 (10 mantissa bits, to nearest even) and f32 sums, and not the f32
product WANT (the interpreter's): it prints `tf32` when both hold."""
import sys
import numpy as np

x, w, got, want = (np.load(p) for p in sys.argv[1:5])


def tf32(a):
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0xFFF + ((u >> 13) & 1)) & 0xFFFFE000
    return u.astype(np.uint32).view(np.float32)


model = tf32(x).astype(np.float64) @ tf32(w).astype(np.float64).T
scale = np.abs(x).astype(np.float64) @ np.abs(w).astype(np.float64).T
# f32 sums of K products: within K ulps of the exact sum of the rounded products.
k = x.shape[1]
if not np.all(np.abs(got - model) <= k * 2.0**-24 * scale):
    sys.exit(f"not the TF32 product: max diff {np.abs(got - model).max()}")
# Each operand's rounding moves a product by at most 2^-10 relative.
if not np.all(np.abs(got - want) <= 2.0**-10 * scale + k * 2.0**-23 * scale):
    sys.exit("further from the f32 product than TF32 allows")
if np.array_equal(got, want):
    sys.exit("no operand was rounded: the f32 product")
print("tf32")

"""Holds a product computed under --block-products int8 against numpy.

usage: int8_products.py X.npy W.npy GOT.npy EXACT.npy

X is rows of activations [M, K], W the weight as its blocks dequantize
[N, K], GOT the compiled result [M, N], EXACT the interpreter's. The int8 reference
quantizes X to q8_0 as the CPU kernel does (per 32 values: d = f16(amax /
127), q = round-half-even(x * 127 / amax)) and sums in float64. Prints
whether GOT agrees with it (relative to the sum of |terms|), whether GOT
stays within the stated bound of the exact result, sum_k |x_k - x~_k| |w_k|
(plus rounding), and whether it differs from the exact result at all.
"""
import sys

import numpy as np

x, w, got, exact = (np.load(p) for p in sys.argv[1:5])
K = w.shape[1]
x = x.reshape(-1, K).astype(np.float32)
blocks = x.reshape(-1, 32)
amax = np.abs(blocks).max(axis=1).astype(np.float32)
d = (amax / np.float32(127)).astype(np.float32)
inv = np.where(amax != 0, np.float32(127) / np.where(amax != 0, amax, 1), 0).astype(np.float32)
q = np.rint(blocks * inv[:, None]).astype(np.float32)
xq = (q * d.astype(np.float16).astype(np.float32)[:, None]).reshape(x.shape).astype(np.float64)
w64 = w.astype(np.float64)
want = xq @ w64.T
scale = np.abs(xq) @ np.abs(w64).T + 1e-30
got = got.reshape(want.shape).astype(np.float64)
exact = exact.reshape(want.shape).astype(np.float64)
agree = np.abs(got - want) <= 1e-5 * scale
bound = np.abs(x.astype(np.float64) - xq) @ np.abs(w64).T + 1e-5 * scale
within = np.abs(got - exact) <= bound
print("int8 reference:", "match" if agree.all() else f"MISMATCH at {np.flatnonzero(~agree)[:5]}")
print("stated bound:", "holds" if within.all() else f"EXCEEDED at {np.flatnonzero(~within)[:5]}")
print("differs from exact:", bool((got != exact).any()))

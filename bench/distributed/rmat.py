"""rmat.py DIR SCALE EDGES F SEED: an R-MAT graph (a, b, c, d = 0.57, 0.19,
0.19, 0.05) on 2^SCALE nodes, as a destination-major CSR relation
(row_ptr.npy, col_idx.npy), with x.npy (N x F f32) and weight.npy (E f32).
Entity ids are shuffled, as a real graph's are: a contiguous block of rows
is not a community."""
import sys
import numpy as np

d, scale, edges, f, seed = sys.argv[1], *map(int, sys.argv[2:6])
rng = np.random.default_rng(seed)
n = 1 << scale
src = np.zeros(edges, np.int64)
dst = np.zeros(edges, np.int64)
for level in range(scale):
    u = rng.random(edges, dtype=np.float32)
    down = u >= 0.76            # c or d: the destination's bit is 1
    right = ((u >= 0.57) & (u < 0.76)) | (u >= 0.95)  # b or d: the source's bit is 1
    dst |= down.astype(np.int64) << level
    src |= right.astype(np.int64) << level
perm = rng.permutation(n)
src, dst = perm[src], perm[dst]
order = np.argsort(dst, kind="stable")
col = src[order]
row_ptr = np.zeros(n + 1, np.int64)
np.cumsum(np.bincount(dst, minlength=n), out=row_ptr[1:])
np.save(f"{d}/row_ptr.npy", row_ptr)
np.save(f"{d}/col_idx.npy", col)
np.save(f"{d}/x.npy", rng.standard_normal((n, f), dtype=np.float32))
np.save(f"{d}/weight.npy", rng.standard_normal(edges, dtype=np.float32))
print(f"R-MAT: {n} nodes, {edges} edges, F = {f}")

"""Writes a random CSR graph and its inputs: graph.py DIR N DEG_MIN DEG_MAX F SEED.

row_ptr.npy, col_idx.npy (destination-major), x.npy (N x F f32), x1.npy (N
f32), xi.npy (N x 4 i64), weight.npy (E f32), parts.npy (each entity's part
for 4 parts, round robin: a partition that is not contiguous)."""
import sys
import numpy as np

d, n, lo, hi, f, seed = sys.argv[1], *map(int, sys.argv[2:7])
rng = np.random.default_rng(seed)
deg = rng.integers(lo, hi + 1, size=n)
rp = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
ci = rng.integers(0, n, size=int(rp[-1])).astype(np.int64)
np.save(f"{d}/row_ptr.npy", rp)
np.save(f"{d}/col_idx.npy", ci)
np.save(f"{d}/x.npy", rng.standard_normal((n, f)).astype(np.float32))
np.save(f"{d}/x1.npy", rng.standard_normal(n).astype(np.float32))
np.save(f"{d}/xi.npy", rng.integers(-2**40, 2**40, size=(n, 4)).astype(np.int64))
np.save(f"{d}/weight.npy", rng.standard_normal(int(rp[-1])).astype(np.float32))
np.save(f"{d}/parts.npy", (np.arange(n) % 4).astype(np.int64))

"""compare.py REF.npy GOT.npy [exact|TOL]: exits 1 unless GOT matches REF."""
import sys
import numpy as np

ref, got = np.load(sys.argv[1]), np.load(sys.argv[2])
mode = sys.argv[3] if len(sys.argv) > 3 else "exact"
if ref.shape != got.shape or ref.dtype != got.dtype:
    sys.exit(f"shape/dtype {got.shape} {got.dtype}, expected {ref.shape} {ref.dtype}")
if mode == "exact":
    ok = np.array_equal(ref, got)
else:
    ok = np.allclose(ref, got, rtol=float(mode), atol=float(mode))
print("match" if ok else f"MISMATCH max diff {np.abs(ref.astype(np.float64) - got).max()}")
sys.exit(0 if ok else 1)

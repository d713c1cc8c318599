#!/usr/bin/python3
"""f32 matmul and matvec: linnet's generated kernels and its BLAS binding vs
numpy/OpenBLAS, in one process, 2 threads each.

    /usr/bin/python3 bench/matmul/bench.py [--build build] [--repeats 9]

Kernels are compiled from hand-written MLIR (linalg.matmul / linalg.matvec
on memrefs) by build/bin/linnet-cpu-compile with --impl=generated and
--impl=blas; the calls go through ctypes with MLIR memref descriptors.
Prints best and median of each configuration (a shared 2-core machine is
noisy: read the medians too)."""
import argparse
import os
import subprocess
import sys
import tempfile
import time

# Threads must be fixed before numpy (OpenBLAS) and libomp start.
os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

import ctypes  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memref import Kernel  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

MATMUL = """func.func @matmul(%a: memref<{n}x{n}xf32>, %b: memref<{n}x{n}xf32>, %c: memref<{n}x{n}xf32>) attributes {{llvm.emit_c_interface}} {{
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<{n}x{n}xf32>)
  linalg.matmul ins(%a, %b : memref<{n}x{n}xf32>, memref<{n}x{n}xf32>) outs(%c : memref<{n}x{n}xf32>)
  return
}}
"""

MATVEC = """func.func @matvec(%w: memref<{m}x{k}xf32>, %x: memref<{k}xf32>, %y: memref<{m}xf32>) attributes {{llvm.emit_c_interface}} {{
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%y : memref<{m}xf32>)
  linalg.matvec ins(%w, %x : memref<{m}x{k}xf32>, memref<{k}xf32>) outs(%y : memref<{m}xf32>)
  return
}}
"""


def compile_mlir(tool, text, impl, tmp, name):
    src = os.path.join(tmp, name + ".mlir")
    out = os.path.join(tmp, "%s.%s.so" % (name, impl))
    with open(src, "w") as f:
        f.write(text)
    subprocess.run([tool, src, "--impl=" + impl, "-o", out], check=True)
    return out


def timeit(fn, repeats, inner=1):
    fn()
    fn()
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        ts.append((time.perf_counter() - t) / inner)
    ts.sort()
    time.sleep(0.3)  # let the other side's spinning threads go to sleep
    return ts[0], ts[len(ts) // 2]


def openblas_core():
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--sizes", default="1024,2048")
    args = ap.parse_args()
    tool = os.path.join(args.build, "bin", "linnet-cpu-compile")
    print("OMP_NUM_THREADS=%s OPENBLAS_NUM_THREADS=%s OPENBLAS_CORETYPE=%s (OpenBLAS core in use: %s)"
          % (os.environ["OMP_NUM_THREADS"], os.environ["OPENBLAS_NUM_THREADS"],
             os.environ.get("OPENBLAS_CORETYPE", "unset"), openblas_core()))
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        print("\nf32 matmul C = A B (GFLOP/s: best / median of %d)" % args.repeats)
        print("%6s %18s %18s %18s %10s %10s" % ("n", "numpy", "linnet generated", "linnet blas",
                                                 "gen/numpy", "blas/numpy"))
        for n in [int(s) for s in args.sizes.split(",")]:
            a = rng.random((n, n), dtype=np.float32)
            b = rng.random((n, n), dtype=np.float32)
            want = a @ b
            flop = 2.0 * n ** 3
            res = {}
            for impl in ("generated", "blas"):
                c = np.zeros((n, n), np.float32)
                so = compile_mlir(tool, MATMUL.format(n=n), impl, tmp, "matmul%d" % n)
                call = Kernel(so, "matmul").bind(a, b, c)
                call()
                err = np.abs(c - want).max() / np.abs(want).max()
                assert err < 1e-5, (impl, err)
                res[impl] = timeit(call, args.repeats)
            out = np.empty((n, n), np.float32)
            res["numpy"] = timeit(lambda: np.matmul(a, b, out=out), args.repeats)
            g = {k: (flop / v[0] / 1e9, flop / v[1] / 1e9) for k, v in res.items()}
            fmt = lambda k: "%7.1f / %7.1f" % g[k]
            print("%6d %18s %18s %18s %9.0f%% %9.0f%%" % (
                n, fmt("numpy"), fmt("generated"), fmt("blas"),
                100 * g["generated"][1] / g["numpy"][1], 100 * g["blas"][1] / g["numpy"][1]))

        print("\nf32 matvec y = W x, W [Out, In] (GB/s of W: best / median of %d)" % args.repeats)
        print("%12s %18s %18s %10s" % ("Out x In", "numpy", "linnet generated", "gen/numpy"))
        for m, k in ((32000, 512), (1376, 512)):
            w = rng.random((m, k), dtype=np.float32)
            x = rng.random(k, dtype=np.float32)
            y = np.zeros(m, np.float32)
            so = compile_mlir(tool, MATVEC.format(m=m, k=k), "auto", tmp, "matvec%d" % m)
            call = Kernel(so, "matvec").bind(w, x, y)
            call()
            assert np.allclose(y, w @ x, rtol=1e-4), "matvec mismatch"
            inner = max(1, int(2e8 // w.nbytes))
            res = {"generated": timeit(call, args.repeats, inner)}
            yo = np.empty(m, np.float32)
            res["numpy"] = timeit(lambda: np.matmul(w, x, out=yo), args.repeats, inner)
            g = {kk: (w.nbytes / v[0] / 1e9, w.nbytes / v[1] / 1e9) for kk, v in res.items()}
            print("%12s %18s %18s %9.0f%%" % (
                "%dx%d" % (m, k), "%7.1f / %7.1f" % g["numpy"], "%7.1f / %7.1f" % g["generated"],
                100 * g["generated"][1] / g["numpy"][1]))


if __name__ == "__main__":
    main()

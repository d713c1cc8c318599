#!/usr/bin/python3
"""bench/matmul/matmul.ln (1024^3 f32 matmul written in linnet) through
`linnet build --target cpu-native --impl=...`, against numpy/OpenBLAS in the same
process. Each artifact's model.so is called through the entry's C interface
(`_mlir_ciface_matmul(a, b, out)`, docs/cpu-abi.md) and checked against numpy
before it is timed.

    OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 bench/matmul/bench_build.py \\
        [--impls auto generated blas] [--repeats 9]
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

import numpy as np  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench import openblas_core, timeit  # noqa: E402
from memref import Kernel  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--linnet", default=str(ROOT / "build/bin/linnet"))
    ap.add_argument("--impls", nargs="+", default=["auto", "generated"])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("-n", type=int, default=1024)
    args = ap.parse_args()
    n = args.n
    print("OMP_NUM_THREADS=%s OPENBLAS_NUM_THREADS=%s OPENBLAS_CORETYPE=%s (OpenBLAS core in use: %s)"
          % (os.environ["OMP_NUM_THREADS"], os.environ["OPENBLAS_NUM_THREADS"],
             os.environ.get("OPENBLAS_CORETYPE", "unset"), openblas_core()))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    want = a @ b
    flop = 2.0 * n ** 3
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for impl in args.impls:
            art = pathlib.Path(tmp, impl)
            t0 = time.perf_counter()
            subprocess.run([args.linnet, "build", str(ROOT / "bench/matmul/matmul.ln"),
                            "-D", "M=%d" % n, "-D", "N=%d" % n, "-D", "K=%d" % n,
                            "--target", "cpu-native", "--impl=" + impl, "-o", str(art)], check=True)
            build_s = time.perf_counter() - t0
            out = np.zeros((n, n), dtype=np.float32)
            call = Kernel(str(art / "model.so"), "matmul").bind(a, b, out)
            call()
            err = float(np.abs(out - want).max() / np.abs(want).max())
            if err > 1e-4:
                sys.exit("bench_build: --impl=%s disagrees with numpy (max rel err %.2e)" % (impl, err))
            # Interleaved with numpy, so both see the same machine load.
            lb, lm = timeit(call, args.repeats)
            nb, nm = timeit(lambda: np.matmul(a, b, out=want), args.repeats)
            rows.append((impl, flop / nb / 1e9, flop / nm / 1e9, flop / lb / 1e9,
                         flop / lm / 1e9, nm / lm, build_s, err))
    print()
    print("| n | --impl | numpy GFLOP/s (best / median) | linnet GFLOP/s (best / median) | linnet / numpy (medians) | build s | max rel err |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for impl, nb, nm, lb, lm, ratio, bs, err in rows:
        print("| %d | %s | %.1f / %.1f | %.1f / %.1f | %.0f%% | %.1f | %.1e |"
              % (n, impl, nb, nm, lb, lm, 100 * ratio, bs, err))


if __name__ == "__main__":
    main()

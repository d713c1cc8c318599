#!/usr/bin/python3
"""Weighted aggregation over an R-MAT graph: linnet's CPU kernel against
torch.sparse (CSR x dense) and scipy.sparse, in the same run.

    out[d, f] = sum over edges e = (s -> d) of x[s, f] * weight[e]

which is the CSR sparse-matrix x dense-matrix product A @ X with
A[d, s] = weight[e]. By default (--path build) linnet compiles
bench/csr/aggregate.ln with `linnet build -D F=... --target cpu-native` (plan
importer -> gf.apply -> gf passes -> CPU code generator) and calls the
artifact's model.so through the entry's C interface (docs/cpu-abi.md);
--path mlir compiles the hand-written Domain IR below with
linnet-cpu-compile instead. All use the same CSR arrays and the same number
of threads. GFLOP/s counts 2 * nnz * F.

    /usr/bin/python3 bench/csr/bench_csr.py [--path build|mlir] [--nodes 100000
        --edges 1000000 --features 64 256 --threads 2 --repeat 20]
"""
import argparse
import ctypes
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]

KERNEL = """
"gf.reducer"() <{{sym_name = "vsum", kind = "algebraic", associative = true, commutative = true, message_types = [tensor<{F}xf32>], state_types = [tensor<{F}xf32>], result_types = [tensor<{F}xf32>]}}> ({{
  %z = arith.constant dense<0.0> : tensor<{F}xf32>
  "gf.reducer_yield"(%z) : (tensor<{F}xf32>) -> ()
}}, {{
^bb0(%m: tensor<{F}xf32>):
  "gf.reducer_yield"(%m) : (tensor<{F}xf32>) -> ()
}}, {{
^bb0(%a: tensor<{F}xf32>, %b: tensor<{F}xf32>):
  %s = arith.addf %a, %b : tensor<{F}xf32>
  "gf.reducer_yield"(%s) : (tensor<{F}xf32>) -> ()
}}, {{
^bb0(%s: tensor<{F}xf32>):
  "gf.reducer_yield"(%s) : (tensor<{F}xf32>) -> ()
}}) : () -> ()
func.func @aggregate(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?x{F}xf32>, %w: tensor<?xf32>) -> tensor<?x{F}xf32> {{
  %r = "gf.relation"(%rp, %ci) <{{relation_id = "rmat", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = {N}, num_dst = {N}}}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x, %w) <{{reducers = [@vsum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}}> ({{
  ^bb0(%xs: tensor<{F}xf32>, %we: f32):
    %ws = tensor.splat %we : tensor<{F}xf32>
    %m = arith.mulf %xs, %ws : tensor<{F}xf32>
    "gf.yield"(%m) : (tensor<{F}xf32>) -> ()
  }}) : (!gf.relation, tensor<?x{F}xf32>, tensor<?xf32>) -> tensor<?x{F}xf32>
  return %o : tensor<?x{F}xf32>
}}
"""


def rmat_csr(np, sp, nodes, edges, seed, a=0.57, b=0.19, c=0.19):
    """R-MAT edges (Graph500 parameters), duplicates summed, as CSR by
    destination."""
    rng = np.random.default_rng(seed)
    scale = int(np.ceil(np.log2(nodes)))
    src = np.zeros(edges, dtype=np.int64)
    dst = np.zeros(edges, dtype=np.int64)
    for bit in range(scale):
        r = rng.random(edges)
        down = r >= a + b            # quadrants c, d: destination bit set
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)  # b, d: source bit
        dst |= down.astype(np.int64) << bit
        src |= right.astype(np.int64) << bit
    keep = (src < nodes) & (dst < nodes)
    src, dst = src[keep], dst[keep]
    weight = rng.random(src.shape[0], dtype=np.float32)
    a_mat = sp.csr_matrix((weight, (dst, src)), shape=(nodes, nodes),
                          dtype=np.float32)
    a_mat.sum_duplicates()
    a_mat.sort_indices()
    return a_mat


class MemRef(ctypes.Structure):
    pass


def descriptor(np, array):
    rank = array.ndim
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * rank),
              ("strides", ctypes.c_int64 * rank)]
    cls = type("MemRef%d" % rank, (ctypes.Structure,), {"_fields_": fields})
    assert array.flags["C_CONTIGUOUS"]
    ptr = array.ctypes.data
    strides = [s // array.itemsize for s in array.strides]
    return cls(ptr, ptr, 0, tuple(array.shape), tuple(strides))


def timed(fn, repeat):
    fn()  # warm-up (page faults, thread start)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compiler", default=str(ROOT / "build/bin/linnet-cpu-compile"))
    parser.add_argument("--linnet", default=str(ROOT / "build/bin/linnet"))
    parser.add_argument("--path", choices=["build", "mlir"], default="build",
                        help="build: bench/csr/aggregate.ln through `linnet build`; "
                             "mlir: hand-written Domain IR through linnet-cpu-compile")
    args = parser.parse_args()

    # OpenMP reads this when a runtime starts: set before any library loads.
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    try:
        import numpy as np
        import scipy
        import scipy.sparse as sp
        import torch
    except ImportError as e:
        sys.exit("bench_csr: needs python3-numpy, python3-scipy and python3-torch "
                 "(scripts/install-deps --torch): %s" % e)
    torch.set_num_threads(args.threads)

    a_mat = rmat_csr(np, sp, args.nodes, args.edges, args.seed)
    nnz = a_mat.nnz
    indptr = a_mat.indptr.astype(np.int64)
    indices = a_mat.indices.astype(np.int64)
    weight = np.ascontiguousarray(a_mat.data, dtype=np.float32)
    degrees = np.diff(indptr)
    print("R-MAT graph: %d nodes, %d edges (duplicates summed), max in-degree %d, "
          "empty rows %d" % (args.nodes, nnz, degrees.max(), (degrees == 0).sum()))
    print("linnet path: %s" % ("linnet build bench/csr/aggregate.ln" if args.path == "build"
                                else "linnet-cpu-compile on hand-written Domain IR"))
    print("threads: %d (linnet: OpenMP, torch %s: set_num_threads, scipy %s: 1)"
          % (args.threads, torch.__version__, scipy.__version__))
    a_torch = torch.sparse_csr_tensor(torch.from_numpy(indptr), torch.from_numpy(indices),
                                      torch.from_numpy(weight), size=(args.nodes, args.nodes))

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in args.features:
            t0 = time.perf_counter()
            if args.path == "build":
                art = pathlib.Path(tmp, "aggregate%d.art" % f)
                subprocess.run([args.linnet, "build", str(ROOT / "bench/csr/aggregate.ln"),
                                "-D", "F=%d" % f, "--target", "cpu-native", "-o", str(art)],
                               check=True)
                lib_path = art / "model.so"
            else:
                src = pathlib.Path(tmp, "aggregate%d.mlir" % f)
                lib_path = pathlib.Path(tmp, "aggregate%d.so" % f)
                src.write_text(KERNEL.format(F=f, N=args.nodes))
                subprocess.run([args.compiler, str(src), "-o", str(lib_path)], check=True)
            compile_s = time.perf_counter() - t0
            lib = ctypes.CDLL(str(lib_path))
            kernel = lib._mlir_ciface_aggregate

            rng = np.random.default_rng(args.seed + f)
            x = rng.standard_normal((args.nodes, f), dtype=np.float32)
            out = np.empty((args.nodes, f), dtype=np.float32)
            descs = [descriptor(np, a) for a in (indptr, indices, x, weight, out)]
            refs = [ctypes.byref(d) for d in descs]

            t_linnet = timed(lambda: kernel(*refs), args.repeat)
            time.sleep(0.3)  # let the other OpenMP runtime's spinning threads sleep
            x_torch = torch.from_numpy(x)
            t_torch = timed(lambda: torch.sparse.mm(a_torch, x_torch), args.repeat)
            time.sleep(0.3)
            t_scipy = timed(lambda: a_mat @ x, max(3, args.repeat // 4))

            want = a_mat @ x
            got_torch = torch.sparse.mm(a_torch, x_torch).numpy()
            err = float(np.abs(out - want).max() / (np.abs(want).max() + 1e-30))
            err_torch = float(np.abs(got_torch - want).max() / (np.abs(want).max() + 1e-30))
            if err > 1e-5:
                sys.exit("bench_csr: linnet disagrees with scipy (max rel err %.2e)" % err)
            flops = 2.0 * nnz * f
            rows.append((f, flops / t_linnet / 1e9, flops / t_torch / 1e9,
                         flops / t_scipy / 1e9, t_linnet, err, err_torch, compile_s))

    print()
    print("| F | linnet GFLOP/s | torch.sparse GFLOP/s | scipy GFLOP/s | linnet/torch | linnet/scipy | linnet ms | max rel err vs scipy | compile s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for f, gl, gt, gs, tl, err, _, cs in rows:
        print("| %d | %.2f | %.2f | %.2f | %.2fx | %.2fx | %.2f | %.1e | %.2f |"
              % (f, gl, gt, gs, gl / gt, gl / gs, tl * 1e3, err, cs))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Builds the artifacts bench/cuda/bench.py times on a GPU (the CUDA issue's
figures), here where linnet is built; scripts/device-check --prepare runs it.

  prepare.py LINNET OUT [--small] [--host-kernels]
      writes OUT/<name>/ (artifacts, built with --profile where the figure
      is a kernel's time) and OUT/benches.json (what each one is); --small:
      small sizes (a smoke run), --host-kernels: artifacts the CUDA driver
      emulator runs (docs/cuda-abi.md)

The data (an R-MAT graph, matrices, random weights) is made on the GPU
machine by bench.py: it is far larger than what travels with the tree.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
linnet, out = sys.argv[1], sys.argv[2]
small = "--small" in sys.argv[3:]
extra = ["--host-kernels"] if "--host-kernels" in sys.argv[3:] else []
os.makedirs(out, exist_ok=True)
here = os.path.dirname(os.path.abspath(__file__))

# The ~1B-parameter Llama of the decode figure.
LLAMA_1B = {"Vocab": 32000, "Hidden": 2048, "Inter": 5632, "Layers": 16, "Heads": 32, "KvHeads": 8,
            "MaxSeq": 2048, "T": "bf16"}
RMAT_NODES = 1 << 20
GEMM = 4096
if small:
    LLAMA_1B = {"Vocab": 64, "Hidden": 32, "Inter": 48, "Layers": 2, "Heads": 4, "KvHeads": 2, "MaxSeq": 256,
                "T": "bf16"}
    RMAT_NODES, GEMM = 1 << 10, 128

benches = []


def build(name, src, defines, flags=(), **meta):
    art = os.path.join(out, name)
    d = [a for k, v in defines.items() for a in ("-D", "%s=%s" % (k, v))]
    p = subprocess.run([linnet, "build", src] + d + list(flags) + extra +
                       ["--target", "cuda", "--variants", "none", "-o", art], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("bench/cuda: building %s failed:\n%s" % (name, p.stdout + p.stderr))
    benches.append(dict(meta, name=name, artifact=name, defines=defines, flags=list(flags)))


agg = os.path.join(here, "aggregate.ln")
for f in (64, 256):
    build("csr-f%d" % f, agg, {"Rows": RMAT_NODES, "F": f}, ["--profile"], kind="csr", features=f,
          nodes=RMAT_NODES, edges=16 * RMAT_NODES, entry="sum")
gemm = os.path.join(here, "gemm.ln")
dims = {"M": GEMM, "N": GEMM, "K": GEMM}
build("gemm-f32", gemm, dims, ["--profile"], kind="gemm", dtype="f32", entry="matmul")
build("gemm-f32-generated", gemm, dims, ["--profile", "--impl", "generated"], kind="gemm", dtype="f32",
      entry="matmul")
build("gemm-tf32", gemm, dims, ["--profile", "--matmul-precision", "tf32"], kind="gemm", dtype="tf32",
      entry="matmul")
# A bf16 product as PyTorch computes it (exact products summed in f32):
# the f32-compute policy; the default rounds each product to bf16.
build("gemm-bf16", gemm, dict(dims, T="bf16"), ["--profile", "--numerics", "f32-compute"], kind="gemm",
      dtype="bf16", entry="matmul")
build("llama-1b-bf16", os.path.join(ROOT, "examples", "llama.ln"), LLAMA_1B, kind="decode", entry="decode",
      position=128)
with open(os.path.join(out, "benches.json"), "w") as f:
    json.dump({"benches": benches}, f, indent=1)
print("bench/cuda: %d artifacts in %s" % (len(benches), out))

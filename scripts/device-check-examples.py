#!/usr/bin/env python3
"""scripts/device-check --prepare's examples: each example built for the GPU
(linnet build --target cuda), random weights and inputs, and the reference
interpreter's results, as cases for linnet-device-run (OUT/cases.json).

  device-check-examples.py LINNET EXAMPLES_DIR OUT [BUILD FLAGS...]

BUILD FLAGS are added to each build (--host-kernels: for the driver
emulator, scripts/device-check --emulator).
"""
import json
import os
import subprocess
import sys

import numpy as np

linnet, ex, out = sys.argv[1:4]
flags = sys.argv[4:]
rs = np.random.RandomState(0)
cases = []


def run(args):
    p = subprocess.run([linnet] + args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("device-check: linnet %s failed:\n%s" % (" ".join(args), p.stdout + p.stderr))
    return p


def case(name, model, defines, entry, inputs, relations=(), extra=(), policy=(), tol=(1e-4, 1e-5)):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(ex, model)
    w = os.path.join(d, "weights.safetensors")
    run(["init-weights", src] + defines + list(extra) + ["-o", w])
    art = os.path.join(d, "art")
    if not os.path.exists(art):
        run(["build", src] + defines + list(policy) + ["--weights", w, "--target", "cuda", "-o", art] + flags)
    args, files = [], {}
    for k, arr in inputs.items():
        f = os.path.join(d, "%s.npy" % k)
        np.save(f, arr)
        args += ["--input", "%s=%s" % (k, f)]
        files[k] = f
    for k, (rp, ci) in relations:
        frp, fci = os.path.join(d, k + ".row_ptr.npy"), os.path.join(d, k + ".col_idx.npy")
        np.save(frp, rp)
        np.save(fci, ci)
        args += ["--relation", "%s=%s,%s" % (k, frp, fci)]
        files[(k, "row_ptr")], files[(k, "col_idx")] = frp, fci
    exp = os.path.join(d, "%s.expected.npy" % entry)
    run(["run", src, "--interpret"] + defines + list(policy) + ["--weights", w, "--entry", entry] + args +
        ["--output", exp])
    sig = [e for e in json.load(open(os.path.join(art, "runtime.json")))["entries"] if e["name"] == entry][0]
    ordered = []
    for i in sig["inputs"]:
        if i.get("relation"):
            role = "row_ptr" if "row_ptr" in i["name"] else "col_idx"
            ordered.append(files[(i["relation"], role)])
        else:
            ordered.append(files[i["name"]])
    rel = lambda p: os.path.relpath(p, out)
    cases.append({"name": "%s %s" % (name, entry), "artifact": rel(art), "weights": rel(w), "entry": entry,
                  "inputs": [rel(p) for p in ordered], "expected": [rel(exp)], "rtol": tol[0], "atol": tol[1]})


D = ["-D", "In=5", "-D", "Hidden=16", "-D", "Out=3"]
case("mlp", "mlp.ln", D, "forward", {"x": rs.randn(7, 5).astype(np.float32)}, extra=["--with-optional"])
D = ["-D", "In=4", "-D", "Hidden=8", "-D", "Out=3"]
N = 40
deg = rs.randint(0, 5, N)
rp = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
ci = rs.randint(0, N, rp[-1]).astype(np.int64)
case("gcn", "gcn.ln", D, "forward", {"x": rs.randn(N, 4).astype(np.float32),
                                     "weight": rs.rand(rp[-1]).astype(np.float32)},
     relations=[("g", (rp, ci))], extra=["--with-optional"])
D = ["-D", "Vocab=64", "-D", "Hidden=32", "-D", "Inter=48", "-D", "Layers=2", "-D", "Heads=4",
     "-D", "KvHeads=2", "-D", "MaxSeq=40"]
prompt = rs.randint(0, 64, 7).astype(np.int64)
case("llama", "llama.ln", D, "prefill", {"tokens": prompt})
case("llama", "llama.ln", D, "decode", {"token": prompt[:1], "pos": np.array(0, np.int64)})
# bf16 under f32-compute: prefill's products are cublasGemmEx (tensor cores,
# f32 accumulation) where cuBLAS is installed; bf16 results within bf16's
# rounding of a reassociated f32 sum.
case("llama-bf16", "llama.ln", D + ["-D", "T=bf16"], "prefill", {"tokens": prompt},
     policy=["--numerics", "f32-compute"], tol=(2e-2, 2e-2))
# bf16 computed in bf16 (the default policy): the device's math functions
# (RoPE's pow, exp, rsqrt) run in f32 on widened values and round once, as
# the interpreter computes them; within a few bf16 roundings.
case("llama-bf16-compute", "llama.ln", D + ["-D", "T=bf16"], "decode",
     {"token": prompt[:1], "pos": np.array(3, np.int64)}, tol=(5e-2, 5e-2))
# f32 under --matmul-precision tf32: prefill's products are GemmEx with
# CUBLAS_COMPUTE_32F_FAST_TF32; within TF32's rounding of the f32 result.
case("llama-tf32", "llama.ln", D, "prefill", {"tokens": prompt},
     policy=["--matmul-precision", "tf32"], tol=(1e-2, 1e-2))
with open(os.path.join(out, "cases.json"), "w") as f:
    json.dump({"cases": cases}, f, indent=1)
print("device-check: %d example cases in %s" % (len(cases), out))

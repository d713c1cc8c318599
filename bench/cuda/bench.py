#!/usr/bin/env python3
"""The CUDA issue's device figures, on a machine with a GPU (run by
scripts/device-check after the correctness cases; bench/cuda/README.md).

  bench.py DIR

DIR holds what bench/cuda/prepare.py built (benches.json, the artifacts)
and bin/linnet-device-run. The data is made here, on the GPU: an R-MAT
graph (a = 0.57, b = c = 0.19, 2^20 nodes, 16 edges a node on average),
random matrices, random bf16 weights for the decode model. Each figure is
printed beside its target:

- CSR aggregation: the artifact's kernel time (CUDA events at its command,
  a --profile build) against cuSPARSE's SpMM through PyTorch
  (torch.sparse.mm on a CSR tensor of ones), the median of 20 calls each,
  the results compared;
- GEMM 4096^3: the product's command against torch.matmul (cuBLAS) at
  f32, TF32 and bf16, and the generated kernel (--impl generated) at f32;
- decode: a ~1B-parameter bf16 Llama, one token at position 128 per call
  (the call's wall time: a CUDA graph replayed, the token copied in and the
  logits out), against the HBM bound, weight bytes per token / 4.8 TB/s.

Sizes come from benches.json (prepare.py --small builds small ones: a
smoke run, on the CUDA driver emulator too, whose figures mean nothing).
Without PyTorch on a GPU the data is made with numpy and there are no
baselines.
"""
import glob
import json
import struct
import os
import subprocess
import sys
import tempfile

import numpy as np

HBM_BYTES_PER_S = 4.8e12

d = os.path.abspath(sys.argv[1])
runner = os.path.join(d, "..", "bin", "linnet-device-run")
if not os.path.exists(runner):
    runner = os.path.join(d, "bin", "linnet-device-run")
spec = json.load(open(os.path.join(d, "benches.json")))["benches"]
data = tempfile.mkdtemp(prefix="linnet-bench-")

try:
    import torch
    cuda = torch.cuda.is_available()
except ImportError:
    torch, cuda = None, False
if not cuda:
    print("bench/cuda: no PyTorch with CUDA here: linnet's figures without the cuBLAS/cuSPARSE baselines")

# cuBLAS for the artifacts' library products: PyTorch's copy where the
# system has none (LINNET_CUBLAS, docs/cuda-abi.md).
if "LINNET_CUBLAS" not in os.environ and torch is not None:
    for p in [os.path.dirname(torch.__file__)] + sys.path:
        libs = sorted(glob.glob(os.path.join(p, "nvidia", "cu*", "lib", "libcublas.so.*")) +
                      glob.glob(os.path.join(p, "nvidia", "cublas", "lib", "libcublas.so.*")))
        if libs:
            os.environ["LINNET_CUBLAS"] = libs[0]
            os.environ["LD_LIBRARY_PATH"] = os.path.dirname(libs[0]) + ":" + os.environ.get("LD_LIBRARY_PATH", "")
            break


def to_bf16(a):
    """float32 -> bf16 bits (round to nearest even), as uint16."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def write_safetensors(path, tensors):
    """{name: (dtype, float32 array)} as safetensors, bf16 and f16 narrowed."""
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        dt, a = tensors[name]
        raw = {"bf16": lambda: to_bf16(a), "f16": lambda: a.astype(np.float16),
               "f32": lambda: a.astype(np.float32)}[dt]().tobytes()
        header[name] = {"dtype": dt.upper(), "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for raw in blobs:
            f.write(raw)


def npy(name, arr):
    path = os.path.join(data, name + ".npy")
    np.save(path, arr)
    return path


def inputs_of(b, files):
    """The entry's inputs in runtime.json's order."""
    rt = json.load(open(os.path.join(d, b["artifact"], "runtime.json")))
    sig = [e for e in rt["entries"] if e["name"] == b["entry"]][0]
    return [files[i["name"]] for i in sig["inputs"]]


def run_linnet(b, inputs, iterations=20, output=None):
    case = {"name": b["name"], "artifact": os.path.join(d, b["artifact"]), "entry": b["entry"],
            "inputs": inputs, "warmup": 3, "iterations": iterations}
    if b.get("weights"):
        case["weights"] = b["weights"]
    if output:
        case["output"] = output
    path = os.path.join(data, b["name"] + ".bench.json")
    json.dump({"benches": [case]}, open(path, "w"))
    p = subprocess.run([runner, "--bench", path], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("BENCH "):
            return json.loads(line[6:])
    print("  %s: FAILED: %s" % (b["name"], (p.stdout + p.stderr).strip()[-400:]))
    return None


def cuda_ms(fn, iterations=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return float(np.median(times))


def kernel_ms(res, library=False):
    """The product's or the aggregation's own command: the longest one
    (a GEMM's zero fill and bf16 rounding are commands of their own)."""
    cmds = res.get("commands") or {}
    return max(cmds.values()) if cmds else res["wall_ms"]


def rmat(nodes, edges, seed=1):
    g = torch.Generator(device="cuda").manual_seed(seed)
    bits = nodes.bit_length() - 1
    row = torch.zeros(edges, dtype=torch.int64, device="cuda")
    col = torch.zeros(edges, dtype=torch.int64, device="cuda")
    a, b, c = 0.57, 0.19, 0.19
    for _ in range(bits):
        r = torch.rand(edges, generator=g, device="cuda")
        down = r >= a + b
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)
        row = row * 2 + down
        col = col * 2 + right
    order = torch.argsort(row, stable=True)
    row, col = row[order], col[order]
    rp = torch.zeros(nodes + 1, dtype=torch.int64, device="cuda")
    rp[1:] = torch.cumsum(torch.bincount(row, minlength=nodes), 0)
    return rp, col


results = []


def report(what, ours, theirs, target, unit="ms"):
    if ours is None:
        print("%s: no figure (the run failed)" % what)
        return
    if theirs is None:
        print("%s: linnet %.3f %s (no baseline here); target %s" % (what, ours, unit, target))
        return
    print("%s: linnet %.3f %s, baseline %.3f %s: %.2fx the baseline; target %s" % (
        what, ours, unit, theirs, unit, theirs / ours, target))


for b in [b for b in spec if b["kind"] == "csr"]:
    nodes, edges, F = b["nodes"], b["edges"], b["features"]
    if cuda:
        rp, ci = rmat(nodes, edges)
        x = torch.randn(nodes, F, device="cuda")
        files = {"g.row_ptr": npy("rp", rp.cpu().numpy()), "g.col_idx": npy("ci", ci.cpu().numpy()),
                 "x": npy("x%d" % F, x.cpu().numpy())}
    else:
        rs = np.random.default_rng(1)
        deg = rs.poisson(16, nodes)
        rpn = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
        cin, xn = rs.integers(0, nodes, rpn[-1]), rs.standard_normal((nodes, F)).astype(np.float32)
        files = {"g.row_ptr": npy("rp", rpn), "g.col_idx": npy("ci", cin), "x": npy("x%d" % F, xn)}
        want = np.zeros((nodes, F), np.float64)
        np.add.at(want, np.repeat(np.arange(nodes), deg), xn[cin])
    out = os.path.join(data, "y%d.npy" % F)
    res = run_linnet(b, inputs_of(b, files), output=out)
    theirs = None
    if cuda:
        A = torch.sparse_csr_tensor(rp, ci, torch.ones(ci.numel(), device="cuda"), size=(nodes, nodes))
        theirs = cuda_ms(lambda: torch.sparse.mm(A, x))
        if res:
            want = torch.sparse.mm(A, x).cpu().numpy()
            got = np.load(out)
            if not np.allclose(got, want, rtol=1e-4, atol=1e-3):
                print("  csr F=%d: linnet's result DIFFERS from cuSPARSE's (max |d| %g)" % (
                    F, np.abs(got - want).max()))
    elif res and not np.allclose(np.load(out), want, rtol=1e-4, atol=1e-3):
        print("  csr F=%d: linnet's result DIFFERS from numpy's" % F)
    report("CSR aggregation, %s %d nodes / %d edges, F = %d" % ("R-MAT" if cuda else "Poisson", nodes, edges, F),
           res and kernel_ms(res), theirs, ">= 1.5x cuSPARSE SpMM")

for b in [b for b in spec if b["kind"] == "gemm"]:
    n = b["defines"]["M"]
    rs = np.random.default_rng(2)
    a = rs.standard_normal((n, n)).astype(np.float32)
    bb = rs.standard_normal((n, n)).astype(np.float32)
    if b["dtype"] == "bf16":
        # bf16 values, as f32 (numpy has no bf16; the runner narrows them).
        a, bb = from_bf16(to_bf16(a)), from_bf16(to_bf16(bb))
    files = {"a": npy("a-" + b["dtype"], a), "b": npy("b-" + b["dtype"], bb)}
    out = os.path.join(data, "c-%s.npy" % b["name"])
    res = run_linnet(b, inputs_of(b, files), iterations=10, output=out)
    theirs = None
    if cuda:
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(bb).cuda()
        torch.backends.cuda.matmul.allow_tf32 = b["dtype"] == "tf32"
        if b["dtype"] == "bf16":
            ta, tb = ta.bfloat16(), tb.bfloat16()
        theirs = cuda_ms(lambda: ta @ tb, 10)
        want = (ta @ tb).float().cpu().numpy()
        torch.backends.cuda.matmul.allow_tf32 = False
        # Sums of 4096 terms of about unit size: f32 to ~1e-3, TF32 and
        # bf16 (operands rounded to 10 or 7 bits) to a few units.
        tol = {"f32": 1e-2, "tf32": 0.5, "bf16": 1.0}[b["dtype"]]
        if res and not np.allclose(np.load(out), want, rtol=0, atol=tol):
            print("  %s: linnet's product DIFFERS from cuBLAS's (max |d| %g)" % (
                b["name"], np.abs(np.load(out) - want).max()))
    target = {"f32": ">= 80% of cuBLAS", "tf32": ">= 80% of cuBLAS", "bf16": ">= 70% of cuBLAS"}[b["dtype"]]
    ms = res and kernel_ms(res)
    what = "GEMM %d^3 %s%s" % (n, b["dtype"], " (generated kernel)" if "generated" in b["name"] else "")
    report(what, ms, theirs, target)
    if ms and theirs:
        print("  %.1f TFLOP/s, %.0f%% of the baseline" % (2 * n ** 3 / ms / 1e9, 100 * theirs / ms))

for b in [b for b in spec if b["kind"] == "decode"]:
    rt = json.load(open(os.path.join(d, b["artifact"], "runtime.json")))
    weights, per_token = {}, 0
    rs = np.random.default_rng(3)
    for t in rt["tensors"]:
        if t["kind"] != "param" or not t.get("present", True):
            continue  # state, or an optional tensor the artifact was built without
        w = (rs.standard_normal(t["shape"], dtype=np.float32) * 0.02)
        if t["path"].endswith("norm.weight"):
            w = np.ones(t["shape"], np.float32)
        weights[t["path"]] = (t["dtype"], w)
        nbytes = w.size * {"bf16": 2, "f16": 2, "f32": 4}[t["dtype"]]
        # Decode reads one row of the embedding table.
        per_token += nbytes // t["shape"][0] if "embed_tokens" in t["path"] else nbytes
    b["weights"] = os.path.join(data, "llama.safetensors")
    write_safetensors(b["weights"], weights)
    del weights
    files = {"token": npy("token", np.array([17], np.int64)), "pos": npy("pos", np.array(b["position"], np.int64))}
    res = run_linnet(b, inputs_of(b, files), iterations=50)
    if res:
        bound_ms = per_token / HBM_BYTES_PER_S * 1e3
        print("decode, Llama bf16 Hidden %d Layers %d (%.2f GB of weights a token), position %d: %.3f ms "
              "a token (%.0f tokens/s); the HBM bound %.3f ms: %.0f%% of it; target >= 70%%" % (
                  b["defines"]["Hidden"], b["defines"]["Layers"], per_token / 1e9, b["position"], res["wall_ms"], 1e3 / res["wall_ms"], bound_ms,
                  100 * bound_ms / res["wall_ms"]))
    else:
        print("decode: no figure (the run failed)")

"""examples/gcn.ln compiled for the CPU, called through its packed ABI
(linnet_entry_<name>(void **args), docs/runtime-abi.md) with ctypes: the
seed's CSR walkthrough gives [23, 6, 0], and a two-layer GCN on a random
10k-node graph agrees with torch.sparse.mm.

usage: gcn_agree.py LINNET EXAMPLES_DIR WORKDIR
"""
import ctypes
import json
import os
import subprocess
import sys

import numpy as np
import torch

linnet, examples, work = sys.argv[1:4]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ref"))
import safetensors_io  # noqa: E402

In, Hidden, Out = 16, 32, 8
torch.manual_seed(0)
l1, l2 = torch.nn.Linear(In, Hidden), torch.nn.Linear(Hidden, Out)
params = {"conv1.lin.weight": l1.weight, "conv1.lin.bias": l1.bias,
          "conv2.lin.weight": l2.weight, "conv2.lin.bias": l2.bias}
params = {k: v.detach().contiguous() for k, v in params.items()}
safetensors_io.save(params, os.path.join(work, "w.safetensors"))
art = os.path.join(work, "gcn")
subprocess.run([linnet, "build", os.path.join(examples, "gcn.ln"), "-D", f"In={In}", "-D",
                f"Hidden={Hidden}", "-D", f"Out={Out}", "--target", "cpu", "--weights",
                os.path.join(work, "w.safetensors"), "-o", art], check=True)
info = json.load(open(os.path.join(art, "runtime.json")))
lib = ctypes.CDLL(os.path.join(art, "model.so"))

def descriptor(a):
    a = np.ascontiguousarray(a)
    r = a.ndim
    class D(ctypes.Structure):
        _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                    ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * max(r, 1)),
                    ("strides", ctypes.c_int64 * max(r, 1))]
    d = D(a.ctypes.data, a.ctypes.data, 0)
    for i in range(r):
        d.sizes[i] = a.shape[i]
        d.strides[i] = a.strides[i] // a.itemsize
    return d, a

def call(entry, inputs, params, result_shapes):
    keep, ptrs = [], []
    outs = [np.zeros(s, dtype=np.float32) for s in result_shapes]
    tensors = [params[t["path"]] for t in info["tensors"] if t["present"]]
    for a in list(inputs) + tensors + outs:
        d, arr = descriptor(a)
        keep += [d, arr]
        ptrs.append(ctypes.cast(ctypes.pointer(d), ctypes.c_void_p))
    argv = (ctypes.c_void_p * len(ptrs))(*[p.value for p in ptrs])
    getattr(lib, "linnet_entry_" + entry)(argv)
    return outs

params = {k: v.numpy() for k, v in params.items()}

# The seed walkthrough: 3 destinations, row_ptr [0, 2, 3, 3], col_idx [0, 1, 1].
rp, ci = np.array([0, 2, 3, 3], np.int64), np.array([0, 1, 1], np.int64)
x, w = np.array([2, 3], np.float32), np.array([4, 5, 2], np.float32)
(out,) = call("weighted_aggregation", [rp, ci, x, w], params, [(3,)])
print("walkthrough:", out.astype(int).tolist())
assert out.tolist() == [23, 6, 0]

# A random graph with 10k nodes, destination-major CSR.
n, e = 10000, 80000
g = torch.Generator().manual_seed(1)
dst = torch.randint(0, n, (e,), generator=g)
src = torch.randint(0, n, (e,), generator=g)
order = torch.argsort(dst * n + src)
dst, src = dst[order], src[order]
wt = torch.rand(e, generator=g)
row_ptr = torch.zeros(n + 1, dtype=torch.int64)
row_ptr[1:] = torch.cumsum(torch.bincount(dst, minlength=n), 0)
feats = torch.randn(n, In, generator=g)
(got,) = call("forward", [row_ptr.numpy(), src.numpy(), feats.numpy(), wt.numpy()], params,
              [(n, Out)])
A = torch.sparse_coo_tensor(torch.stack([dst, src]), wt, (n, n)).coalesce()
with torch.no_grad():
    h = torch.relu(l1(torch.sparse.mm(A, feats)))
    want = l2(torch.sparse.mm(A, h))
got = torch.from_numpy(got)
rel = ((got - want).abs().max() / want.abs().max()).item()
print(f"gcn 10k nodes, {e} edges: max relative error {rel:.3g}")
assert rel <= 1e-5, rel

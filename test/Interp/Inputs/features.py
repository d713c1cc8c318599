#!/usr/bin/env python3
"""The interpreter on features.ln against numpy references: user reducers
with struct state, triangular/filtered reductions, integer ops (exact),
while/if, state across calls, optional params and sub blocks.

  features.py LINNET FEATURES_LN TMPDIR
"""
import math
import os
import sys

import numpy as np

from interp_util import compare, run, write_safetensors

linnet, model, tmp = sys.argv[1:4]
rs = np.random.RandomState(1)
N = 6


def interp(entry, inputs, weights=None, repeat=1, rels=None, results=1):
    args = ["run", model, "--interpret", "--entry", entry]
    for name, (rp, ci) in (rels or {}).items():
        prp, pci = os.path.join(tmp, name + "-rp.npy"), os.path.join(tmp, name + "-ci.npy")
        np.save(prp, rp)
        np.save(pci, ci)
        args += ["--relation", "%s=%s,%s" % (name, prp, pci)]
    if weights:
        args += ["--weights", weights]
    for name, arr in inputs.items():
        path = os.path.join(tmp, "%s-%s.npy" % (entry, name))
        np.save(path, arr)
        args += ["--input", "%s=%s" % (name, path)]
    outs = [os.path.join(tmp, "%s-out%d.npy" % (entry, i)) for i in range(results)]
    for o in outs:
        args += ["--output", o]
    run(linnet, args + ["--repeat", str(repeat)])
    return np.load(outs[0]) if results == 1 else [np.load(o) for o in outs]


x = rs.randn(N).astype(np.float32)
x64 = x.astype(np.float64)
compare("logsumexp", interp("lse", {"x": x}), np.float32(np.log(np.exp(x64).sum())))
compare("softmax", interp("probs", {"x": x}), (np.exp(x64) / np.exp(x64).sum()).astype(np.float32))
m = rs.randn(5, N).astype(np.float32)
m[2, 4] = m[2, 1] = m[2].max() + 1  # a tie: the lower index wins
compare("argmax reducer", interp("rowargmax", {"x": m}), np.argmax(m, axis=1).astype(np.int64))
compare("prefix sums (j <= i)", interp("prefix", {"x": x}), np.cumsum(x64).astype(np.float32))
sq = rs.randn(N, N).astype(np.float32)
compare("upper triangle (i < j)", interp("upper", {"x": sq}), np.float32(np.triu(sq.astype(np.float64), 1).sum()))
compare("banded max", interp("banded", {"x": x}),
        np.array([x[max(0, i - 2):i + 1].max() for i in range(N)], np.float32))
st = np.stack([m.astype(np.float64).mean(1), m.min(1), m.astype(np.float64).prod(1)], 1).astype(np.float32)
compare("mean, min, prod", interp("stats", {"x": m}), st)
erf = np.vectorize(math.erf)
gelu = 0.5 * x64 * (1 + erf(x64 / math.sqrt(2)))
gelu_t = 0.5 * x64 * (1 + np.tanh(0.7978845608028654 * (x64 + 0.044715 * x64 ** 3)))
compare("gelu, gelu_tanh", interp("acts", {"x": x}), np.stack([gelu, gelu_t]).astype(np.float32))

# Slices, a tuple result (two .npy files), match on literals.
compare("x[::2, :]", interp("evens", {"x": sq}), sq[::2, :])
compare("x[..., N - 1]", interp("lastcol", {"x": sq}), sq[..., N - 1])
compare("x[start:start + 3]", interp("window3", {"x": x, "start": np.array(2, np.int64)}), x[2:5])
top, at = interp("pair", {"x": x}, results=2)
compare("tuple result: max", top, np.float32(x.max()))
compare("tuple result: argmax", at, np.int64(np.argmax(x)))
compare("match on literals", np.array([interp("classify", {"n": np.array(n, np.int64)}) for n in (0, 1, 7)]),
        np.array([10, 20, 30], np.int64))

# Integers: floor division and its remainder (the divisor's sign), wrapping.
a = np.array([7, -7, 7, -7, 2147483647, -2147483648], np.int32)
b = np.array([2, 2, -2, -2, 3, -1], np.int32)
with np.errstate(over="ignore"):
    want = np.stack([a // b, a % b, a * b, a - b]).astype(np.int32)
want[0, 5] = -2147483648  # INT_MIN / -1 wraps
compare("i32 / % * - (floor, wrapping)", interp("intops", {"a": a, "b": b}), want)
i8 = np.array([0, 50, -50, 127, -128, 9], np.int8)
compare("i8 a * 3 + 100 wraps", interp("wrap", {"a": i8}), (i8.astype(np.int64) * 3 + 100).astype(np.int8))
fx = np.array([2.7, -2.7, 0.5, -0.5, 1e6, -3.0], np.float32)
compare("f32 as i32 truncates", interp("trunc", {"x": fx}), np.trunc(fx).astype(np.int32))
compare("while/if (collatz 27)", interp("collatz", {"n": np.array(27, np.int64)}), np.array(111, np.int64))
compare("state across calls (tick x3)", interp("tick", {}, repeat=3), np.array([3], np.int64))

# CSR relations: mean/max/count per destination (row 2 has no edges), and
# a filtered, edge-weighted sum.
rp = np.array([0, 3, 4, 4, 7, 8, 10], np.int64)
ci = np.array([1, 2, 5, 0, 3, 3, 1, 4, 0, 5], np.int64)
xr = rs.randn(N).astype(np.float32)
wr = rs.rand(len(ci)).astype(np.float32)
rows = [ci[rp[d]:rp[d + 1]] for d in range(N)]
want = np.array([[xr[r].astype(np.float64).mean() if len(r) else 0.0, xr[r].max() if len(r) else -np.inf,
                  len(r)] for r in rows], np.float32)
with np.errstate(all="ignore"):
    compare("relation mean, max, count", interp("relstats", {"x": xr}, rels={"g": (rp, ci)}), want)
want = np.array([sum(float(xr[ci[e]]) * float(wr[e]) for e in range(rp[d], rp[d + 1]) if ci[e] != d)
                 for d in range(N)], np.float32)
compare("relation with a filter", interp("relfilter", {"x": xr, "w": wr}, rels={"g": (rp, ci)}), want)

# Optional members: absent, a param present, a sub block present (it
# keeps its own state), an optional sub with a missing tensor is absent.
xb = rs.randn(3, N).astype(np.float32)
empty = os.path.join(tmp, "empty.safetensors")
write_safetensors(empty, {})
compare("members, none present", interp("members", {"x": xb}, empty), xb)
shift, scale = rs.randn(N).astype(np.float32), rs.randn(N).astype(np.float32)
ws = os.path.join(tmp, "shift.safetensors")
write_safetensors(ws, {"shift": shift})
compare("members, shift present", interp("members", {"x": xb}, ws), xb + shift)
wb = os.path.join(tmp, "both.safetensors")
write_safetensors(wb, {"shift": shift, "scaled.scale": scale})
compare("members, shift and scaled present", interp("members", {"x": xb}, wb), (xb + shift) * scale)
compare("optional sub absent", interp("project", {"x": xb}, wb), np.zeros((3, 2), np.float32))
hw, hb = rs.randn(2, N).astype(np.float32), rs.randn(2).astype(np.float32)
wh = os.path.join(tmp, "head.safetensors")
write_safetensors(wh, {"head.weight": hw})
compare("optional sub present, its bias absent", interp("project", {"x": xb}, wh), xb @ hw.T, rtol=1e-5)
write_safetensors(wh, {"head.bias": hb})
compare("optional sub without its required weight is absent", interp("project", {"x": xb}, wh),
        np.zeros((3, 2), np.float32))
write_safetensors(wh, {"head.weight": hw, "head.bias": hb})
compare("optional sub and its bias present", interp("project", {"x": xb}, wh), xb @ hw.T + hb, rtol=1e-5)

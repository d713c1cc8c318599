"""The model zoo (examples/zoo/*.ln) against PyTorch.

Each model here is built from a torch.nn module, or a few lines of
torch.nn.functional where PyTorch has no module (PyG layers are written out
with index_add_/scatter, as PyG computes them). Its random weights are written
to safetensors under the parameter paths the .ln declares, the .ln is built
for the CPU, `linnet run` calls the entry, and every result is held against
the torch reference evaluated in float64 on the same (float32) weights.

usage: zoo.py LINNET ZOO_DIR WORKDIR MODEL [--interpret]

Prints one line per result and exits 1 on a build failure, a run failure or a
disagreement (|got - want| > tol * (1 + |want|)).
"""
import math
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "Numerics", "ref"))
import safetensors_io  # noqa: E402

MODELS = {}


def model(fn):
    MODELS[fn.__name__] = fn
    return fn


def f32(t):
    """Rounds a tensor to float32 (what the weights file holds) and returns it
    as float64, the precision the reference computes in."""
    return t.detach().float().double()


def params_of(module, prefix=""):
    return {prefix + k: v.detach().float() for k, v in module.state_dict().items()}


def randn(*shape):
    return torch.randn(*shape, dtype=torch.float64).float().double()


def csr(dst, src, n_dst):
    """Destination-major CSR of the edges (dst[i] <- src[i]), edges sorted by
    (dst, src). Returns row_ptr, col_idx and the order that sorted them."""
    dst, src = torch.as_tensor(dst), torch.as_tensor(src)
    order = torch.argsort(dst * (int(src.max()) + 1 if len(src) else 1) + src, stable=True)
    row_ptr = torch.zeros(n_dst + 1, dtype=torch.int64)
    row_ptr[1:] = torch.cumsum(torch.bincount(dst, minlength=n_dst), 0)
    return row_ptr, src[order], order


#===------------------------------------------------------------------===#
# Models
#===------------------------------------------------------------------===#

@model
def mlp():
    """Linear -> LayerNorm -> GELU -> Linear (std.nn layers, erf)."""
    In, Hidden, Out, B = 6, 16, 5, 4
    m = nn.Sequential(nn.Linear(In, Hidden), nn.LayerNorm(Hidden), nn.GELU(),
                      nn.Linear(Hidden, Out))
    w = {**params_of(m[0], "fc1."), **params_of(m[1], "norm."), **params_of(m[3], "fc2.")}
    x = randn(B, In)
    want = m.double()(x)
    return dict(defines=dict(In=In, Hidden=Hidden, Out=Out), entry="forward",
                inputs=[("x", x)], weights=w, want=[want])


@model
def swiglu():
    """RMSNorm + SwiGLU feed-forward with a residual (Llama's MLP)."""
    Hidden, Inter, S = 8, 12, 5
    gate, up, down = nn.Linear(Hidden, Inter, False), nn.Linear(Hidden, Inter, False), \
        nn.Linear(Inter, Hidden, False)
    norm_w = torch.randn(Hidden)
    w = {**params_of(gate, "gate_proj."), **params_of(up, "up_proj."),
         **params_of(down, "down_proj."), "norm.weight": norm_w}
    x = randn(S, Hidden)
    gate, up, down = gate.double(), up.double(), down.double()
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * f32(norm_w)
    want = x + down(F.silu(gate(h)) * up(h))
    return dict(defines=dict(Hidden=Hidden, Inter=Inter), entry="forward",
                inputs=[("x", x)], weights=w, want=[want])


@model
def encoder():
    """nn.TransformerEncoderLayer with a key padding mask."""
    Dim, Heads, Ffn, B, S = 8, 2, 16, 3, 5
    m = nn.TransformerEncoderLayer(Dim, Heads, Ffn, dropout=0.0, batch_first=True)
    w = params_of(m)
    x = randn(B, S, Dim)
    pad = torch.zeros(B, S, dtype=torch.bool)
    pad[0, 3:] = True      # sequence 0 has 3 tokens
    pad[2, 1:] = True      # sequence 2 has 1
    # Training mode with dropout 0: the math path (the eval fast path returns
    # nested tensors with padded rows zeroed).
    want = m.double().train()(x, src_key_padding_mask=pad)
    return dict(defines=dict(Dim=Dim, Heads=Heads, Ffn=Ffn), entry="forward",
                inputs=[("x", x), ("pad", pad.numpy())], weights=w, want=[want])


@model
def conv1d():
    """nn.Conv1d strided (stride 2, padding 1) then dilated (dilation 2, padding 2)."""
    Cin, C1, C2, K, B, L = 3, 4, 5, 3, 2, 11
    c1 = nn.Conv1d(Cin, C1, K, stride=2, padding=1)
    c2 = nn.Conv1d(C1, C2, K, padding=2, dilation=2)
    w = {**params_of(c1, "conv1."), **params_of(c2, "conv2.")}
    x = randn(B, Cin, L)
    want = c2.double()(torch.relu(c1.double()(x)))
    return dict(defines=dict(Cin=Cin, C1=C1, C2=C2, K=K), entry="forward",
                inputs=[("x", x)], weights=w, want=[want])


@model
def cnn():
    """Conv2d, ReLU, MaxPool2d, Conv2d, ReLU, AdaptiveAvgPool2d, Linear."""
    Cin, C1, C2, Classes, B, H, W = 3, 4, 6, 5, 2, 8, 6
    m = nn.Sequential(nn.Conv2d(Cin, C1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(C1, C2, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(C2, Classes))
    w = {**params_of(m[0], "conv1."), **params_of(m[3], "conv2."), **params_of(m[7], "fc.")}
    x = randn(B, Cin, H, W)
    want = m.double()(x)
    return dict(defines=dict(Cin=Cin, C1=C1, C2=C2, Classes=Classes), entry="forward",
                inputs=[("x", x)], weights=w, want=[want])


@model
def gru():
    """nn.GRU over a sequence: all hidden states and the last."""
    In, Hidden, B, S = 4, 6, 2, 5
    m = nn.GRU(In, Hidden, batch_first=True)
    w = params_of(m)
    x, h0 = randn(B, S, In), randn(B, Hidden)
    out, hn = m.double()(x, h0[None])
    return dict(defines=dict(In=In, Hidden=Hidden), entry="forward",
                inputs=[("x", x), ("h0", h0)], weights=w, want=[out, hn[0]])


@model
def lstm():
    """nn.LSTM (sequence first): output, last hidden and cell states."""
    In, Hidden, S, B = 4, 5, 6, 2
    m = nn.LSTM(In, Hidden)
    w = params_of(m)
    x, h0, c0 = randn(S, B, In), randn(B, Hidden), randn(B, Hidden)
    out, (hn, cn) = m.double()(x, (h0[None], c0[None]))
    return dict(defines=dict(In=In, Hidden=Hidden), entry="forward",
                inputs=[("x", x), ("h0", h0), ("c0", c0)], weights=w,
                want=[out, hn[0], cn[0]])


@model
def ssm():
    """S4D-real diagonal SSM; the reference runs the recurrence step by step."""
    Channels, State, B, L = 3, 4, 2, 9
    w = {"log_dt": torch.rand(Channels) * 2 - 3, "log_a": torch.randn(Channels, State) * 0.5,
         "b": torch.randn(Channels, State), "c": torch.randn(Channels, State),
         "d": torch.randn(Channels)}
    p = {k: f32(v) for k, v in w.items()}
    u = randn(B, Channels, L)
    a = -torch.exp(p["log_a"])
    dta = torch.exp(p["log_dt"])[:, None] * a
    abar, bbar = torch.exp(dta), (torch.exp(dta) - 1) / a * p["b"]
    x = torch.zeros(B, Channels, State, dtype=torch.float64)
    ys = []
    for t in range(L):
        x = abar * x + bbar * u[:, :, t, None]
        ys.append((x * p["c"]).sum(-1) + p["d"] * u[:, :, t])
    return dict(defines=dict(Channels=Channels, State=State), entry="forward",
                inputs=[("u", u)], weights=w, want=[torch.stack(ys, -1)])


#===------------------------------------------------------------------===#
# Driver
#===------------------------------------------------------------------===#

def main():
    linnet, zoo, work, name = sys.argv[1:5]
    interpret = "--interpret" in sys.argv[5:]
    torch.manual_seed(0)
    spec = MODELS[name]()
    os.makedirs(work, exist_ok=True)
    ln = os.path.join(zoo, spec.get("file", name + ".ln"))
    defs = [a for k, v in spec["defines"].items() for a in ("-D", f"{k}={v}")]
    wpath = os.path.join(work, "w.safetensors")
    safetensors_io.save(spec["weights"], wpath)
    args = []
    for iname, val in spec.get("inputs", []):
        a = val.detach().numpy() if isinstance(val, torch.Tensor) else np.asarray(val)
        if a.dtype == np.float64:
            a = a.astype(np.float32)
        p = os.path.join(work, f"in-{iname}.npy")
        np.save(p, a)
        args += ["--input", f"{iname}={p}"]
    for rname, rp, ci in spec.get("relations", []):
        p1, p2 = (os.path.join(work, f"rel-{rname}-{k}.npy") for k in ("rp", "ci"))
        np.save(p1, np.asarray(rp, np.int64))
        np.save(p2, np.asarray(ci, np.int64))
        args += ["--relation", f"{rname}={p1},{p2}"]

    if interpret:
        cmd = [linnet, "run", ln, "--interpret", *defs]
    else:
        art = os.path.join(work, "artifact")
        b = subprocess.run([linnet, "build", ln, "--target", "cpu", *defs, "--weights", wpath,
                            "-o", art], capture_output=True, text=True)
        if b.returncode != 0:
            sys.stdout.write(b.stdout + b.stderr)
            print(f"zoo: {name}: build failed (exit {b.returncode})")
            return 1
        cmd = [linnet, "run", art]
    wants = spec["want"]
    outs = [os.path.join(work, f"out{i}.npy") for i in range(len(wants))]
    r = subprocess.run([*cmd, "--weights", wpath, "--entry", spec["entry"], *args,
                        "--repeat", str(spec.get("repeat", 1)),
                        *[x for o in outs for x in ("--output", o)]],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout + r.stderr)
        print(f"zoo: {name}: run failed (exit {r.returncode})")
        return 1
    tol = spec.get("tol", 1e-5)
    status = 0
    for i, (o, want) in enumerate(zip(outs, wants)):
        got = np.load(o)
        want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
        tag = f"zoo: {name}: {spec['entry']}[{i}]"
        if got.shape != want.shape:
            print(f"{tag}: shape {got.shape}, torch gives {want.shape}")
            status = 1
            continue
        if not np.issubdtype(want.dtype, np.floating):
            ok = np.array_equal(got, want)
            print(f"{tag}: {'ok' if ok else 'MISMATCH'} shape {got.shape} exact")
        else:
            g, wv = got.astype(np.float64), want.astype(np.float64)
            err = np.abs(g - wv)
            ok = bool(np.all(err <= tol * (1 + np.abs(wv))))
            print(f"{tag}: {'ok' if ok else 'MISMATCH'} shape {got.shape} "
                  f"max abs err {float(err.max()) if err.size else 0.0:.2e} "
                  f"(max |want| {float(np.abs(wv).max()) if wv.size else 0.0:.2e})")
        if not ok:
            print("got: ", got.ravel()[:12], "\nwant:", want.ravel()[:12])
            status = 1
    if status == 0:
        print(f"zoo: {name}: agrees with torch")
    return status


if __name__ == "__main__":
    sys.exit(main())

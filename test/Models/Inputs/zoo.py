"""The model zoo (examples/zoo/*.ln) against PyTorch.

Each model here is built from a torch.nn module, or a few lines of
torch.nn.functional where PyTorch has no module (PyG layers are written out
with index_add_/scatter, as PyG computes them). Its random weights are written
to safetensors under the parameter paths the .ln declares, the .ln is built
for the CPU, `linnet run` calls the entry, and every result is held against
the torch reference evaluated in float64 on the same weights (float32 ones
unless the model asks for another dtype). With --interpret the entry runs in
the reference interpreter instead of a build (`linnet run MODEL.ln
--interpret`): where a known gap stops the build, it tells a wrong model from
a wrong compiler.

usage: zoo.py LINNET ZOO_DIR WORKDIR MODEL|all [--interpret | BUILD FLAGS...]

BUILD FLAGS replace the build's `--target cpu` (`--target cuda --emulate`:
the CUDA target's kernels, run on the CPU).

Prints one line per result and exits 1 on a build failure, a run failure or a
disagreement (|got - want| > tol * (1 + |want|)).
"""
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Numerics", "ref"))
import safetensors_io  # noqa: E402

warnings.filterwarnings("ignore", message="scatter_reduce")


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


def rms(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


@model
def decoder():
    """Mistral-style layer: GQA, RoPE, sliding window, KV cache over two calls."""
    Hidden, Heads, KvHeads, Inter, MaxSeq, Window, S = 16, 4, 2, 24, 16, 5, 4
    Head = Hidden // Heads
    lin = lambda i, o: nn.Linear(i, o, bias=False)
    mods = {"self_attn.q_proj": lin(Hidden, Hidden), "self_attn.k_proj": lin(Hidden, KvHeads * Head),
            "self_attn.v_proj": lin(Hidden, KvHeads * Head), "self_attn.o_proj": lin(Hidden, Hidden),
            "mlp.gate_proj": lin(Hidden, Inter), "mlp.up_proj": lin(Hidden, Inter),
            "mlp.down_proj": lin(Inter, Hidden)}
    w = {k + ".weight": v.weight.detach().clone() for k, v in mods.items()}
    w["input_layernorm.weight"] = torch.randn(Hidden)
    w["post_attention_layernorm.weight"] = torch.randn(Hidden)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, Head, 2, dtype=torch.float64) / Head))
    w["self_attn.inv_freq"] = inv_freq.float()
    p = {k: f32(v) for k, v in w.items()}
    L = lambda name, t: t @ p[name + ".weight"].T

    # The layer over the whole sequence (the chunk fed twice: positions 0 .. 2S).
    x = randn(S, Hidden)
    xs = torch.cat([x, x])
    n = 2 * S
    h = rms(xs, p["input_layernorm.weight"], 1e-5)
    q = L("self_attn.q_proj", h).view(n, Heads, Head).transpose(0, 1)
    k = L("self_attn.k_proj", h).view(n, KvHeads, Head).transpose(0, 1)
    v = L("self_attn.v_proj", h).view(n, KvHeads, Head).transpose(0, 1)
    freqs = torch.outer(torch.arange(n, dtype=torch.float64), p["self_attn.inv_freq"])
    emb = torch.cat([freqs, freqs], -1)
    rot = lambda t: torch.cat([-t[..., Head // 2:], t[..., :Head // 2]], -1)
    q = q * emb.cos() + rot(q) * emb.sin()
    k = k * emb.cos() + rot(k) * emb.sin()
    k = k.repeat_interleave(Heads // KvHeads, 0)
    v = v.repeat_interleave(Heads // KvHeads, 0)
    i, j = torch.arange(n)[:, None], torch.arange(n)[None]
    mask = (j <= i) & (i - j < Window)
    scores = (q @ k.transpose(1, 2)) / math.sqrt(Head)
    att = torch.softmax(scores.masked_fill(~mask, float("-inf")), -1) @ v
    hid = xs + L("self_attn.o_proj", att.transpose(0, 1).reshape(n, Hidden))
    m = rms(hid, p["post_attention_layernorm.weight"], 1e-5)
    out = hid + L("mlp.down_proj", F.silu(L("mlp.gate_proj", m)) * L("mlp.up_proj", m))
    return dict(defines=dict(Hidden=Hidden, Heads=Heads, KvHeads=KvHeads, Inter=Inter,
                             MaxSeq=MaxSeq, Window=Window),
                entry="forward", inputs=[("x", x)], weights=w, repeat=2, want=[out[S:]])


@model
def moe():
    """Mixtral's sparse MoE block: top-k routing, renormalized weights, SwiGLU experts."""
    Hidden, Inter, Experts, TopK, S = 8, 12, 4, 2, 6

    class Expert(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1, self.w2 = nn.Linear(Hidden, Inter, False), nn.Linear(Inter, Hidden, False)
            self.w3 = nn.Linear(Hidden, Inter, False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class SparseMoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = nn.Linear(Hidden, Experts, False)
            self.experts = nn.ModuleList(Expert() for _ in range(Experts))

        def forward(self, x):  # transformers' MixtralSparseMoeBlock, without the token gather
            weights = torch.softmax(self.gate(x), -1)
            weights, chosen = torch.topk(weights, TopK, -1)
            weights = weights / weights.sum(-1, keepdim=True)
            out = torch.zeros_like(x)
            for e, expert in enumerate(self.experts):
                tok, slot = torch.where(chosen == e)
                out.index_add_(0, tok, weights[tok, slot, None] * expert(x[tok]))
            return out

    m = SparseMoE()
    x = randn(S, Hidden)
    return dict(defines=dict(Hidden=Hidden, Inter=Inter, Experts=Experts, TopK=TopK),
                entry="forward", inputs=[("x", x)], weights=params_of(m), want=[m.double()(x)])


@model
def vit():
    """A two-block vision transformer in timm's layout."""
    Chans, Image, Patch, Dim, Heads, MlpHidden, Depth, Classes, B = 3, 8, 4, 8, 2, 16, 2, 5, 2
    Grid, Head = Image // Patch, Dim // Heads

    class Attention(nn.Module):  # timm.models.vision_transformer.Attention
        def __init__(self):
            super().__init__()
            self.qkv, self.proj = nn.Linear(Dim, 3 * Dim), nn.Linear(Dim, Dim)

        def forward(self, x):
            b, n, c = x.shape
            q, k, v = self.qkv(x).reshape(b, n, 3, Heads, Head).permute(2, 0, 3, 1, 4)
            attn = ((q @ k.transpose(-2, -1)) * Head ** -0.5).softmax(-1)
            return self.proj((attn @ v).transpose(1, 2).reshape(b, n, c))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.attn = nn.LayerNorm(Dim, eps=1e-6), Attention()
            self.norm2 = nn.LayerNorm(Dim, eps=1e-6)
            self.mlp = nn.Sequential()
            self.mlp.fc1, self.mlp.act, self.mlp.fc2 = \
                nn.Linear(Dim, MlpHidden), nn.GELU(), nn.Linear(MlpHidden, Dim)

        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch_embed = nn.Module()
            self.patch_embed.proj = nn.Conv2d(Chans, Dim, Patch, stride=Patch)
            self.cls_token = nn.Parameter(torch.randn(1, 1, Dim))
            self.pos_embed = nn.Parameter(torch.randn(1, Grid * Grid + 1, Dim))
            self.blocks = nn.Sequential(*[Block() for _ in range(Depth)])
            self.norm, self.head = nn.LayerNorm(Dim, eps=1e-6), nn.Linear(Dim, Classes)

        def forward(self, x):
            x = self.patch_embed.proj(x).flatten(2).transpose(1, 2)
            x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], 1) + self.pos_embed
            return self.head(self.norm(self.blocks(x))[:, 0])

    m = ViT()
    for n_, p_ in m.named_parameters():  # LayerNorm's default ones/zeros test nothing
        if "norm" in n_:
            p_.data.normal_()
    x = randn(B, Chans, Image, Image)
    return dict(defines=dict(Chans=Chans, Image=Image, Patch=Patch, Dim=Dim, Heads=Heads,
                             MlpHidden=MlpHidden, Depth=Depth, Classes=Classes),
                entry="forward", inputs=[("x", x)], weights=params_of(m), want=[m.double()(x)])


def scatter_mean(msg, dst, n):
    """PyG's mean aggregation: a destination without messages gets 0."""
    total = torch.zeros(n, msg.shape[1], dtype=msg.dtype).index_add_(0, dst, msg)
    count = torch.zeros(n, dtype=msg.dtype).index_add_(0, dst, torch.ones_like(dst, dtype=msg.dtype))
    return total / count.clamp(min=1)[:, None]


@model
def rgcn():
    """Two RGCNConv layers (mean per relation, root weight, bias); isolated nodes."""
    In, Hidden, Out, Relations, N, E = 4, 6, 3, 3, 8, 16
    dst = torch.randint(0, N - 2, (E,))          # nodes N-2, N-1: no in-edges
    src = torch.randint(0, N, (E,))
    etype = torch.randint(0, Relations, (E,))
    convs = {}
    for name, (i, o) in {"conv1": (In, Hidden), "conv2": (Hidden, Out)}.items():
        convs[name] = dict(weight=torch.randn(Relations, i, o) / i ** 0.5,
                           root=torch.randn(i, o) / i ** 0.5, bias=torch.randn(o))
    w = {f"{c}.{k}": v for c, d in convs.items() for k, v in d.items()}

    def conv(p, x):  # torch_geometric.nn.RGCNConv.forward, aggr="mean"
        out = x @ f32(p["root"]) + f32(p["bias"])
        for r in range(Relations):
            m = etype == r
            out = out + scatter_mean(x[src[m]] @ f32(p["weight"][r]), dst[m], N)
        return out

    x = randn(N, In)
    want = conv(convs["conv2"], torch.relu(conv(convs["conv1"], x)))
    rp, ci, order = csr(dst, src, N)
    return dict(defines=dict(In=In, Hidden=Hidden, Out=Out, Relations=Relations),
                entry="forward", relations=[("g", rp, ci)],
                inputs=[("etype", etype[order]), ("x", x)], weights=w, want=[want])


@model
def gat():
    """Two GATConv layers (heads concatenated, ELU between), self-loops in the graph."""
    In, Hidden, Heads, Out, N, E = 5, 4, 2, 3, 9, 20
    src, dst = torch.randint(0, N, (E,)), torch.randint(0, N, (E,))
    keep = src != dst                            # GATConv: remove_self_loops, add_self_loops
    src = torch.cat([src[keep], torch.arange(N)])
    dst = torch.cat([dst[keep], torch.arange(N)])
    layers = {"conv1": (In, Heads, Hidden), "conv2": (Heads * Hidden, 1, Out)}
    w = {}
    for name, (i, h, c) in layers.items():
        w[f"{name}.lin.weight"] = torch.randn(h * c, i) / i ** 0.5
        w[f"{name}.att_src"] = torch.randn(1, h, c)
        w[f"{name}.att_dst"] = torch.randn(1, h, c)
        w[f"{name}.bias"] = torch.randn(h * c)

    def conv(name, x):  # torch_geometric.nn.GATConv.forward, concat=True
        i, h, c = layers[name]
        hx = (x @ f32(w[f"{name}.lin.weight"]).T).view(N, h, c)
        a_s = (hx * f32(w[f"{name}.att_src"])).sum(-1)
        a_d = (hx * f32(w[f"{name}.att_dst"])).sum(-1)
        e = F.leaky_relu(a_s[src] + a_d[dst], 0.2)
        emax = torch.full((N, h), -math.inf, dtype=e.dtype).scatter_reduce(
            0, dst[:, None].expand(-1, h), e, "amax")
        p = torch.exp(e - emax[dst])
        den = torch.zeros(N, h, dtype=e.dtype).index_add_(0, dst, p)
        alpha = p / den[dst]
        out = torch.zeros(N, h, c, dtype=e.dtype).index_add_(0, dst, alpha[..., None] * hx[src])
        return out.reshape(N, h * c) + f32(w[f"{name}.bias"])

    x = randn(N, In)
    want = conv("conv2", F.elu(conv("conv1", x)))
    rp, ci, _ = csr(dst, src, N)
    return dict(defines=dict(In=In, Hidden=Hidden, Heads=Heads, Out=Out), entry="forward",
                relations=[("g", rp, ci)], inputs=[("x", x)], weights=w, want=[want])


@model
def edgeconv():
    """EdgeConv (max over a k-NN graph of an MLP of [x_i, x_j - x_i]), global max pool."""
    Feat, Hidden, Classes, B, P, K = 3, 8, 4, 2, 6, 3
    nn_ = nn.Sequential(nn.Linear(2 * Feat, Hidden), nn.ReLU(), nn.Linear(Hidden, Hidden))
    head = nn.Linear(Hidden, Classes)
    w = {**params_of(nn_[0], "conv.lin1."), **params_of(nn_[2], "conv.lin2."),
         **params_of(head, "head.")}
    pos = randn(B, P, Feat)
    # knn_graph(pos, K, batch, loop=False): edges j -> i for the K nearest j of i.
    d = torch.cdist(pos, pos) + torch.eye(P, dtype=pos.dtype) * 1e9
    nbr = d.topk(K, -1, largest=False).indices                       # [B, P, K]
    dst = (torch.arange(B)[:, None, None] * P + torch.arange(P)[None, :, None]).expand(B, P, K)
    src = torch.arange(B)[:, None, None] * P + nbr
    dst, src = dst.reshape(-1), src.reshape(-1)
    x = pos.reshape(B * P, Feat)
    msg = nn_.double()(torch.cat([x[dst], x[src] - x[dst]], -1))
    h = torch.full((B * P, Hidden), -math.inf, dtype=msg.dtype).scatter_reduce(
        0, dst[:, None].expand(-1, Hidden), msg, "amax")
    want = head.double()(h.view(B, P, Hidden).max(1).values)
    rp, ci, _ = csr(dst, src, B * P)
    return dict(defines=dict(Feat=Feat, Hidden=Hidden, Classes=Classes), entry="forward",
                relations=[("g", rp, ci)], inputs=[("pos", pos)], weights=w, want=[want])


def knn_graph(pos, k, r=None):
    """torch_cluster's knn_graph(loop=False) / radius_graph(r, loop=False,
    max_num_neighbors=k) as (dst, src), neighbours nearest first (ties by
    index: the stable sort of the f64 distances)."""
    d = torch.cdist(pos.double(), pos.double()).fill_diagonal_(math.inf)
    order = torch.sort(d, dim=-1, stable=True)
    dist, nbr = order.values[:, :k], order.indices[:, :k]
    keep = torch.isfinite(dist) if r is None else dist <= r
    dst = torch.arange(pos.shape[0])[:, None].expand_as(nbr)
    return dst[keep], nbr[keep]


@model
def dgcnn():
    """DynamicEdgeConv: the k-NN graph built in the model from the points, then EdgeConv."""
    Feat, Hidden, Classes, P, K = 3, 8, 4, 40, 6
    nn_ = nn.Sequential(nn.Linear(2 * Feat, Hidden), nn.ReLU(), nn.Linear(Hidden, Hidden))
    head = nn.Linear(Hidden, Classes)
    w = {**params_of(nn_[0], "conv.lin1."), **params_of(nn_[2], "conv.lin2."),
         **params_of(head, "head.")}
    x = randn(P, Feat)
    dst, src = knn_graph(x, K)
    msg = nn_.double()(torch.cat([x[dst], x[src] - x[dst]], -1))
    h = torch.full((P, Hidden), -math.inf, dtype=msg.dtype).scatter_reduce(
        0, dst[:, None].expand(-1, Hidden), msg, "amax")
    want = head.double()(h.max(0).values)
    return dict(defines=dict(Feat=Feat, Hidden=Hidden, Classes=Classes, K=K), entry="forward",
                inputs=[("pos", x)], weights=w, want=[want])


@model
def schnet():
    """A SchNet interaction block on the radius graph it builds from the atoms' positions."""
    Hidden, Filters, Gaussians, N, K, cutoff = 8, 6, 5, 30, 12, 0.45
    mlp1, mlp2 = nn.Linear(Gaussians, Filters), nn.Linear(Filters, Filters)
    lin1, lin2, lin3 = nn.Linear(Hidden, Filters, bias=False), nn.Linear(Filters, Hidden), nn.Linear(Hidden, Hidden)
    w = {**params_of(mlp1, "mlp1."), **params_of(mlp2, "mlp2."), **params_of(lin1, "lin1."),
         **params_of(lin2, "lin2."), **params_of(lin3, "lin3.")}
    x = randn(N, Hidden)
    pos = torch.rand(N, 3, dtype=torch.float64).float().double()
    dst, src = knn_graph(pos, K, r=torch.tensor(cutoff, dtype=torch.float32).double())
    ssp = lambda v: F.softplus(v) - math.log(2.0)
    c = float(np.float32(cutoff))
    mu = torch.linspace(0, c, Gaussians, dtype=torch.float64)
    step = c / (Gaussians - 1)
    d = (pos[dst] - pos[src]).norm(dim=-1)
    rbf = torch.exp(-(0.5 / step ** 2) * (d[:, None] - mu) ** 2)
    W = mlp2.double()(ssp(mlp1.double()(rbf)))
    msg = lin1.double()(x)[src] * W
    h = torch.zeros(N, Filters, dtype=torch.float64).index_add_(0, dst, msg)
    want = x + lin3.double()(ssp(lin2.double()(h)))
    return dict(defines=dict(Hidden=Hidden, Filters=Filters, Gaussians=Gaussians, K=K), entry="forward",
                inputs=[("x", x), ("pos", pos), ("cutoff", np.float32(cutoff))], weights=w, want=[want])


@model
def resnet():
    """torchvision BasicBlocks in eval mode (batch-norm buffers, optional downsample),
    loaded through a binding manifest with torchvision's names."""
    C, B, H, W = 3, 2, 7, 6

    class BasicBlock(nn.Module):  # torchvision.models.resnet.BasicBlock
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None if stride == 1 and cin == cout else nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
            return torch.relu(out + (x if self.downsample is None else self.downsample(x)))

    m = nn.Module()
    m.layer1 = nn.Sequential(BasicBlock(C, C, 1))
    m.layer2 = nn.Sequential(BasicBlock(C, 2 * C, 2))
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.weight.data.normal_()
            mod.bias.data.normal_()
            mod.running_mean.normal_()
            mod.running_var.uniform_(0.5, 2.0)
            mod.num_batches_tracked.fill_(7)
    w = {k: (v if v.dtype == torch.int64 else v.float()) for k, v in m.state_dict().items()}
    m = m.double().eval()
    x = randn(B, C, H, W)
    want = m.layer2(m.layer1(x))
    return dict(defines=dict(C=C), entry="forward", inputs=[("x", x)], weights=w,
                binding="resnet.binding.json", want=[want])


@model
def t5():
    """A T5 encoder block: relative position buckets (log, casts), unscaled attention."""
    Dim, Heads, DKv, Ff, NumBuckets, MaxDistance, S = 8, 2, 3, 12, 8, 16, 10
    lin = lambda i, o: nn.Linear(i, o, bias=False)
    mods = {"attn.q": lin(Dim, Heads * DKv), "attn.k": lin(Dim, Heads * DKv),
            "attn.v": lin(Dim, Heads * DKv), "attn.o": lin(Heads * DKv, Dim),
            "ff.wi": lin(Dim, Ff), "ff.wo": lin(Ff, Dim)}
    w = {k + ".weight": v.weight.detach().clone() for k, v in mods.items()}
    w["attn.relative_attention_bias.weight"] = torch.randn(NumBuckets, Heads)
    w["attn_norm.weight"] = torch.randn(Dim)
    w["ff_norm.weight"] = torch.randn(Dim)
    p = {k: f32(v) for k, v in w.items()}
    L = lambda name, t: t @ p[name + ".weight"].T

    def bucket(relative_position):  # transformers' T5Attention._relative_position_bucket
        num_buckets, max_exact = NumBuckets // 2, NumBuckets // 4
        buckets = (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
        is_small = relative_position < max_exact
        large = max_exact + (torch.log(relative_position.float() / max_exact)
                             / math.log(MaxDistance / max_exact)
                             * (num_buckets - max_exact)).to(torch.long)
        large = torch.min(large, torch.full_like(large, num_buckets - 1))
        return buckets + torch.where(is_small, relative_position, large)

    x = randn(S, Dim)
    pos = torch.arange(S)
    bias = p["attn.relative_attention_bias.weight"][bucket(pos[None] - pos[:, None])]  # [i, j, h]
    h = rms(x, p["attn_norm.weight"], 1e-6)
    q, k, v = (L(f"attn.{n}", h).view(S, Heads, DKv).transpose(0, 1) for n in "qkv")
    scores = q @ k.transpose(1, 2) + bias.permute(2, 0, 1)
    ctx = (torch.softmax(scores, -1) @ v).transpose(0, 1).reshape(S, Heads * DKv)
    hid = x + L("attn.o", ctx)
    f = L("ff.wo", torch.relu(L("ff.wi", rms(hid, p["ff_norm.weight"], 1e-6))))
    return dict(defines=dict(Dim=Dim, Heads=Heads, DKv=DKv, Ff=Ff, NumBuckets=NumBuckets,
                             MaxDistance=MaxDistance),
                entry="forward", inputs=[("x", x)], weights=w, want=[hid + f])


@model
def fasttext():
    """nn.EmbeddingBag(mode="mean") over offsets (one bag empty), then nn.Linear."""
    Vocab, Dim, Classes = 20, 6, 3
    m = nn.Module()
    m.embedding, m.fc = nn.EmbeddingBag(Vocab, Dim, mode="mean"), nn.Linear(Dim, Classes)
    ids = torch.randint(0, Vocab, (11,))
    offsets = torch.tensor([0, 4, 4, 5, 9])      # bag 1 is empty
    m = m.double()
    want = m.fc(m.embedding(ids, offsets))
    row_ptr = torch.cat([offsets, torch.tensor([len(ids)])])
    return dict(defines=dict(Vocab=Vocab, Dim=Dim, Classes=Classes), entry="forward",
                inputs=[("ids", ids)], relations=[("bags", row_ptr, torch.arange(len(ids)))],
                weights=params_of(m), want=[want])


@model
def gin():
    """Two GINConv(train_eps=True) layers, global_add_pool over three graphs, a head."""
    In, Hidden, Classes = 4, 8, 3
    sizes = [4, 1, 5]                            # the second graph: one node, no edges
    starts = [0, 4, 5]
    src, dst = [], []
    for g, (st, n) in enumerate(zip(starts, sizes)):
        if n > 1:
            e = torch.randint(0, n, (2, 2 * n))
            src.append(e[0] + st)
            dst.append(e[1] + st)
    src, dst = torch.cat(src), torch.cat(dst)
    N = sum(sizes)
    convs = {"conv1": (In, Hidden), "conv2": (Hidden, Hidden)}
    mlps = {c: nn.Sequential(nn.Linear(i, o), nn.ReLU(), nn.Linear(o, o)) for c, (i, o) in convs.items()}
    eps = {c: torch.randn(()) for c in convs}
    head = nn.Linear(Hidden, Classes)
    w = {**params_of(head, "head.")}
    for c in convs:
        w.update({**params_of(mlps[c][0], c + ".lin1."), **params_of(mlps[c][2], c + ".lin2."),
                  c + ".eps": eps[c]})

    def conv(c, x):  # torch_geometric.nn.GINConv.forward, aggr="add"
        agg = torch.zeros_like(x).index_add_(0, dst, x[src])
        return mlps[c].double()((1 + f32(eps[c])) * x + agg)

    x = randn(N, In)
    h = conv("conv2", torch.relu(conv("conv1", x)))
    batch = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    pooled = torch.zeros(len(sizes), Hidden, dtype=h.dtype).index_add_(0, batch, h)
    want = head.double()(pooled)
    rp, ci, _ = csr(dst, src, N)
    graphs = (torch.tensor([0] + list(np.cumsum(sizes))), torch.arange(N))
    return dict(defines=dict(In=In, Hidden=Hidden, Classes=Classes), entry="forward",
                relations=[("g", rp, ci), ("graphs", *graphs)], inputs=[("x", x)],
                weights=w, want=[want])


@model
def decoder_xattn():
    """nn.TransformerDecoderLayer (norm_first, GELU): causal self-attention,
    cross-attention to a memory of another length with a key padding mask."""
    Dim, Heads, Ffn, B, Tgt, Mem = 8, 2, 16, 2, 4, 6
    m = nn.TransformerDecoderLayer(Dim, Heads, Ffn, dropout=0.0, activation="gelu",
                                   batch_first=True, norm_first=True)
    w = params_of(m)
    tgt, memory = randn(B, Tgt, Dim), randn(B, Mem, Dim)
    pad = torch.zeros(B, Mem, dtype=torch.bool)
    pad[1, 2:] = True
    causal = nn.Transformer.generate_square_subsequent_mask(Tgt).double()
    want = m.double().train()(tgt, memory, tgt_mask=causal, memory_key_padding_mask=pad)
    return dict(defines=dict(Dim=Dim, Heads=Heads, Ffn=Ffn), entry="forward",
                inputs=[("tgt", tgt), ("memory", memory), ("mem_pad", pad.numpy())],
                weights=w, want=[want])


@model
def posenc():
    """nn.Embedding * sqrt(Dim) + sinusoidal positions (the PyTorch tutorial's
    PositionalEncoding), nn.LayerNorm."""
    Vocab, Dim, S = 11, 6, 7
    m = nn.Module()
    m.embedding, m.norm = nn.Embedding(Vocab, Dim), nn.LayerNorm(Dim)
    m.norm.weight.data.normal_()
    m.norm.bias.data.normal_()
    w = params_of(m)
    ids = torch.randint(0, Vocab, (S,))
    m = m.double()
    position = torch.arange(S, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, Dim, 2, dtype=torch.float64) * (-math.log(10000.0) / Dim))
    pe = torch.zeros(S, Dim, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    want = m.norm(m.embedding(ids) * math.sqrt(Dim) + pe)
    return dict(defines=dict(Vocab=Vocab, Dim=Dim), entry="forward", inputs=[("ids", ids)],
                weights=w, want=[want])


@model
def mobilenet():
    """A MobileNetV3 inverted residual: expansion, depthwise conv, squeeze-excitation."""
    C, Expanded, Squeeze, B, H, W = 3, 8, 4, 2, 5, 6
    m = nn.Module()
    m.expand = nn.Conv2d(C, Expanded, 1)
    m.depthwise = nn.Conv2d(Expanded, Expanded, 3, padding=1, groups=Expanded)
    m.se = nn.Module()
    m.se.fc1, m.se.fc2 = nn.Conv2d(Expanded, Squeeze, 1), nn.Conv2d(Squeeze, Expanded, 1)
    m.project = nn.Conv2d(Expanded, C, 1)
    w = params_of(m)
    m = m.double()
    x = randn(B, C, H, W)
    d = F.hardswish(m.depthwise(F.hardswish(m.expand(x))))
    # torchvision.ops.SqueezeExcitation(activation=ReLU, scale_activation=Hardsigmoid)
    scale = F.hardsigmoid(m.se.fc2(torch.relu(m.se.fc1(F.adaptive_avg_pool2d(d, 1)))))
    want = x + m.project(d * scale)
    return dict(defines=dict(C=C, Expanded=Expanded, Squeeze=Squeeze), entry="forward",
                inputs=[("x", x)], weights=w, want=[want])


@model
def charrnn():
    """Greedy generation with nn.Embedding, nn.GRUCell, nn.Linear; two calls, the
    hidden state carried between them."""
    Vocab, Dim, Hidden, Steps = 12, 5, 8, 6
    m = nn.Module()
    m.embed, m.cell, m.head = nn.Embedding(Vocab, Dim), nn.GRUCell(Dim, Hidden), nn.Linear(Hidden, Vocab)
    w = params_of(m)
    m = m.double()
    start = torch.tensor([3])
    h = torch.zeros(1, Hidden, dtype=torch.float64)
    for _ in range(2):
        tok, out, margins = start, [], []
        for _ in range(Steps):
            h = m.cell(m.embed(tok), h)
            logits = m.head(h)[0]
            top = logits.topk(2).values
            margins.append(float(top[0] - top[1]))
            tok = logits.argmax().reshape(1)
            out.append(int(tok))
    assert min(margins) > 1e-4, "the greedy choice is too close to call in float32"
    return dict(defines=dict(Vocab=Vocab, Dim=Dim, Hidden=Hidden, Steps=Steps),
                entry="generate", inputs=[("start", start)], weights=w, repeat=2,
                want=[np.array(out, np.int64)])


@model
def wavenet():
    """WaveNet: gated causal dilated convolutions (dilations 1, 2, 4), residual
    and skip 1x1 convolutions."""
    C, Skip, K, Layers, B, L = 3, 4, 2, 3, 2, 12
    layers = nn.ModuleList()
    for i in range(Layers):
        layer = nn.Module()
        d = 2 ** i
        # The usual causal convolution: pad both sides by (K - 1) d, drop the tail.
        layer.dilated = nn.Conv1d(C, 2 * C, K, dilation=d, padding=(K - 1) * d)
        layer.res, layer.skip = nn.Conv1d(C, C, 1), nn.Conv1d(C, Skip, 1)
        layers.append(layer)
    out = nn.Conv1d(Skip, C, 1)
    m = nn.Module()
    m.layers, m.out = layers, out
    w = params_of(m)
    m = m.double()
    x = randn(B, C, L)
    h, skips = x, 0
    for layer in m.layers:
        f = layer.dilated(h)[..., :L]
        z = torch.tanh(f[:, :C]) * torch.sigmoid(f[:, C:])
        h, skips = h + layer.res(z), skips + layer.skip(z)
    want = m.out(torch.relu(skips))
    return dict(defines=dict(C=C, Skip=Skip, K=K, Layers=Layers), entry="forward",
                inputs=[("x", x)], weights=w, want=[want])


@model
def mlp_f64():
    """The MLP instantiated at T = f64: weights, inputs and results in double."""
    In, Hidden, Out, B = 6, 16, 5, 4
    m = nn.Sequential(nn.Linear(In, Hidden), nn.LayerNorm(Hidden), nn.GELU(),
                      nn.Linear(Hidden, Out)).double()
    m[1].weight.data.normal_()
    w = {f"{name}.{k}": v.detach().clone() for i, name in ((0, "fc1"), (1, "norm"), (3, "fc2"))
         for k, v in m[i].state_dict().items()}
    x = torch.randn(B, In, dtype=torch.float64)
    return dict(file="mlp.ln", defines=dict(In=In, Hidden=Hidden, Out=Out, T="f64"),
                entry="forward", inputs=[("x", x)], weights=w, want=[m(x)], float=np.float64,
                tol=1e-12)


def vq_spec(entry):
    Codes, Dim, B, H, W = 10, 4, 2, 3, 5
    emb = nn.Embedding(Codes, Dim)
    z = randn(B, Dim, H, W)
    e = f32(emb.weight)
    flat = z.permute(0, 2, 3, 1).reshape(-1, Dim)
    d = (flat ** 2).sum(1, keepdim=True) + (e ** 2).sum(1) - 2 * flat @ e.T
    two = d.topk(2, 1, largest=False).values
    assert float((two[:, 1] - two[:, 0]).min()) > 1e-4, "nearest code too close to call in f32"
    idx = d.argmin(1)
    zq = e[idx].view(B, H, W, Dim).permute(0, 3, 1, 2)
    want = zq if entry == "quantize" else idx.view(B, H, W)
    return dict(file="vq.ln", defines=dict(Codes=Codes, Dim=Dim), entry=entry,
                inputs=[("z", z)], weights=params_of(emb, "embedding."), want=[want])


@model
def vq_quantize():
    """VQ-VAE quantizer: nearest codebook entry by a declared argmin reducer."""
    return vq_spec("quantize")


@model
def vq_codes():
    """The same search from a second entry: the chosen codes (i64)."""
    return vq_spec("codes")


@model
def autoencoder():
    """Conv2d(stride 2, padding 1), ReLU, ConvTranspose2d(stride 2, padding 1,
    output_padding 1), sigmoid."""
    C, Hidden, B, H, W = 2, 4, 2, 6, 8
    m = nn.Module()
    m.encoder = nn.Conv2d(C, Hidden, 3, stride=2, padding=1)
    m.decoder = nn.ConvTranspose2d(Hidden, C, 3, stride=2, padding=1, output_padding=1)
    w = params_of(m)
    m = m.double()
    x = randn(B, C, H, W)
    want = torch.sigmoid(m.decoder(torch.relu(m.encoder(x))))
    return dict(defines=dict(C=C, Hidden=Hidden), entry="forward", inputs=[("x", x)],
                weights=w, want=[want])


@model
def espcn():
    """ESPCN: three convolutions with tanh, nn.PixelShuffle(3)."""
    C, F1, F2, Scale, B, H, W = 1, 6, 4, 3, 2, 4, 5
    m = nn.Module()
    m.conv1 = nn.Conv2d(C, F1, 5, padding=2)
    m.conv2 = nn.Conv2d(F1, F2, 3, padding=1)
    m.conv3 = nn.Conv2d(F2, C * Scale * Scale, 3, padding=1)
    w = params_of(m)
    m = m.double()
    x = randn(B, C, H, W)
    want = F.pixel_shuffle(m.conv3(torch.tanh(m.conv2(torch.tanh(m.conv1(x))))), Scale)
    return dict(defines=dict(C=C, F1=F1, F2=F2, Scale=Scale), entry="forward",
                inputs=[("x", x)], weights=w, want=[want])


@model
def classifier_loss():
    """nn.CrossEntropyLoss(label_smoothing=0.1) of a linear classifier: a scalar result."""
    In, Classes, B = 6, 5, 7
    fc = nn.Linear(In, Classes)
    x, target = randn(B, In), torch.randint(0, Classes, (B,))
    want = F.cross_entropy(fc.double()(x), target, label_smoothing=0.1)
    return dict(defines=dict(In=In, Classes=Classes), entry="loss",
                inputs=[("x", x), ("target", target)], weights=params_of(fc, "fc."), want=[want])


@model
def gcn():
    """Two PyG GCNConv layers, gcn_norm (self-loops, symmetric degrees) in the model."""
    In, Hidden, Out, N, E = 5, 8, 3, 9, 18
    src, dst = torch.randint(0, N, (E,)), torch.randint(0, N - 1, (E,))
    keep = src != dst
    src, dst = src[keep], dst[keep]
    layers = {"conv1": nn.Linear(In, Hidden, bias=False), "conv2": nn.Linear(Hidden, Out, bias=False)}
    bias = {c: torch.randn(l.out_features) for c, l in layers.items()}
    w = {}
    for c, l in layers.items():
        w[c + ".lin.weight"] = l.weight.detach().clone()
        w[c + ".bias"] = bias[c]

    def conv(c, x):  # torch_geometric.nn.GCNConv.forward (add_self_loops, normalize)
        s = torch.cat([src, torch.arange(N)])
        d = torch.cat([dst, torch.arange(N)])
        deg = torch.zeros(N, dtype=x.dtype).index_add_(0, d, torch.ones(len(d), dtype=x.dtype))
        norm = deg[s].rsqrt() * deg[d].rsqrt()
        h = layers[c].double()(x)
        return torch.zeros(N, h.shape[1], dtype=x.dtype).index_add_(0, d, norm[:, None] * h[s]) \
            + f32(bias[c])

    x = randn(N, In)
    want = conv("conv2", torch.relu(conv("conv1", x)))
    rp, ci, _ = csr(dst, src, N)
    return dict(defines=dict(In=In, Hidden=Hidden, Out=Out), entry="forward",
                relations=[("g", rp, ci)], inputs=[("x", x)], weights=w, want=[want])


@model
def bert():
    """A two-layer BertModel (HF's module tree and math, eval): sequence and pooled output."""
    Vocab, Hidden, Heads, Inter, Layers, MaxPos, TypeVocab, S = 30, 8, 2, 16, 2, 512, 2, 6
    Head = Hidden // Heads

    def mod(**children):
        m = nn.Module()
        for k, v in children.items():
            setattr(m, k, v)
        return m

    def layer():
        return mod(attention=mod(self=mod(query=nn.Linear(Hidden, Hidden), key=nn.Linear(Hidden, Hidden),
                                          value=nn.Linear(Hidden, Hidden)),
                                 output=mod(dense=nn.Linear(Hidden, Hidden),
                                            LayerNorm=nn.LayerNorm(Hidden, eps=1e-12))),
                   intermediate=mod(dense=nn.Linear(Hidden, Inter)),
                   output=mod(dense=nn.Linear(Inter, Hidden), LayerNorm=nn.LayerNorm(Hidden, eps=1e-12)))

    m = mod(embeddings=mod(word_embeddings=nn.Embedding(Vocab, Hidden),
                           position_embeddings=nn.Embedding(MaxPos, Hidden),
                           token_type_embeddings=nn.Embedding(TypeVocab, Hidden),
                           LayerNorm=nn.LayerNorm(Hidden, eps=1e-12)),
            encoder=mod(layer=nn.ModuleList(layer() for _ in range(Layers))),
            pooler=mod(dense=nn.Linear(Hidden, Hidden)))
    for n_, p_ in m.named_parameters():
        if "LayerNorm" in n_:
            p_.data.normal_()
    w = params_of(m)
    m = m.double()
    ids, types = torch.randint(0, Vocab, (S,)), torch.randint(0, TypeVocab, (S,))
    mask = torch.tensor([True] * 4 + [False] * 2)
    e = m.embeddings
    h = e.LayerNorm(e.word_embeddings(ids) + e.position_embeddings(torch.arange(S))
                    + e.token_type_embeddings(types))
    for lyr in m.encoder.layer:  # BertLayer: BertSelfAttention, BertSelfOutput, ...
        sa = lyr.attention.self
        q, k, v = (f(h).view(S, Heads, Head).transpose(0, 1) for f in (sa.query, sa.key, sa.value))
        scores = q @ k.transpose(1, 2) / math.sqrt(Head) + (~mask).double() * torch.finfo(torch.float64).min
        ctx = (torch.softmax(scores, -1) @ v).transpose(0, 1).reshape(S, Hidden)
        a = lyr.attention.output.LayerNorm(lyr.attention.output.dense(ctx) + h)
        h = lyr.output.LayerNorm(lyr.output.dense(F.gelu(lyr.intermediate.dense(a))) + a)
    pooled = torch.tanh(m.pooler.dense(h[0]))
    return dict(defines=dict(Vocab=Vocab, Hidden=Hidden, Heads=Heads, Inter=Inter, Layers=Layers),
                entry="forward", inputs=[("input_ids", ids), ("token_type_ids", types),
                                         ("mask", mask.numpy())],
                weights=w, want=[h, pooled])


@model
def mamba():
    """Mamba's selective scan (x_proj, dt_proj, softplus); the reference is
    selective_scan_ref's step-by-step loop."""
    Inner, State, Rank, L = 6, 4, 2, 7
    x_proj, dt_proj = nn.Linear(Inner, Rank + 2 * State, bias=False), nn.Linear(Rank, Inner)
    A_log = torch.log(torch.arange(1, State + 1, dtype=torch.float32)).repeat(Inner, 1) \
        + 0.1 * torch.randn(Inner, State)
    Dp = torch.randn(Inner)
    w = {**params_of(x_proj, "x_proj."), **params_of(dt_proj, "dt_proj."), "A_log": A_log, "D": Dp}
    x_proj, dt_proj = x_proj.double(), dt_proj.double()
    u = randn(L, Inner)
    proj = x_proj(u)
    delta = F.softplus(dt_proj(proj[:, :Rank]))
    Bm, Cm = proj[:, Rank:Rank + State], proj[:, Rank + State:]
    A = -torch.exp(f32(A_log))
    h = torch.zeros(Inner, State, dtype=torch.float64)
    ys = []
    for t in range(L):
        h = torch.exp(delta[t, :, None] * A) * h + delta[t, :, None] * Bm[t] * u[t, :, None]
        ys.append((h * Cm[t]).sum(-1) + f32(Dp) * u[t])
    return dict(defines=dict(Inner=Inner, State=State, Rank=Rank), entry="forward",
                inputs=[("u", u)], weights=w, want=[torch.stack(ys)])


@model
def swin():
    """Swin's SwinTransformerBlock with a shift: window partition of the rolled
    image, relative position bias, the shifted-window mask (the official code)."""
    C, Heads, Res, Ws, Shift, Hidden, B = 8, 2, 4, 2, 1, 16, 2
    Head = C // Heads
    m = nn.Module()
    m.norm1, m.norm2 = nn.LayerNorm(C), nn.LayerNorm(C)
    m.attn = nn.Module()
    m.attn.qkv, m.attn.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
    m.attn.relative_position_bias_table = nn.Parameter(torch.randn((2 * Ws - 1) ** 2, Heads))
    m.mlp = nn.Module()
    m.mlp.fc1, m.mlp.fc2 = nn.Linear(C, Hidden), nn.Linear(Hidden, C)
    for n_, p_ in m.named_parameters():
        if "norm" in n_:
            p_.data.normal_()
    w = params_of(m)
    m = m.double()

    def window_partition(x):
        b, h, w_, c = x.shape
        x = x.view(b, h // Ws, Ws, w_ // Ws, Ws, c)
        return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, Ws * Ws, c)

    def window_reverse(wins, h, w_):
        b = wins.shape[0] // (h * w_ // Ws // Ws)
        x = wins.view(b, h // Ws, w_ // Ws, Ws, Ws, -1)
        return x.permute(0, 1, 3, 2, 4, 5).reshape(b, h, w_, -1)

    coords = torch.stack(torch.meshgrid(torch.arange(Ws), torch.arange(Ws), indexing="ij")).flatten(1)
    rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (Ws - 1)
    rel_index = rel[..., 0] * (2 * Ws - 1) + rel[..., 1]
    img_mask = torch.zeros(1, Res, Res, 1, dtype=torch.float64)
    cnt = 0
    for hs in (slice(0, -Ws), slice(-Ws, -Shift), slice(-Shift, None)):
        for ws in (slice(0, -Ws), slice(-Ws, -Shift), slice(-Shift, None)):
            img_mask[:, hs, ws, :] = cnt
            cnt += 1
    mw = window_partition(img_mask).squeeze(-1)
    attn_mask = (mw[:, None, :] - mw[:, :, None]).ne(0).double() * -100.0   # [nW, N, N]

    x = randn(B, Res * Res, C)
    h = m.norm1(x).view(B, Res, Res, C)
    h = torch.roll(h, shifts=(-Shift, -Shift), dims=(1, 2))
    wins = window_partition(h)                                   # [B * nW, N, C]
    bw, n, _ = wins.shape
    q, k, v = m.attn.qkv(wins).reshape(bw, n, 3, Heads, Head).permute(2, 0, 3, 1, 4)
    att = (q * Head ** -0.5) @ k.transpose(-2, -1)
    att = att + m.attn.relative_position_bias_table[rel_index.view(-1)].view(n, n, -1).permute(2, 0, 1)
    nw = attn_mask.shape[0]
    att = att.view(bw // nw, nw, Heads, n, n) + attn_mask[None, :, None]
    att = torch.softmax(att.view(-1, Heads, n, n), -1)
    out = m.attn.proj((att @ v).transpose(1, 2).reshape(bw, n, C))
    out = torch.roll(window_reverse(out, Res, Res), shifts=(Shift, Shift), dims=(1, 2))
    h1 = x + out.reshape(B, Res * Res, C)
    want = h1 + m.mlp.fc2(F.gelu(m.mlp.fc1(m.norm2(h1))))
    return dict(defines=dict(C=C, Heads=Heads, Res=Res, Ws=Ws, Shift=Shift, Hidden=Hidden),
                entry="forward", inputs=[("x", x)], weights=w, want=[want])


@model
def nerf():
    """nerf-pytorch's positional Embedder and an MLP with the encoding concatenated back in."""
    Freqs, Width, B = 3, 16, 5
    Enc = 3 + 6 * Freqs
    m = nn.Module()
    m.fc0, m.fc1, m.fc2 = nn.Linear(Enc, Width), nn.Linear(Width, Width), nn.Linear(Enc + Width, Width)
    m.output_linear = nn.Linear(Width, 4)
    w = params_of(m)
    m = m.double()
    x = randn(B, 3)
    # Embedder(include_input=True, log_sampling=True, periodic_fns=[sin, cos])
    enc = torch.cat([x] + [fn(x * 2.0 ** k) for k in range(Freqs) for fn in (torch.sin, torch.cos)], -1)
    h = torch.relu(m.fc1(torch.relu(m.fc0(enc))))
    h = torch.relu(m.fc2(torch.cat([enc, h], -1)))
    return dict(defines=dict(Freqs=Freqs, Width=Width), entry="forward", inputs=[("x", x)],
                weights=w, want=[m.output_linear(h)])


#===------------------------------------------------------------------===#
# Driver
#===------------------------------------------------------------------===#

def main():
    linnet, zoo, work, name = sys.argv[1:5]
    if name == "all":
        status = 0
        for m in MODELS:
            status |= run_model(linnet, zoo, os.path.join(work, m), m, sys.argv[5:])
        return status
    return run_model(linnet, zoo, work, name, sys.argv[5:])


def run_model(linnet, zoo, work, name, flags):
    interpret = "--interpret" in flags
    build_flags = [a for a in flags if a != "--interpret"] or ["--target", "cpu"]
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
            a = a.astype(spec.get("float", np.float32))
        p = os.path.join(work, f"in-{iname}.npy")
        np.save(p, a)
        args += ["--input", f"{iname}={p}"]
    for rname, rp, ci in spec.get("relations", []):
        p1, p2 = (os.path.join(work, f"rel-{rname}-{k}.npy") for k in ("rp", "ci"))
        np.save(p1, np.asarray(rp, np.int64))
        np.save(p2, np.asarray(ci, np.int64))
        args += ["--relation", f"{rname}={p1},{p2}"]

    binding = ["--binding", os.path.join(zoo, spec["binding"])] if "binding" in spec else []
    if interpret:
        cmd = [linnet, "run", ln, "--interpret", *defs]
    else:
        art = os.path.join(work, "artifact")
        b = subprocess.run([linnet, "build", ln, *build_flags, *defs, "--weights", wpath,
                            *binding, "-o", art], capture_output=True, text=True)
        refusal = spec.get("refused", {}).get(build_flags[build_flags.index("--target") + 1]
                                              if "--target" in build_flags else "cpu")
        if refusal:
            # A documented gap of the target: refused at the model's line, not miscompiled.
            said = (b.stdout + b.stderr).strip().splitlines()
            ok = b.returncode != 0 and any(refusal in line and ".ln:" in line for line in said)
            print(f"zoo: {name}: {'refused as documented' if ok else 'NOT REFUSED AS DOCUMENTED'}: "
                  f"{said[0] if said else ''}")
            return 0 if ok else 1
        if b.returncode != 0:
            sys.stdout.write(b.stdout + b.stderr)
            print(f"zoo: {name}: build failed (exit {b.returncode})")
            return 1
        cmd = [linnet, "run", art]
    wants = spec["want"]
    outs = [os.path.join(work, f"out{i}.npy") for i in range(len(wants))]
    r = subprocess.run([*cmd, "--weights", wpath, *binding, "--entry", spec["entry"], *args,
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

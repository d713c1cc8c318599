import os
import subprocess

import numpy as np
import pytest
import torch

import linnet
from linnet import _compiler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLP = os.path.join(ROOT, "examples", "mlp.ln")
GCN = os.path.join(ROOT, "examples", "gcn.ln")
DIMS = {"In": 4, "Hidden": 8, "Out": 3}


def mlp_reference(sd, x):
    h = torch.relu(x @ sd["fc1.weight"].T + sd["fc1.bias"])
    return h @ sd["fc2.weight"].T + sd["fc2.bias"]


def test_compile_mlp_matches_pytorch():
    torch.manual_seed(0)
    # Without weights the optional biases are compiled as absent.
    bare = linnet.compile(MLP, root="MLP", dims=DIMS)
    assert set(dict(bare.named_parameters())) == {"fc1.weight", "fc2.weight"}
    x = torch.randn(5, 4)
    sd = dict(bare.state_dict())
    sd.update({"fc1.bias": torch.zeros(8), "fc2.bias": torch.zeros(3)})
    torch.testing.assert_close(bare(x), mlp_reference(sd, x))
    # Weights with biases compile them in.
    init = {"fc1.weight": torch.randn(8, 4), "fc1.bias": torch.randn(8),
            "fc2.weight": torch.randn(3, 8), "fc2.bias": torch.randn(3)}
    m = linnet.compile(MLP, root="MLP", dims=DIMS, weights=init)
    names = dict(m.named_parameters())
    assert set(names) == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}
    assert names["fc1.weight"].shape == (8, 4) and names["fc2.bias"].shape == (3,)
    torch.testing.assert_close(m.fc2.bias.detach(), init["fc2.bias"])
    assert "forward" in m.entries()
    torch.testing.assert_close(m(x), mlp_reference(m.state_dict(), x))
    # New parameter values reach the compiled code.
    with torch.no_grad():
        m.fc1.weight.mul_(2.0)
        m.fc2.bias.add_(1.0)
    torch.testing.assert_close(m.forward(x), mlp_reference(m.state_dict(), x))
    # load_state_dict with canonical names.
    sd = {k: torch.randn_like(v) for k, v in m.state_dict().items()}
    m.load_state_dict(sd)
    torch.testing.assert_close(m(x=x), mlp_reference(sd, x))


def test_load_artifact_with_weights_file_matches_cli(tmp_path):
    bin_ = _compiler.linnet_bin()
    w = tmp_path / "w.safetensors"
    subprocess.run([bin_, "init-weights", MLP, "--root", "MLP", "-D", "In=4", "-D", "Hidden=8",
                    "-D", "Out=3", "-o", str(w)], check=True, capture_output=True)
    art = _compiler.build_file(MLP, root="MLP", dims=DIMS, weights=str(w))
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    subprocess.run([bin_, "run", art, "--weights", str(w), "--entry", "forward", "--input",
                    f"x={tmp_path / 'x.npy'}", "--output", str(tmp_path / "y.npy")], check=True,
                   capture_output=True)
    want = torch.from_numpy(np.load(tmp_path / "y.npy"))
    m = linnet.load(art, weights=str(w))
    torch.testing.assert_close(m(torch.from_numpy(x)), want)
    # The raw runtime binding gives the same.
    core = linnet.Model(art, str(w))
    (y,) = core.call("forward", [x])
    np.testing.assert_allclose(y, want.numpy(), rtol=1e-6)
    assert [e["name"] for e in core.entries()] == ["forward"]


def test_module_errors(tmp_path):
    m = linnet.compile(MLP, root="MLP", dims=DIMS)
    with pytest.raises(ValueError, match=r"input 'x': expected shape \[B, 4\]|expected shape"):
        m(torch.randn(2, 5))
    with pytest.raises(TypeError, match="expected dtype f32, found f64"):
        m(torch.randn(2, 4, dtype=torch.float64))
    with pytest.raises(TypeError, match="forward\\(\\) has no input 'y'"):
        m(y=torch.randn(2, 4))
    with pytest.raises(ValueError, match="no entry 'decode'"):
        m.call("decode", torch.randn(2, 4))
    art = _compiler.build_file(MLP, root="MLP", dims=DIMS)
    with pytest.raises(ValueError, match=r"tensor 'fc1.weight': expected f32 \[8, 4\]"):
        linnet.load(art, weights={"fc1.weight": torch.zeros(4, 8), "fc2.weight": torch.zeros(3, 8)})
    with pytest.raises(ValueError, match=r"missing param 'fc2.weight'"):
        linnet.load(art, weights={"fc1.weight": torch.zeros(8, 4)})
    with pytest.raises(ValueError, match=r"hold the optional tensors \{fc1.bias\}"):
        linnet.load(art, weights={"fc1.weight": torch.zeros(8, 4), "fc2.weight": torch.zeros(3, 8),
                                  "fc1.bias": torch.zeros(8)})
    with pytest.raises(ValueError, match=r"unexpected tensor 'fc3.bias'"):
        linnet.load(art, weights={"fc1.weight": torch.zeros(8, 4), "fc2.weight": torch.zeros(3, 8),
                                  "fc3.bias": torch.zeros(8)})
    with pytest.raises(_compiler.CompileError, match="failed"):
        linnet.compile(MLP, root="NoSuchBlock", dims=DIMS)


def test_gcn_relation_entry():
    m = linnet.compile(GCN, root="GCN", dims={"In": 4, "Hidden": 8, "Out": 2})
    g = linnet.Graph.from_csr(torch.tensor([0, 2, 3, 3]), torch.tensor([0, 1, 1]), num_src=2)
    out = m.weighted_aggregation(g, torch.tensor([2.0, 3.0]), torch.tensor([4.0, 5.0, 2.0]))
    torch.testing.assert_close(out, torch.tensor([23.0, 6.0, 0.0]))


def test_binding_manifest_names(tmp_path):
    binding = tmp_path / "mlp.binding.json"
    binding.write_text('{"version": 1, "tensors": {"fc1.weight": "net.0.weight", '
                       '"fc1.bias": "net.0.bias", "fc2.weight": "net.2.weight", '
                       '"fc2.bias": "net.2.bias"}}')
    torch.manual_seed(3)
    seq = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    external = {f"net.{k}": v.detach() for k, v in seq.state_dict().items()}
    m = linnet.compile(MLP, root="MLP", dims=DIMS, weights=external, binding=str(binding))
    # Canonical names on the module, external ones accepted by load_state_dict.
    assert set(m.state_dict()) == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}
    x = torch.randn(6, 4)
    torch.testing.assert_close(m(x), seq(x).detach())
    with torch.no_grad():
        seq[2].bias.add_(5.0)
    m.load_state_dict({f"net.{k}": v for k, v in seq.state_dict().items()})
    torch.testing.assert_close(m(x), seq(x).detach())


LLAMA = os.path.join(ROOT, "examples", "llama.ln")
LLAMA_DIMS = {"Vocab": 64, "Hidden": 32, "Inter": 48, "Layers": 2, "Heads": 4, "KvHeads": 2,
              "MaxSeq": 16}


def test_llama_module_state_and_cli(tmp_path):
    torch.manual_seed(4)
    m = linnet.compile(LLAMA, root="Llama", dims=LLAMA_DIMS)
    names = dict(m.named_parameters())
    assert "model.layers.1.self_attn.q_proj.weight" in names
    assert names["lm_head.weight"].shape == (64, 32)
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0.0, 0.2)
        for n, p in m.named_parameters():
            if n.endswith("layernorm.weight") or n == "model.norm.weight":
                p.fill_(1.0)
    tokens = torch.tensor([3, 17, 42, 5, 9])
    full = m.prefill(tokens)
    assert full.shape == (5, 64)
    # Against the CLI on the same weights.
    w = tmp_path / "w.safetensors"
    linnet._core.write_safetensors(str(w), {k: v.detach().numpy() for k, v in m.state_dict().items()})
    np.save(tmp_path / "t.npy", tokens.numpy())
    subprocess.run([_compiler.linnet_bin(), "run", m._artifact, "--weights", str(w), "--entry",
                    "prefill", "--input", f"tokens={tmp_path / 't.npy'}", "--output",
                    str(tmp_path / "y.npy")], check=True, capture_output=True)
    torch.testing.assert_close(full, torch.from_numpy(np.load(tmp_path / "y.npy")))
    # The KV cache is kept between calls: prefill 4 tokens, decode the 5th.
    m.prefill(tokens[:4])
    last = m.decode(tokens[4:], 4)
    torch.testing.assert_close(last[0], full[4], rtol=1e-4, atol=1e-5)


def llama_reference(sd, tokens, dims, eps=1e-5, theta=10000.0):
    """Hugging Face LlamaForCausalLM's forward in plain PyTorch (no cache)."""
    H, heads, kv = dims["Hidden"], dims["Heads"], dims["KvHeads"]
    hd = H // heads
    S = tokens.shape[0]

    def rms(x, w):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w

    def rope(x):  # [S, n, hd], rotate_half form
        inv = 1.0 / theta ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd)
        ang = torch.arange(S, dtype=torch.float32)[:, None] * inv[None, :]
        cos = torch.cat([ang.cos(), ang.cos()], -1)[:, None, :]
        sin = torch.cat([ang.sin(), ang.sin()], -1)[:, None, :]
        rot = torch.cat([-x[..., hd // 2:], x[..., :hd // 2]], -1)
        return x * cos + rot * sin

    h = sd["model.embed_tokens.weight"][tokens]
    for layer in range(dims["Layers"]):
        p = f"model.layers.{layer}."
        x = rms(h, sd[p + "input_layernorm.weight"])
        q = rope((x @ sd[p + "self_attn.q_proj.weight"].T).view(S, heads, hd))
        k = rope((x @ sd[p + "self_attn.k_proj.weight"].T).view(S, kv, hd))
        v = (x @ sd[p + "self_attn.v_proj.weight"].T).view(S, kv, hd)
        k = k.repeat_interleave(heads // kv, dim=1)
        v = v.repeat_interleave(heads // kv, dim=1)
        scores = torch.einsum("shd,thd->hst", q, k) / hd ** 0.5
        mask = torch.ones(S, S, dtype=torch.bool).tril()
        att = scores.masked_fill(~mask, float("-inf")).softmax(-1)
        ctx = torch.einsum("hst,thd->shd", att, v).reshape(S, H)
        h = h + ctx @ sd[p + "self_attn.o_proj.weight"].T
        x = rms(h, sd[p + "post_attention_layernorm.weight"])
        g = x @ sd[p + "mlp.gate_proj.weight"].T
        u = x @ sd[p + "mlp.up_proj.weight"].T
        h = h + (torch.nn.functional.silu(g) * u) @ sd[p + "mlp.down_proj.weight"].T
    return rms(h, sd["model.norm.weight"]) @ sd["lm_head.weight"].T


def test_llama_module_matches_pytorch_reference():
    torch.manual_seed(5)
    m = linnet.compile(LLAMA, root="Llama", dims=LLAMA_DIMS)
    with torch.no_grad():
        for n, p in m.named_parameters():
            p.copy_(1.0 + 0.1 * torch.randn_like(p) if n.endswith("norm.weight")
                    else 0.2 * torch.randn_like(p))
    tokens = torch.tensor([7, 1, 63, 20, 20, 4])
    sd = {k: v.detach() for k, v in m.state_dict().items()}
    torch.testing.assert_close(m.prefill(tokens), llama_reference(sd, tokens, LLAMA_DIMS),
                               rtol=1e-4, atol=1e-4)


def test_missing_compiler_is_reported(monkeypatch):
    monkeypatch.setenv("LINNET_BIN", "/nonexistent/linnet")
    with pytest.raises(FileNotFoundError, match="LINNET_BIN='/nonexistent/linnet' is not an executable"):
        _compiler.linnet_bin()


def test_compile_error_carries_diagnostics(tmp_path):
    bad = tmp_path / "bad.ln"
    bad.write_text("module bad\n\npub block B {\n    pub entry f(x: Tensor[4; f32]) -> Tensor[4; f32] {\n"
                   "        [i: 4] x[i] * y[i]\n    }\n}\n")
    with pytest.raises(_compiler.CompileError, match=r"bad\.ln:5:\d+: error: .*y"):
        linnet.compile(str(bad))


EDGES_LN = """module edges

pub block Edges {
    /// Per edge: the message x[src] * w[edge] (one row per edge, in the
    /// relation's order), and its sum per destination.
    pub entry messages<N: dim, M: dim, E: dim>(g: Csr[N, M, E], x: Tensor[N; f32],
                                               w: Tensor[E, 2; f32]) -> Tensor[E, 2; f32] {
        [e: E, c: 2] w[e, c] * 2.0
    }
    pub entry weighted_transposed<N: dim, M: dim, E: dim>(
            g: Csr[N, M, E], x: Tensor[N; f32], w: Tensor[2, E; f32]) -> Tensor[M, 2; f32] {
        [d: M, c: 2] sum(s, k: g[d]) x[s] * w[c, k]
    }
}
"""


def test_coo_graph_into_compiled_entry(tmp_path):
    """A Graph.from_coo keeps the caller's edge order: per-edge inputs are
    permuted into the CSR order the entry reads, per-edge results back."""
    src = torch.tensor([1, 0, 2, 1, 0])
    dst = torch.tensor([2, 0, 0, 1, 2])
    w = torch.tensor([1.0, 10.0, 100.0, 1000.0, 10000.0])
    x = torch.tensor([1.0, 2.0, 3.0])
    coo = linnet.Graph.from_coo(src, dst, num_src=3, num_dst=3)
    want = torch.zeros(3).index_add(0, dst, x[src] * w)
    m = linnet.compile(GCN, root="GCN", dims={"In": 4, "Hidden": 8, "Out": 2})
    torch.testing.assert_close(m.weighted_aggregation(coo, x, w), want)
    # The whole GCN against the same graph given as CSR in its order.
    csr = linnet.Graph.from_csr(coo.row_ptr, coo.col_idx, num_src=3)
    feats = torch.randn(3, 4)
    torch.testing.assert_close(m(coo, feats, w), m(csr, feats, w[coo.edge_order]))
    path = tmp_path / "edges.ln"
    path.write_text(EDGES_LN)
    e = linnet.compile(str(path), root="Edges")
    w2 = torch.stack([w, -w], 1)
    torch.testing.assert_close(e.messages(coo, x, w2), 2.0 * w2)  # in the caller's order
    torch.testing.assert_close(e.weighted_transposed(coo, x, w2.T.contiguous()),
                               torch.stack([want, -want], 1))


def test_coo_graph_with_a_fixed_edge_count_is_refused(tmp_path):
    """With the edge count a constant, which axes are per edge is unknown: a
    COO graph is refused rather than read in the wrong order."""
    path = tmp_path / "fixed.ln"
    path.write_text("module fixed\n\npub block Fixed {\n"
                    "    pub entry agg<N: dim, M: dim>(g: Csr[N, M, 3], x: Tensor[N; f32],\n"
                    "                                  w: Tensor[3; f32]) -> Tensor[M; f32] {\n"
                    "        [d: M] sum(s, k: g[d]) x[s] * w[k]\n    }\n}\n")
    m = linnet.compile(str(path), root="Fixed")
    coo = linnet.Graph.from_coo(torch.tensor([1, 0, 2]), torch.tensor([2, 0, 0]), num_src=3)
    with pytest.raises(ValueError, match=r"agg\(\): relation 'g' has a fixed edge count \(3\) "
                                         r"and w an axis of that size: pass a graph made with "
                                         r"Graph.from_csr"):
        m.agg(coo, torch.ones(3), torch.ones(3))
    csr = linnet.Graph.from_csr(coo.row_ptr, coo.col_idx, num_src=3)
    torch.testing.assert_close(m.agg(csr, torch.tensor([1.0, 2.0, 3.0]),
                                     torch.tensor([1.0, 10.0, 100.0])),
                               torch.tensor([31.0, 0.0, 200.0]))


def test_load_honours_variants_like_linnet_run(tmp_path):
    """An artifact built without weights has a library per presence of the
    optional biases; linnet.load picks the one `linnet run` picks."""
    art = _compiler.build_file(MLP, root="MLP", dims=DIMS)
    g = torch.Generator().manual_seed(7)
    weights = {"fc1.weight": torch.randn(8, 4, generator=g), "fc1.bias": torch.randn(8, generator=g),
               "fc2.weight": torch.randn(3, 8, generator=g), "fc2.bias": torch.randn(3, generator=g)}
    w = tmp_path / "w.safetensors"
    linnet._core.write_safetensors(str(w), {k: v.numpy() for k, v in weights.items()})
    x = torch.randn(2, 4, generator=g)
    np.save(tmp_path / "x.npy", x.numpy())
    subprocess.run([_compiler.linnet_bin(), "run", art, "--weights", str(w), "--entry", "forward",
                    "--input", f"x={tmp_path / 'x.npy'}", "--output", str(tmp_path / "y.npy")],
                   check=True, capture_output=True)
    want = torch.from_numpy(np.load(tmp_path / "y.npy"))
    for src in (str(w), weights):
        m = linnet.load(art, weights=src)
        assert set(m.state_dict()) == set(weights)
        torch.testing.assert_close(m(x), want)
        torch.testing.assert_close(want, mlp_reference(weights, x))
    # Weights with one bias of two: no library for that set.
    one = {k: v for k, v in weights.items() if k != "fc2.bias"}
    with pytest.raises(ValueError, match=r"hold the optional tensors \{fc1.bias\}, but the "
                                         r"artifact .* only for these sets of them: \{\}, "
                                         r"\{fc1.bias, fc2.bias\}"):
        linnet.load(art, weights=one)


def test_docs_parameter_names_agree():
    """docs/python.md's compile(mlp.ln) example lists what the module has."""
    with open(os.path.join(ROOT, "docs", "python.md")) as f:
        doc = f.read()
    line = next(ln for ln in doc.splitlines() if "named_parameters()" in ln and "#" in ln)
    shown = eval(line.split("#", 1)[1])  # noqa: S307 - the doc's own literal
    m = linnet.compile(MLP, root="MLP", dims=DIMS)
    assert [n for n, _ in m.named_parameters()] == shown


def test_no_silent_gradients_through_compiled_module():
    """The compiled entries have no backward: the parameters do not require
    grad, and asking for a gradient through a result raises, naming the
    model and the entry, instead of leaving the gradients None."""
    m = linnet.compile(MLP, root="MLP", dims=DIMS)
    assert not any(p.requires_grad for p in m.parameters())
    x = torch.randn(5, 4)
    p = torch.randn(5, 3, requires_grad=True)
    y = m(x)
    assert not y.requires_grad
    (y * p).sum().backward()  # nothing of m asked for: p's gradient only
    torch.testing.assert_close(p.grad, y)
    xg = x.clone().requires_grad_()
    with pytest.raises(RuntimeError, match=r"the entry 'forward' of the compiled linnet model "
                                           r"examples\.mlp::MLP .* has no backward.*reference\(\)"):
        (m(xg) * p).sum().backward()
    m.fc1.weight.requires_grad_(True)  # asked for explicitly
    out = m(x)
    assert out.requires_grad
    with pytest.raises(RuntimeError, match="has no backward"):
        torch.autograd.grad(out.sum(), m.fc1.weight)
    with torch.no_grad():
        assert not m(xg).requires_grad
    torch.testing.assert_close(m(xg).detach(), m(x).detach())


def test_load_ignores_an_absent_optional_block_like_linnet_run():
    """An optional sub block whose required param is missing is absent, its
    other tensors in the weights unused (§9.4): linnet.load picks the variant
    `linnet run` picks instead of finding none."""
    optsub = os.path.join(ROOT, "test", "Numerics", "Inputs", "optsub.ln")
    art = _compiler.build_file(optsub, root="M", dims={"F": 3})
    weights = {"extra.b": torch.randn(3, generator=torch.Generator().manual_seed(3))}
    m = linnet.load(art, weights=weights)
    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(4))
    torch.testing.assert_close(m.affine(x), x + 1)


@pytest.mark.parametrize("fmt", ["q8_0", "q4_K"])
def test_block_quantized_params_match_cli(tmp_path, fmt):
    """A model built with -D W=q8_0 (or a k-quant, rows of 256) holds its
    params as f32 values; the runtime quantizes them when it binds them, as
    `linnet run` does."""
    bin_ = _compiler.linnet_bin()
    src = os.path.join(ROOT, "test", "Numerics", "Inputs", "quantized.ln")
    dims = ["-D", "In=256", "-D", "Mid=512"] if fmt == "q4_K" else []
    w = tmp_path / "w.safetensors"
    subprocess.run([bin_, "init-weights", src, *dims, "-o", str(w)], check=True, capture_output=True)
    art = str(tmp_path / fmt)
    subprocess.run([bin_, "build", src, *dims, "-D", f"W={fmt}", "-o", art], check=True, capture_output=True)
    x = np.random.default_rng(2).standard_normal((1, 256 if fmt == "q4_K" else 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    subprocess.run([bin_, "run", art, "--weights", str(w), "--entry", "one", "--input",
                    f"x={tmp_path / 'x.npy'}", "--output", str(tmp_path / "y.npy")], check=True,
                   capture_output=True)
    m = linnet.load(art, weights=str(w))
    assert m.up.weight.dtype == torch.float32
    y = m.one(torch.from_numpy(x))
    assert torch.equal(y, torch.from_numpy(np.load(tmp_path / "y.npy")))

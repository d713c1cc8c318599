import os

import pytest
import torch

import linnet

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLP = os.path.join(ROOT, "examples", "mlp.ln")
DIMS = {"In": 4, "Hidden": 8, "Out": 3}


def test_mlp_reference_matches_compiled_and_pytorch():
    torch.manual_seed(6)
    w = {"fc1.weight": torch.randn(8, 4), "fc1.bias": torch.randn(8),
         "fc2.weight": torch.randn(3, 8), "fc2.bias": torch.randn(3)}
    compiled = linnet.compile(MLP, root="MLP", dims=DIMS, weights=w)
    ref = compiled.reference()
    assert set(dict(ref.named_parameters())) == set(w)
    x = torch.randn(5, 4)
    y = ref(x)
    torch.testing.assert_close(y, compiled(x))
    plain = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    plain.load_state_dict({"0.weight": w["fc1.weight"], "0.bias": w["fc1.bias"],
                           "2.weight": w["fc2.weight"], "2.bias": w["fc2.bias"]})
    torch.testing.assert_close(y, plain(x))
    # Fine-tuning: the reference differentiates like PyTorch.
    y.square().sum().backward()
    plain(x).square().sum().backward()
    torch.testing.assert_close(ref.fc1.weight.grad, plain[0].weight.grad)
    torch.testing.assert_close(ref.fc2.bias.grad, plain[2].bias.grad)
    # ... and the tuned values go back to the compiled module.
    with torch.no_grad():
        ref.fc1.weight.sub_(0.1 * ref.fc1.weight.grad)
    compiled.load_state_dict(ref.state_dict())
    torch.testing.assert_close(compiled(x), ref(x))


def test_gcn_reference_over_a_relation():
    gcn_dims = {"In": 4, "Hidden": 8, "Out": 2}
    torch.manual_seed(8)
    w = {"conv1.lin.weight": torch.randn(8, 4), "conv1.lin.bias": torch.randn(8),
         "conv2.lin.weight": torch.randn(2, 8), "conv2.lin.bias": torch.randn(2)}
    compiled = linnet.compile(os.path.join(ROOT, "examples", "gcn.ln"), root="GCN",
                              dims=gcn_dims, weights=w)
    ref = compiled.reference()
    seed = linnet.Graph.from_csr(torch.tensor([0, 2, 3, 3]), torch.tensor([0, 1, 1]), num_src=2)
    torch.testing.assert_close(
        ref.weighted_aggregation(seed, torch.tensor([2.0, 3.0]), torch.tensor([4.0, 5.0, 2.0])),
        torch.tensor([23.0, 6.0, 0.0]))
    g = torch.Generator().manual_seed(9)
    src, dst = torch.randint(0, 6, (14,), generator=g), torch.randint(0, 6, (14,), generator=g)
    graph = linnet.Graph.from_coo(src, dst, num_src=6, num_dst=6)
    x = torch.randn(6, 4, generator=g)
    ew = torch.rand(14, generator=g)  # COO order, as the graph was given
    torch.testing.assert_close(ref(graph, x, ew), compiled(graph, x, ew))
    csr = linnet.Graph.from_csr(graph.row_ptr, graph.col_idx, num_src=6)
    torch.testing.assert_close(ref(graph, x, ew), ref(csr, x, ew[graph.edge_order]))
    ref(graph, x, ew).sum().backward()
    assert ref.conv1.lin.weight.grad is not None


def test_reference_reports_what_it_lacks():
    with pytest.raises(NotImplementedError, match="arrays of sub blocks"):
        linnet.reference(os.path.join(ROOT, "examples", "llama.ln"), root="Llama",
                         dims={"Vocab": 64, "Hidden": 32, "Inter": 48, "Layers": 2,
                               "Heads": 4, "KvHeads": 2, "MaxSeq": 16})


TINY = """module tiny

import std.nn.{Embedding, RMSNorm}
import std.math.{silu}

pub block Tiny<V: dim, D: dim, T: dtype(float) = f32> {
    sub emb: Embedding<V, D, T>
    sub norm: RMSNorm<D, T>

    pub entry forward<S: dim>(ids: Tensor[S; i64]) -> Tensor[S, D; T] {
        let h = norm.forward(emb.forward(ids), 1e-5)
        [s: S, d: D] if d < D / 2 { silu(h[s, d]) } else { h[s, d] * 2.0 - max(h[s, d], 0.5) }
    }
}
"""


def test_reference_gathers_reduces_and_branches(tmp_path):
    src = tmp_path / "tiny.ln"
    src.write_text(TINY)
    torch.manual_seed(7)
    compiled = linnet.compile(str(src), root="Tiny", dims={"V": 10, "D": 6})
    with torch.no_grad():
        compiled.emb.weight.normal_()
        compiled.norm.weight.uniform_(0.5, 1.5)
    ids = torch.tensor([3, 9, 0, 3])
    ref = compiled.reference()
    torch.testing.assert_close(ref(ids), compiled(ids))


def test_reference_where_filter(tmp_path):
    src = tmp_path / "filt.ln"
    src.write_text("module filt\n\npub block F<S: dim> {\n"
                   "    pub entry cumsum(x: Tensor[S; f32]) -> Tensor[S; f32] {\n"
                   "        [i: S] sum(j: S where j <= i) x[j]\n    }\n\n"
                   "    pub entry runmax(x: Tensor[S; f32]) -> Tensor[S; f32] {\n"
                   "        [i: S] max(j: S where j <= i) x[j]\n    }\n}\n")
    compiled = linnet.compile(str(src), dims={"S": 5})
    ref = compiled.reference()
    x = torch.tensor([3.0, -1.0, 4.0, 1.0, -5.0])
    torch.testing.assert_close(ref.cumsum(x), x.cumsum(0))
    torch.testing.assert_close(ref.cumsum(x), compiled.cumsum(x))
    torch.testing.assert_close(ref.runmax(x), compiled.runmax(x))

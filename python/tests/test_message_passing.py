import pytest
import torch

import linnet


def random_graph(num_src, num_dst, num_edges, seed, empty_dst=(0,)):
    g = torch.Generator().manual_seed(seed)
    dst = torch.randint(0, num_dst, (num_edges,), generator=g)
    for d in empty_dst:  # destinations without edges
        dst[dst == d] = (d + 1) % num_dst
    src = torch.randint(0, num_src, (num_edges,), generator=g)
    order = torch.sort(dst, stable=True).indices
    counts = torch.bincount(dst, minlength=num_dst)
    row_ptr = torch.cat([torch.zeros(1, dtype=torch.int64), counts.cumsum(0)])
    return linnet.Graph.from_csr(row_ptr, src[order], num_src=num_src, validate="full")


def reference(graph, fn, reducer, src, dst, edge):
    """The same computation in plain PyTorch (scatter_reduce)."""
    s, d = graph.col_idx, graph.dst_of_edge()

    class Rows:
        def __init__(self, feats, index):
            for k, v in feats.items():
                setattr(self, k, v if index is None else v[index])

    m = fn(Rows(src, s), Rows(dst, d), Rows(edge, None))
    out = torch.zeros((graph.num_dst,) + tuple(m.shape[1:]), dtype=m.dtype)
    idx = d.reshape((-1,) + (1,) * (m.dim() - 1)).expand_as(m)
    red = {"sum": "sum", "mean": "mean", "max": "amax", "min": "amin"}[reducer]
    return out.scatter_reduce(0, idx, m, reduce=red, include_self=False)


def make_kernel(red, fn):
    return type(f"K_{red}_{fn.__name__}", (linnet.MessagePassing,),
                {"reducer": getattr(linnet, red)(), "edge": lambda self, s, d, e: fn(s, d, e)})


def msg_weighted(s, d, e):
    return s.x * e.w


def msg_mixed(s, d, e):
    return (s.x - d.y).relu() * e.w.sigmoid() + 0.5 * s.x / (1.0 + d.y * d.y)


def msg_math(s, d, e):
    return (s.x * e.w).tanh() + (d.y.abs() + 1.0).log() * s.x.exp() - (-s.x) ** 3


@pytest.mark.parametrize("red", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("fn", [msg_weighted, msg_mixed, msg_math])
def test_forward_backward_match_pytorch(red, fn):
    graph = random_graph(7, 6, 20, seed=1)
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(7, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    y = torch.randn(6, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.randn(20, dtype=torch.float64, generator=gen).unsqueeze(1).requires_grad_()
    feats = dict(src={"x": x}, dst={"y": y}, edge={"w": w})
    kernel = make_kernel(red, fn)()
    out = kernel(graph=graph, **feats)
    ref = reference(graph, fn, red, **feats)
    torch.testing.assert_close(out, ref)
    upstream = torch.randn(out.shape, dtype=torch.float64, generator=gen)
    used = [t for t in (x, y, w) if fn is not msg_weighted or t is not y]
    got = torch.autograd.grad((out * upstream).sum(), used)
    want = torch.autograd.grad((ref * upstream).sum(), used)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("red", ["sum", "mean", "max", "min"])
def test_gradcheck_float64(red):
    graph = random_graph(5, 4, 11, seed=3)
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(5, 2, dtype=torch.float64, generator=gen, requires_grad=True)
    y = torch.randn(4, 2, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.randn(11, 2, dtype=torch.float64, generator=gen, requires_grad=True)
    kernel = make_kernel(red, msg_mixed)()
    assert torch.autograd.gradcheck(
        lambda x, y, w: kernel(graph=graph, src={"x": x}, dst={"y": y}, edge={"w": w}),
        (x, y, w), eps=1e-6, atol=1e-6)


def test_float32_and_scalar_features():
    graph = random_graph(4, 5, 9, seed=5)
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(9, requires_grad=True)
    kernel = make_kernel("sum", msg_weighted)()
    out = kernel(graph=graph, src={"x": x}, edge={"w": w})
    assert out.dtype == torch.float32 and out.shape == (5,)
    ref = reference(graph, msg_weighted, "sum", {"x": x}, {}, {"w": w})
    torch.testing.assert_close(out, ref)
    gx, gw = torch.autograd.grad(out.sum(), (x, w))
    rx, rw = torch.autograd.grad(ref.sum(), (x, w))
    torch.testing.assert_close(gx, rx)
    torch.testing.assert_close(gw, rw)


def test_compiled_once_per_trace():
    """edge() is traced on every call (cheap); a kernel is compiled once per
    distinct trace: the expression, the shapes and dtype of what it reads."""
    traces = []

    class Counting(linnet.MessagePassing):
        reducer = linnet.sum()

        def edge(self, src, dst, edge):
            traces.append(1)
            return src.x * 2.0

    graph = random_graph(3, 3, 5, seed=6)
    k = Counting()
    for _ in range(3):
        k(graph=graph, src={"x": torch.randn(3, 2)})
    assert len(traces) == 3 and len(Counting._kernels) == 1
    k(graph=graph, src={"x": torch.randn(3, 4)})  # a new feature shape
    k(graph=graph, src={"x": torch.randn(3, 2, dtype=torch.float64)})  # a new dtype
    assert len(Counting._kernels) == 3
    Counting()(graph=graph, src={"x": torch.randn(3, 2)})  # another instance, the same trace
    assert len(Counting._kernels) == 3


def test_from_coo_keeps_edge_order():
    src = torch.tensor([1, 0, 2, 1])
    dst = torch.tensor([2, 0, 0, 1])
    w = torch.tensor([1.0, 10.0, 100.0, 1000.0])
    graph = linnet.Graph.from_coo(src, dst, num_src=3, num_dst=3, validate="full")
    x = torch.tensor([1.0, 2.0, 3.0])
    out = make_kernel("sum", msg_weighted)()(graph=graph, src={"x": x}, edge={"w": w})
    # dst 0: 10*x0 + 100*x2; dst 1: 1000*x1; dst 2: 1*x1
    torch.testing.assert_close(out, torch.tensor([310.0, 2000.0, 2.0]))


def test_graph_validation_errors():
    rp = torch.tensor([0, 2, 3, 3])
    with pytest.raises(ValueError, match=r"col_idx\[1\] = 5 is not a source node .*num_src = 2"):
        linnet.Graph.from_csr(rp, torch.tensor([0, 5, 1]), num_src=2, validate="full")
    with pytest.raises(ValueError, match=r"row_ptr decreases at index 2 \(1 after 2\)"):
        linnet.Graph.from_csr(torch.tensor([0, 2, 1, 3]), torch.tensor([0, 1, 1]), num_src=2,
                              validate="full")
    with pytest.raises(ValueError, match=r"last offset\) is 4, but col_idx has 3 edges"):
        linnet.Graph.from_csr(torch.tensor([0, 2, 3, 4]), torch.tensor([0, 1, 1]), num_src=2,
                              validate="cheap")
    with pytest.raises(ValueError, match=r"row_ptr\[0\] is 1, expected 0"):
        linnet.Graph.from_csr(torch.tensor([1, 2, 3]), torch.tensor([0, 1, 1]), validate="cheap")
    with pytest.raises(ValueError, match="validate: expected one of"):
        linnet.Graph.from_csr(rp, torch.tensor([0, 1, 1]), validate="sometimes")
    with pytest.raises(TypeError, match="expected an integer tensor, found dtype torch.float32"):
        linnet.Graph.from_csr(rp.float(), torch.tensor([0, 1, 1]))
    with pytest.raises(ValueError, match=r"dst\[1\] = 7 is not a node id \(expected 0 <= dst < num_dst = 3\)"):
        linnet.Graph.from_coo(torch.tensor([0, 1]), torch.tensor([0, 7]), num_dst=3)
    # validate="none" trusts the arrays; the runtime still refuses them.
    g = linnet.Graph.from_csr(rp, torch.tensor([0, 5, 1]), num_src=2, validate="none")
    with pytest.raises(ValueError, match=r"col_idx\[1\] = 5 is not a source node"):
        make_kernel("sum", msg_weighted)()(graph=g, src={"x": torch.ones(2)},
                                           edge={"w": torch.ones(3)})


def test_call_errors():
    graph = random_graph(3, 3, 5, seed=7)
    k = make_kernel("sum", msg_weighted)()
    with pytest.raises(ValueError, match=r"src feature 'x': expected 3 rows .*found shape \(4,\)"):
        k(graph=graph, src={"x": torch.ones(4)}, edge={"w": torch.ones(5)})
    with pytest.raises(TypeError, match=r"expected dtype float32 or float64, found torch.int64"):
        k(graph=graph, src={"x": torch.ones(3, dtype=torch.int64)}, edge={"w": torch.ones(5)})
    with pytest.raises(AttributeError, match=r"edge has no feature 'w' \(given: weight\)"):
        k(graph=graph, src={"x": torch.ones(3)}, edge={"weight": torch.ones(5)})
    with pytest.raises(TypeError, match="expected a linnet.Graph"):
        k(graph=None, src={"x": torch.ones(3)})
    with pytest.raises(TypeError, match="share one dtype"):
        k(graph=graph, src={"x": torch.ones(3)}, edge={"w": torch.ones(5, dtype=torch.float64)})

    class NoReducer(linnet.MessagePassing):
        def edge(self, src, dst, edge):
            return src.x

    with pytest.raises(TypeError, match="reducer: expected a reducer"):
        NoReducer()(graph=graph, src={"x": torch.ones(3)})

    class Branchy(linnet.MessagePassing):
        reducer = linnet.max()

        def edge(self, src, dst, edge):
            return src.x if src.x > 0 else -src.x

    with pytest.raises(TypeError, match="no truth value"):
        Branchy()(graph=graph, src={"x": torch.ones(3)})
    with pytest.raises(ValueError, match="reducer: expected one of sum, mean, max, min, softmax"):
        linnet.Reducer("median")


def softmax_reference(graph, score_fn, value_fn, src, dst, edge):
    s, d = graph.col_idx, graph.dst_of_edge()

    class Rows:
        def __init__(self, feats, index):
            for k, v in feats.items():
                setattr(self, k, v if index is None else v[index])

    S, D, E = Rows(src, s), Rows(dst, d), Rows(edge, None)
    score, value = score_fn(S, D, E), value_fn(S, D, E)
    score, value = torch.broadcast_tensors(score, value)
    shape = (graph.num_dst,) + tuple(score.shape[1:])
    idx = d.reshape((-1,) + (1,) * (score.dim() - 1)).expand_as(score)
    mx = torch.zeros(shape, dtype=score.dtype).scatter_reduce(0, idx, score, "amax",
                                                              include_self=False)
    ex = (score - mx[d]).exp()
    den = torch.zeros(shape, dtype=score.dtype).index_add(0, d, ex)
    return torch.zeros(shape, dtype=score.dtype).index_add(0, d, ex / den[d] * value)


def gat_score(s, d, e):
    return torch.nn.functional.leaky_relu(s.a + d.b + e.c, 0.2)


def gat_value(s, d, e):
    return s.h * torch.sigmoid(e.c)


class Attention(linnet.MessagePassing):
    reducer = linnet.softmax()

    def edge(self, src, dst, edge):
        return gat_score(src, dst, edge), gat_value(src, dst, edge)


def attention_inputs(dtype, seed):
    graph = random_graph(6, 5, 16, seed=seed)
    gen = torch.Generator().manual_seed(seed + 1)
    a = torch.randn(6, 2, 1, dtype=dtype, generator=gen, requires_grad=True)  # per head
    b = torch.randn(5, 2, 1, dtype=dtype, generator=gen, requires_grad=True)
    c = torch.randn(16, 2, 1, dtype=dtype, generator=gen, requires_grad=True)
    h = torch.randn(6, 2, 3, dtype=dtype, generator=gen, requires_grad=True)  # heads x features
    return graph, a, b, c, h


def test_softmax_aggregation_matches_pytorch():
    graph, a, b, c, h = attention_inputs(torch.float64, seed=8)
    feats = dict(src={"a": a, "h": h}, dst={"b": b}, edge={"c": c})
    out = Attention()(graph=graph, **feats)
    ref = softmax_reference(graph, gat_score, gat_value, **feats)
    assert out.shape == (5, 2, 3)
    torch.testing.assert_close(out, ref)
    up = torch.randn(out.shape, dtype=torch.float64)
    got = torch.autograd.grad((out * up).sum(), (a, b, c, h))
    want = torch.autograd.grad((ref * up).sum(), (a, b, c, h))
    for x, y in zip(got, want):
        torch.testing.assert_close(x, y)


def test_softmax_gradcheck_float64():
    graph, a, b, c, h = attention_inputs(torch.float64, seed=9)
    k = Attention()
    assert torch.autograd.gradcheck(
        lambda a, b, c, h: k(graph=graph, src={"a": a, "h": h}, dst={"b": b}, edge={"c": c}),
        (a, b, c, h), eps=1e-6, atol=1e-6)


def test_softmax_needs_a_pair():
    class Bad(linnet.MessagePassing):
        reducer = linnet.softmax()

        def edge(self, src, dst, edge):
            return src.x

    with pytest.raises(TypeError, match=r"softmax reducer takes a pair \(score, value\)"):
        Bad()(graph=random_graph(3, 3, 4, seed=1), src={"x": torch.ones(3)})


def test_second_derivatives_are_refused():
    graph = random_graph(4, 4, 6, seed=10)
    x = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
    out = make_kernel("sum", msg_math)()(graph=graph, src={"x": x},
                                          dst={"y": torch.randn(4, 2, dtype=torch.float64)},
                                          edge={"w": torch.randn(6, 1, dtype=torch.float64)})
    (gx,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable|does not require grad"):
        torch.autograd.grad(gx.sum(), x)


def test_reducer_per_instance():
    class Agg(linnet.MessagePassing):
        def __init__(self, reducer):
            super().__init__()
            self.reducer = reducer

        def edge(self, src, dst, edge):
            return src.x

    graph = linnet.Graph.from_csr(torch.tensor([0, 2, 3, 3]), torch.tensor([0, 1, 1]), num_src=2)
    x = torch.tensor([2.0, 3.0])
    torch.testing.assert_close(Agg(linnet.sum())(graph, src={"x": x}), torch.tensor([5.0, 3.0, 0.0]))
    torch.testing.assert_close(Agg(linnet.mean())(graph, src={"x": x}), torch.tensor([2.5, 3.0, 0.0]))
    torch.testing.assert_close(Agg(linnet.min())(graph, src={"x": x}), torch.tensor([2.0, 3.0, 0.0]))


def test_python_numbers_read_by_edge_are_part_of_the_kernel(monkeypatch):
    """A plain number edge() reads is a constant of the trace: another value
    is another kernel (never the first one's result), and many of them warn
    that a 0-d tensor would be an input instead."""
    import linnet.message_passing as mp
    monkeypatch.setattr(mp, "_MANY_KERNELS", 2)

    class Scale(linnet.MessagePassing):
        reducer = linnet.sum()

        def __init__(self, c):
            super().__init__()
            self.c = c

        def edge(self, src, dst, edge):
            return src.x * self.c

    graph = linnet.Graph.from_csr(torch.tensor([0, 2, 3, 3]), torch.tensor([0, 1, 1]), num_src=2)
    x = torch.tensor([2.0, 3.0])
    torch.testing.assert_close(Scale(1.0)(graph, src={"x": x}), torch.tensor([5.0, 3.0, 0.0]))
    with pytest.warns(UserWarning, match=r"Scale.edge\(\) has been compiled 2 times: .*0-d tensor"):
        out = Scale(2.0)(graph, src={"x": x})
    torch.testing.assert_close(out, torch.tensor([10.0, 6.0, 0.0]))

"""Differential test of `linnet.MessagePassing` against a PyTorch scatter
reference written here (index_add / scatter_reduce with include_self=False):
random messages over random graphs, forward and gradients (torch.autograd),
for sum, mean, max and min.

The graphs have destinations without edges (0 for every reducer, as PyG),
multi-edges with equal features (exact ties for max/min: the gradient is
split evenly between them, as torch.scatter_reduce's amax/amin), and come
as CSR or as COO with the edges in random order. The messages read scalar
parameters (`self.alpha`), broadcast features, and include the cases that
once lost gradients: a winning message that is a small difference of larger
terms, and infinite messages. Seeds are fixed."""

import pytest
import torch

import linnet

REDUCERS = ("sum", "mean", "max", "min")


# ---------------------------------------------------------------------------
# Graphs


def random_edges(num_src, num_dst, num_edges, gen, empty=2, dup=3):
    """COO edge lists with `empty` destinations left without edges and `dup`
    edges repeated (a multi-edge; `dups` maps each copy to its original)."""
    lonely = torch.randperm(num_dst, generator=gen)[:empty]
    allowed = torch.tensor([d for d in range(num_dst) if d not in set(lonely.tolist())])
    dst = allowed[torch.randint(0, allowed.numel(), (num_edges,), generator=gen)]
    src = torch.randint(0, num_src, (num_edges,), generator=gen)
    orig = torch.randint(0, num_edges, (dup,), generator=gen)
    src, dst = torch.cat([src, src[orig]]), torch.cat([dst, dst[orig]])
    perm = torch.randperm(src.numel(), generator=gen)  # copies anywhere in the list
    dups = torch.cat([torch.arange(num_edges), orig])[perm]
    return src[perm], dst[perm], dups


def make_graph(kind, src, dst, num_src, num_dst):
    """(graph, src index, dst index, edge order): the index arrays say, per
    edge in the order the caller passes edge features, its source and
    destination."""
    if kind == "coo":
        g = linnet.Graph.from_coo(src, dst, num_src=num_src, num_dst=num_dst, validate="full")
        return g, src, dst, None
    order = torch.sort(dst, stable=True).indices  # CSR: the caller sorts the edges
    counts = torch.bincount(dst, minlength=num_dst)
    row_ptr = torch.cat([torch.zeros(1, dtype=torch.int64), counts.cumsum(0)])
    g = linnet.Graph.from_csr(row_ptr, src[order], num_src=num_src, validate="full")
    return g, src[order], dst[order], order


# ---------------------------------------------------------------------------
# The reference


class Rows:
    def __init__(self, feats, index):
        for k, v in feats.items():
            setattr(self, k, v if index is None else v[index])


def reference(red, fn, src_idx, dst_idx, num_dst, src, dst, edge, alpha=None):
    m = fn(Rows(src, src_idx), Rows(dst, dst_idx), Rows(edge, None), alpha)
    m = m.expand((src_idx.numel(),) + tuple(m.shape[1:]))
    shape = (num_dst,) + tuple(m.shape[1:])
    if red in ("sum", "mean"):
        out = torch.zeros(shape, dtype=m.dtype).index_add(0, dst_idx, m)
        if red == "mean":
            deg = torch.bincount(dst_idx, minlength=num_dst).to(m.dtype).clamp(min=1)
            out = out / deg.reshape((-1,) + (1,) * (m.dim() - 1))
        return out
    idx = dst_idx.reshape((-1,) + (1,) * (m.dim() - 1)).expand_as(m)
    return torch.zeros(shape, dtype=m.dtype).scatter_reduce(
        0, idx, m, reduce="a" + red, include_self=False)


def kernel_class(red, fn):
    return type(f"Diff_{red}", (linnet.MessagePassing,),
                {"reducer": getattr(linnet, red)(),
                 "edge": lambda self, s, d, e: fn(s, d, e, self.alpha)})


def instance(cls, alpha):
    k = cls()
    k.alpha = torch.nn.Parameter(alpha)
    return k


def check(red, fn, feats, graph_kind, src, dst, num_src, num_dst, alpha, dtype, tol):
    """Runs the kernel and the reference on the same inputs and compares the
    result and the gradient of every input requiring one."""
    g, s_idx, d_idx, order = make_graph(graph_kind, src, dst, num_src, num_dst)
    fsrc, fdst, fedge = ({k: v.to(dtype).detach().requires_grad_() for k, v in f.items()}
                         for f in feats)
    if order is not None:  # a CSR graph takes edge features in its order
        fedge = {k: v.detach()[order].requires_grad_() for k, v in fedge.items()}
    kernel = instance(kernel_class(red, fn), alpha.to(dtype))
    ref_alpha = kernel.alpha.detach().clone().requires_grad_()
    out = kernel(graph=g, src=fsrc, dst=fdst, edge=fedge)
    ref = reference(red, fn, s_idx, d_idx, num_dst, fsrc, fdst, fedge, ref_alpha)
    torch.testing.assert_close(out, ref, **tol)
    assert out.shape == ref.shape
    empty = torch.bincount(dst, minlength=num_dst) == 0
    assert bool(empty.any()) and bool((out[empty] == 0).all())
    ins = list(fsrc.values()) + list(fdst.values()) + list(fedge.values())
    up = torch.randn(out.shape, dtype=dtype, generator=torch.Generator().manual_seed(99))
    got = torch.autograd.grad((out * up).sum(), ins + [kernel.alpha], allow_unused=True)
    want = torch.autograd.grad((ref * up).sum(), ins + [ref_alpha], allow_unused=True)
    for a, b in zip(got, want):
        if b is None:
            assert a is None or bool((a == 0).all())
        else:
            assert a is not None
            torch.testing.assert_close(a, b, **tol)
    return out


# ---------------------------------------------------------------------------
# Random messages: an expression over src.x [F], dst.y [F] or [1], edge.w
# [1], edge.v [F] and the scalar parameter alpha, built from the operations
# edge() supports; the same Python function runs on the traced proxies and
# on PyTorch tensors.


def random_message(seed, use_src=True):
    gen = torch.Generator().manual_seed(seed)

    def pick(n):
        return int(torch.randint(0, n, (1,), generator=gen))

    def const():
        return round(float(torch.randn((), generator=gen)), 2)

    leaves = [lambda s, d, e, a: d.y, lambda s, d, e, a: e.w, lambda s, d, e, a: e.v,
              lambda s, d, e, a: a * e.w]
    if use_src:
        leaves += [lambda s, d, e, a: s.x, lambda s, d, e, a: s.x * a]

    def build(depth):
        if depth == 0 or pick(4) == 0:
            return leaves[pick(len(leaves))]
        op = pick(10)
        f = build(depth - 1)
        if op == 0:
            return lambda s, d, e, a: f(s, d, e, a).tanh()
        if op == 1:
            return lambda s, d, e, a: f(s, d, e, a).sigmoid()
        if op == 2:
            return lambda s, d, e, a: f(s, d, e, a).relu()
        if op == 3:
            c = const()
            return lambda s, d, e, a: c * f(s, d, e, a) + 0.5
        g = build(depth - 1)
        if op in (4, 5):
            return lambda s, d, e, a: f(s, d, e, a) + g(s, d, e, a)
        if op == 6:
            return lambda s, d, e, a: f(s, d, e, a) - g(s, d, e, a)
        if op in (7, 8):
            return lambda s, d, e, a: f(s, d, e, a) * g(s, d, e, a)
        return lambda s, d, e, a: f(s, d, e, a) / (1.0 + g(s, d, e, a) * g(s, d, e, a))

    first = leaves[-1 if use_src else 1]  # every message reads a feature
    body = build(3)
    return lambda s, d, e, a: first(s, d, e, a) * 0.75 + body(s, d, e, a)


def random_features(num_src, num_dst, dups, seed, F=3, y_width=1):
    """Features with one row per node and per edge; the copies of a
    multi-edge get the original's edge features (their messages tie)."""
    gen = torch.Generator().manual_seed(seed)
    E = dups.numel()
    n = int(dups.max()) + 1
    w = torch.randn(n, 1, dtype=torch.float64, generator=gen)[dups]
    v = torch.randn(n, F, dtype=torch.float64, generator=gen)[dups]
    x = torch.randn(num_src, F, dtype=torch.float64, generator=gen)
    y = torch.randn(num_dst, y_width, dtype=torch.float64, generator=gen)
    assert w.shape[0] == E
    return {"x": x}, {"y": y}, {"w": w, "v": v}


F64 = dict(rtol=1e-9, atol=1e-10)
F32 = dict(rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("red", REDUCERS)
@pytest.mark.parametrize("seed", [11, 12])
def test_random_messages(red, seed):
    gen = torch.Generator().manual_seed(seed)
    num_src, num_dst = 7, 9
    src, dst, dups = random_edges(num_src, num_dst, 24, gen)
    fn = random_message(seed)
    feats = random_features(num_src, num_dst, dups, seed, y_width=1 + 2 * (seed % 2))
    alpha = torch.tensor(0.7 + 0.1 * seed)
    for kind in ("coo", "csr"):
        check(red, fn, feats, kind, src, dst, num_src, num_dst, alpha, torch.float64, F64)
    check(red, fn, feats, "coo", src, dst, num_src, num_dst, alpha, torch.float32, F32)


@pytest.mark.parametrize("red", REDUCERS)
def test_messages_without_src_features(red):
    """edge.w alone and edge.w * dst.y read no source feature: the kernel
    still binds the graph's source count."""
    gen = torch.Generator().manual_seed(5)
    src, dst, dups = random_edges(4, 6, 15, gen)
    feats = random_features(4, 6, dups, 6)
    for fn in (lambda s, d, e, a: e.w, lambda s, d, e, a: e.w * d.y + a):
        check(red, fn, feats, "coo", src, dst, 4, 6, torch.tensor(0.5), torch.float64, F64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("red", ["max", "min"])
def test_winner_from_cancellation_keeps_its_gradient(red, dtype):
    """The winning message x*w + h is about 0.02, made of terms about 1: its
    gradient must reach x, w and h (a tolerance relative to the result
    misses it)."""
    gen = torch.Generator().manual_seed(21)
    num_src, num_dst, E = 40, 30, 160
    src, dst, _ = random_edges(num_src, num_dst, E, gen, empty=1, dup=0)
    x = 1.0 + 0.1 * torch.rand(num_src, 4, dtype=torch.float64, generator=gen)
    w = 1.0 + 0.1 * torch.rand(E, 4, dtype=torch.float64, generator=gen)
    xw = x[src] * w
    ext = torch.zeros(num_dst, 4, dtype=torch.float64).scatter_reduce(
        0, dst[:, None].expand(-1, 4), xw, reduce="a" + red, include_self=False)
    h = -ext + (0.02 if red == "max" else -0.02)
    fn = lambda s, d, e, a: s.x * e.w + d.h  # noqa: E731
    tol = F64 if dtype == torch.float64 else dict(rtol=1e-4, atol=1e-6)
    check(red, fn, ({"x": x}, {"h": h}, {"w": w}), "coo", src, dst, num_src, num_dst,
          torch.tensor(1.0), dtype, tol)


@pytest.mark.parametrize("red", ["max", "min"])
def test_infinite_messages(red):
    """+inf and -inf messages: the gradient goes to the infinite winners
    (split between ties), and to every edge of a destination whose messages
    are all the same infinity."""
    src = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 1])
    dst = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2, 4, 4])
    inf = float("inf")
    b = torch.tensor([inf, 0.0, inf, -inf, 0.0, 1.0, -inf, -inf, inf, -inf],
                     dtype=torch.float64)[:, None]
    if red == "min":
        b = -b
    x = torch.tensor([[1.0], [2.0], [-3.0]], dtype=torch.float64)
    w = torch.linspace(0.5, 1.5, 10, dtype=torch.float64)[:, None]
    fn = lambda s, d, e, a: s.x * e.w + e.b  # noqa: E731
    out = check(red, fn, ({"x": x}, {}, {"w": w, "b": b}), "coo", src, dst, 3, 5,
                torch.tensor(1.0), torch.float64, F64)
    sign = 1 if red == "max" else -1
    assert out[[0, 2, 3, 4], 0].tolist() == [sign * inf, -sign * inf, 0.0, sign * inf]


def test_scalar_parameters_are_kernel_inputs():
    """A 0-d parameter read in edge() is an input of the compiled kernel: its
    current value is used on every call, each instance has its own, and it
    gets a gradient. A plain number read from the instance is part of the
    kernel's identity."""

    class Scaled(linnet.MessagePassing):
        reducer = linnet.sum()

        def __init__(self, alpha, shift):
            super().__init__()
            self.alpha = torch.nn.Parameter(torch.tensor(alpha))
            self.shift = shift

        def edge(self, src, dst, edge):
            return self.alpha * src.x * edge.w + self.shift

    g = linnet.Graph.from_csr(torch.tensor([0, 2, 3, 3]), torch.tensor([0, 1, 1]), num_src=2)
    x, w = torch.tensor([2.0, 3.0]), torch.tensor([4.0, 5.0, 2.0])
    a, b = Scaled(1.0, 0.0), Scaled(10.0, 1.0)
    plain = torch.tensor([23.0, 6.0, 0.0])
    torch.testing.assert_close(a(g, src={"x": x}, edge={"w": w}), plain)
    torch.testing.assert_close(b(g, src={"x": x}, edge={"w": w}),
                               10 * plain + torch.tensor([2.0, 1.0, 0.0]))
    with torch.no_grad():
        a.alpha.fill_(3.0)
    out = a(g, src={"x": x}, edge={"w": w})
    torch.testing.assert_close(out, 3 * plain)
    (ga,) = torch.autograd.grad(out.sum(), a.alpha)
    torch.testing.assert_close(ga, plain.sum())
    # Used several times, on either side, and through torch functions of it.

    class Twice(linnet.MessagePassing):
        reducer = linnet.max()

        alpha = None  # a plain tensor, set by _with_alpha

        def edge(self, src, dst, edge):
            return src.x * self.alpha - torch.exp(self.alpha) * edge.w + self.alpha

    k = Twice()
    xd = x.double().requires_grad_()
    wd = w.double().requires_grad_()
    alpha = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda alpha, x, w: _with_alpha(k, alpha)(g, src={"x": x}, edge={"w": w}),
        (alpha, xd, wd))


def _with_alpha(kernel, alpha):
    kernel.alpha = alpha  # a plain tensor attribute is traced the same way
    return kernel


def test_scalar_parameter_in_softmax_scores():
    """A learnable temperature in an attention score gets its gradient
    through the softmax's Jacobian."""

    class Attention(linnet.MessagePassing):
        reducer = linnet.softmax()
        temperature = None

        def edge(self, src, dst, edge):
            return (src.a + dst.b).tanh() * self.temperature, src.h * edge.c

    gen = torch.Generator().manual_seed(31)
    src, dst, _ = random_edges(5, 6, 14, gen)
    g = linnet.Graph.from_coo(src, dst, num_src=5, num_dst=6)

    def rand(*shape):
        return torch.randn(*shape, dtype=torch.float64, generator=gen, requires_grad=True)

    k = Attention()
    inputs = (rand(()), rand(5, 1), rand(6, 1), rand(5, 3), rand(src.numel(), 1))

    def run(t, a, b, h, c):
        return _with_temperature(k, t)(g, src={"a": a, "h": h}, dst={"b": b}, edge={"c": c})

    assert torch.autograd.gradcheck(run, inputs)
    (gt,) = torch.autograd.grad(run(*inputs).pow(2).sum(), inputs[0])
    assert float(gt.abs()) > 1e-3  # the temperature is not a frozen constant


def _with_temperature(kernel, t):
    kernel.temperature = t
    return kernel

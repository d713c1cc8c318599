"""Graph.knn and Graph.radius: the relations std.graph builds, from Python,
against a numpy brute force of their semantics, and message passing with
autograd over them."""
import os
import sys

import numpy as np
import pytest
import torch

import linnet

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "difftest"))
from lnast import neighbour_rows as brute  # noqa: E402  the generator's oracle of §10.5


def rows_of(g):
    rp, ci = g.row_ptr.numpy(), g.col_idx.numpy()
    return [ci[rp[i]:rp[i + 1]] for i in range(g.num_dst)]


def same(g, want):
    got = rows_of(g)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n,d,k", [(50, 3, 6), (7, 2, 10), (3000, 3, 16), (400, 5, 4)])
def test_knn_matches_brute_force(n, d, k):
    pos = torch.rand(n, d, generator=torch.Generator().manual_seed(n))
    g = linnet.Graph.knn(pos, k)
    assert g.num_src == n and g.num_dst == n
    same(g, brute(pos, pos, k, True))
    same(linnet.Graph.knn(pos, k, loop=True), brute(pos, pos, k, False))


def test_knn_query_and_ties():
    lattice = torch.stack(torch.meshgrid(torch.arange(6.), torch.arange(6.), indexing="ij"), -1).reshape(-1, 2)
    same(linnet.Graph.knn(lattice, 4), brute(lattice, lattice, 4, True))
    q = torch.rand(20, 2, dtype=torch.float64)
    g = linnet.Graph.knn(lattice, 3, query=q)
    assert (g.num_src, g.num_dst) == (36, 20)
    same(g, brute(q, lattice, 3, False))


@pytest.mark.parametrize("r", [0.0, 0.15, 0.4, -1.0])
def test_radius_matches_brute_force(r):
    pos = torch.rand(300, 3, generator=torch.Generator().manual_seed(7))
    pos[10] = pos[11]  # a duplicate: within r = 0
    g = linnet.Graph.radius(pos, r, max_neighbors=12)
    same(g, brute(pos, pos, 12, True, np.float64(np.float32(r))))


def test_bad_arguments():
    with pytest.raises(TypeError, match="float positions"):
        linnet.Graph.knn(torch.zeros(4, 3, dtype=torch.int64), 2)
    with pytest.raises(ValueError, match=r"positions \[points, axes\]"):
        linnet.Graph.knn(torch.zeros(4), 2)
    with pytest.raises(ValueError, match="k: expected a positive int"):
        linnet.Graph.knn(torch.zeros(4, 3), 0)
    with pytest.raises(ValueError, match="query has 2 coordinates and pos 3"):
        linnet.Graph.knn(torch.zeros(4, 3), 2, query=torch.zeros(2, 2))


class EdgeMax(linnet.MessagePassing):
    reducer = linnet.max()

    def edge(self, src, dst, edge):
        return (src.x - dst.x).relu() * 2.0 + src.x


def test_message_passing_and_autograd_over_knn():
    gen = torch.Generator().manual_seed(3)
    pos = torch.rand(40, 3, generator=gen)
    x = torch.randn(40, 5, dtype=torch.float64, generator=gen, requires_grad=True)
    g = linnet.Graph.knn(pos, 5)
    out = EdgeMax()(graph=g, src={"x": x}, dst={"x": x})
    dst = torch.arange(40).repeat_interleave(5)
    src = torch.as_tensor(np.concatenate(brute(pos, pos, 5, True)))
    msg = (x[src] - x[dst]).relu() * 2.0 + x[src]
    want = torch.zeros(40, 5, dtype=torch.float64).scatter_reduce(
        0, dst[:, None].expand(-1, 5), msg, "amax", include_self=False)
    torch.testing.assert_close(out, want)
    up = torch.randn(40, 5, dtype=torch.float64, generator=gen)
    torch.testing.assert_close(torch.autograd.grad((out * up).sum(), x)[0],
                               torch.autograd.grad((want * up).sum(), x)[0])


def test_compiled_model_builds_the_same_relation():
    """A .ln model that builds its relation (std.graph) from Python: the
    same neighbour lists as Graph.knn, row by row and in order."""
    model = os.path.join(os.path.dirname(__file__), "..", "..", "test", "Graph", "Inputs", "neighbors.ln")
    m = linnet.compile(model, dims={"K": 5, "F": 2})
    pos = torch.rand(64, 3, generator=torch.Generator().manual_seed(9))
    count, hashed = m.knn_self(pos)
    want = []
    for row in rows_of(linnet.Graph.knn(pos, 5)):
        h = 7
        for s in row:
            h = (h * 1009 + int(s) + 1) % 1000000007
        want.append(h)
    assert count.tolist() == [5] * 64
    assert hashed.tolist() == want

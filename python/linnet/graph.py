"""Graphs as CSR relations (destination-major), as the compiled kernels take them."""

import numpy as np
import torch

_VALIDATE = ("none", "cheap", "full")


def _index_tensor(x, what):
    if not isinstance(x, torch.Tensor):
        try:
            x = torch.as_tensor(x)
        except Exception as e:  # noqa: BLE001
            raise TypeError(f"{what}: expected a 1-D integer tensor, found {type(x).__name__}") from e
    if x.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        raise TypeError(f"{what}: expected an integer tensor, found dtype {x.dtype}")
    if x.dim() != 1:
        raise ValueError(f"{what}: expected a 1-D tensor, found shape {tuple(x.shape)}")
    if x.device.type != "cpu":
        raise ValueError(f"{what}: expected a CPU tensor, found device {x.device}")
    return x.to(torch.int64).contiguous()


def _count(n, what):
    if isinstance(n, torch.Tensor):
        n = int(n)
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"{what}: expected a non-negative int, found {n!r}")
    return n


def _positions(pos, query):
    """[points, axes] float positions as float64 numpy arrays (no gradient)."""
    out = []
    for name, p in (("query", pos if query is None else query), ("pos", pos)):
        if not isinstance(p, torch.Tensor):
            p = torch.as_tensor(p)
        if not p.is_floating_point():
            raise TypeError(f"{name}: expected float positions, found dtype {p.dtype}")
        if p.dim() != 2:
            raise ValueError(f"{name}: expected positions [points, axes], found shape {tuple(p.shape)}")
        if p.device.type != "cpu":
            raise ValueError(f"{name}: expected a CPU tensor, found device {p.device}")
        out.append(p.detach().to(torch.float64).contiguous().numpy())
    if out[0].shape[1] != out[1].shape[1]:
        raise ValueError(f"query has {out[0].shape[1]} coordinates and pos {out[1].shape[1]}")
    return out


class Graph:
    """A directed graph stored destination-major: the edges into destination
    `d` are positions `row_ptr[d] .. row_ptr[d + 1]` of `col_idx`, and
    `col_idx[e]` is the source node of edge `e`. Edge ids are these
    positions; per-edge features are indexed by them."""

    def __init__(self, row_ptr, col_idx, num_src, edge_order=None):
        self.row_ptr = row_ptr
        self.col_idx = col_idx
        self.num_src = num_src
        self.num_dst = row_ptr.numel() - 1
        self.num_edges = col_idx.numel()
        # from_coo: position k of the CSR holds COO edge edge_order[k].
        self.edge_order = edge_order
        self._transposed = None
        self._edge_order_inverse = None
        self._dst_of_edge = None
        self._in_degree = None
        self._numpy = None

    def __repr__(self):
        return (f"Graph(num_src={self.num_src}, num_dst={self.num_dst}, "
                f"num_edges={self.num_edges})")

    @staticmethod
    def from_csr(row_ptr, col_idx, num_src=None, validate="cheap"):
        """A graph from CSR arrays over destinations. `num_src` defaults to
        the number of destinations (a square graph). `validate`: "none"
        (trust the arrays; the runtime still refuses broken ones), "cheap"
        (dtypes, shapes, first and last offsets) or "full" (also monotone
        offsets and every source in range)."""
        if validate not in _VALIDATE:
            raise ValueError(f"validate: expected one of {', '.join(map(repr, _VALIDATE))}, "
                             f"found {validate!r}")
        row_ptr = _index_tensor(row_ptr, "row_ptr")
        col_idx = _index_tensor(col_idx, "col_idx")
        if row_ptr.numel() < 1:
            raise ValueError("row_ptr is empty: it needs num_dst + 1 offsets")
        num_src = row_ptr.numel() - 1 if num_src is None else _count(num_src, "num_src")
        if validate != "none":
            first, last = int(row_ptr[0]), int(row_ptr[-1])
            if first != 0:
                raise ValueError(f"row_ptr[0] is {first}, expected 0")
            if last != col_idx.numel():
                raise ValueError(f"row_ptr[{row_ptr.numel() - 1}] (the last offset) is {last}, "
                                 f"but col_idx has {col_idx.numel()} edges")
        if validate == "full":
            bad = (row_ptr[1:] < row_ptr[:-1]).nonzero()
            if bad.numel():
                k = int(bad[0, 0]) + 1
                raise ValueError(f"row_ptr decreases at index {k} "
                                 f"({int(row_ptr[k])} after {int(row_ptr[k - 1])})")
            bad = ((col_idx < 0) | (col_idx >= num_src)).nonzero()
            if bad.numel():
                e = int(bad[0, 0])
                raise ValueError(f"col_idx[{e}] = {int(col_idx[e])} is not a source node "
                                 f"(expected 0 <= src < num_src = {num_src})")
        return Graph(row_ptr, col_idx, num_src)

    @staticmethod
    def from_coo(src, dst, num_src=None, num_dst=None, validate="cheap"):
        """A graph from edge lists: edge `i` goes from `src[i]` to `dst[i]`.
        Per-edge features passed to a kernel stay in this (COO) order; the
        graph keeps the permutation to its CSR order. Node counts default to
        one more than the largest id."""
        if validate not in _VALIDATE:
            raise ValueError(f"validate: expected one of {', '.join(map(repr, _VALIDATE))}, "
                             f"found {validate!r}")
        src = _index_tensor(src, "src")
        dst = _index_tensor(dst, "dst")
        if src.numel() != dst.numel():
            raise ValueError(f"src and dst must have one entry per edge: found {src.numel()} "
                             f"and {dst.numel()}")
        for name, ids, n in (("src", src, num_src), ("dst", dst, num_dst)):
            if n is not None:
                n = _count(n, f"num_{name}")
            if validate != "none" or n is None:
                bad = (ids < 0).nonzero()
                if n is not None:
                    bad = ((ids < 0) | (ids >= n)).nonzero()
                if bad.numel():
                    i = int(bad[0, 0])
                    bound = f"num_{name} = {n}" if n is not None else "a count"
                    raise ValueError(f"{name}[{i}] = {int(ids[i])} is not a node id "
                                     f"(expected 0 <= {name} < {bound})")
        num_src = _count(num_src, "num_src") if num_src is not None else (
            int(src.max()) + 1 if src.numel() else 0)
        num_dst = _count(num_dst, "num_dst") if num_dst is not None else (
            int(dst.max()) + 1 if dst.numel() else 0)
        order = torch.sort(dst, stable=True).indices
        counts = torch.bincount(dst, minlength=num_dst)
        row_ptr = torch.zeros(num_dst + 1, dtype=torch.int64)
        torch.cumsum(counts, 0, out=row_ptr[1:])
        return Graph(row_ptr, src[order].contiguous(), num_src, edge_order=order)

    @staticmethod
    def knn(pos, k, *, query=None, loop=False):
        """The k-nearest-neighbour graph of points (std.graph's `knn` and
        `knn_graph`): each destination's `k` nearest sources, nearest first,
        ties broken by the smaller source index; distances are squared
        Euclidean in float64. `pos` [N, D] are the sources; `query` [M, D]
        the destinations (default: `pos` itself, and then `loop=False`
        leaves out each point's pair with itself). A destination with fewer
        than `k` candidates gets them all. The graph has no gradient;
        messages over it differentiate as over any graph. Built by the
        compiled models' builder, on every core (OMP_NUM_THREADS caps them)."""
        dst, src = _positions(pos, query)
        k = _count(k, "k")
        if k < 1:
            raise ValueError(f"k: expected a positive int, found {k}")
        return Graph._built(dst, src, 0, k, query is None and not loop, 0.0)

    @staticmethod
    def radius(pos, r, *, max_neighbors=32, query=None, loop=False):
        """The radius graph of points (std.graph's `radius` and
        `radius_graph`): each destination's sources within distance `r`
        (inclusive), at most `max_neighbors` of them (the nearest when more
        are within `r`), nearest first, ties by source index. A negative or
        NaN `r` relates nothing. `pos`, `query` and `loop` as for `knn`."""
        dst, src = _positions(pos, query)
        k = _count(max_neighbors, "max_neighbors")
        if k < 1:
            raise ValueError(f"max_neighbors: expected a positive int, found {k}")
        if isinstance(r, torch.Tensor):
            r = r.item()
        return Graph._built(dst, src, 1, k, query is None and not loop, float(r))

    @staticmethod
    def _built(dst, src, kind, k, exclude_self, r):
        from . import _core
        row_ptr, col_idx = _core.relation_build(dst, src, kind, k, exclude_self, r)
        return Graph(torch.from_numpy(row_ptr), torch.from_numpy(col_idx), src.shape[0])

    # Derived arrays, computed once per graph.
    def numpy_csr(self):
        """The relation's arrays as the kernels take them (numpy views), and
        one byte per source (destination) node, `k_count_N` (`k_count_M`):
        what a kernel reading no source (destination) feature binds that
        count from."""
        if self._numpy is None:
            self._numpy = {"g.row_ptr": self.row_ptr.numpy(), "g.col_idx": self.col_idx.numpy(),
                           "k_count_N": np.zeros(self.num_src, dtype=np.uint8),
                           "k_count_M": np.zeros(self.num_dst, dtype=np.uint8)}
        return self._numpy

    def dst_of_edge(self):
        """The destination of each edge (CSR order)."""
        if self._dst_of_edge is None:
            self._dst_of_edge = torch.repeat_interleave(
                torch.arange(self.num_dst, dtype=torch.int64), self.in_degree()).contiguous()
        return self._dst_of_edge

    def edge_order_inverse(self):
        """from_coo: position in the CSR order of each COO edge."""
        if self._edge_order_inverse is None:
            inv = torch.empty_like(self.edge_order)
            inv[self.edge_order] = torch.arange(self.num_edges, dtype=torch.int64)
            self._edge_order_inverse = inv
        return self._edge_order_inverse

    def in_degree(self):
        if self._in_degree is None:
            self._in_degree = (self.row_ptr[1:] - self.row_ptr[:-1]).contiguous()
        return self._in_degree

    def transposed(self):
        """(row_ptr, col_idx, perm) of the source-major relation: the edges
        out of source `s` are positions `row_ptr[s] .. row_ptr[s + 1]`,
        `col_idx[k]` is their destination and `perm[k]` their edge id."""
        if self._transposed is None:
            perm = torch.sort(self.col_idx, stable=True).indices
            counts = torch.bincount(self.col_idx, minlength=self.num_src)
            t_row = torch.zeros(self.num_src + 1, dtype=torch.int64)
            torch.cumsum(counts, 0, out=t_row[1:])
            t_col = self.dst_of_edge()[perm].contiguous()
            self._transposed = (t_row, t_col, perm.contiguous())
        return self._transposed

"""`MessagePassing`: a Python edge function compiled into a linnet kernel.

A subclass defines `edge(self, src, dst, edge)` and a `reducer`. On the
first call with a given signature (the features' names, roles, dtypes and
feature shapes), `edge` is traced with proxy objects into an expression, and
a linnet module is generated with one entry for the forward aggregation over
the graph's CSR relation and one per differentiable feature for its gradient
(sources through the transposed relation, destinations through the relation,
edges per edge). It is compiled for the CPU by `linnet build`, loaded once,
and cached per signature. The call is a `torch.autograd.Function`.
"""

import hashlib
import re

import numpy as np
import torch

from . import _compiler, _trace
from .graph import Graph

_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_DTYPES = {torch.float32: "f32", torch.float64: "f64"}
_CHECKED_NAMES = set()  # feature names already checked to be identifiers


class Reducer:
    """How messages into one destination are combined."""
    names = ("sum", "mean", "max", "min", "softmax")

    def __init__(self, name):
        if name not in self.names:
            raise ValueError(f"reducer: expected one of {', '.join(self.names)}, found {name!r}")
        self.name = name

    def __repr__(self):
        return f"linnet.{self.name}()"

    def __eq__(self, other):
        return isinstance(other, Reducer) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


def sum():  # noqa: A001 - the reducer's name
    """Sum of the messages (0 for a destination without edges)."""
    return Reducer("sum")


def mean():
    """Mean of the messages (0 for a destination without edges)."""
    return Reducer("mean")


def max():  # noqa: A001
    """Elementwise maximum of the messages (0 for a destination without edges);
    the gradient goes to the maximal message (split evenly between ties)."""
    return Reducer("max")


def min():  # noqa: A001
    """Elementwise minimum of the messages (0 for a destination without edges)."""
    return Reducer("min")


def softmax():
    """Softmax-weighted aggregation: `edge()` returns `(score, value)`, and each
    destination gets `sum_e softmax(score)_e * value_e` over its edges (the
    softmax taken per destination and per feature element; 0 without edges),
    as in graph attention."""
    return Reducer("softmax")


def _np(t):
    return t.detach().contiguous().numpy()


class _Kernel:
    """One compiled signature: the generated source, its artifact and model."""

    def __init__(self, expr, reducer, feats, dtype):
        from . import _core
        self.expr, self.reducer, self.dtype = expr, reducer, dtype
        self.feats = feats  # [(role, name, shape)] the message reads, in order
        self.source, self.dims = _generate(expr, reducer, feats, _DTYPES[dtype])
        key = hashlib.sha256((self.source + repr(sorted(self.dims.items()))).encode()).hexdigest()
        self.artifact = _compiler.build_source(self.source, name=f"mp-{key[:16]}", root="Kernel",
                                               dims=self.dims)
        self.model = _core.Model(self.artifact)
        self.inputs = {e["name"]: [i["name"] for i in e["inputs"]] for e in self.model.entries()}

    def call(self, entry, arrays):
        try:
            inputs = [arrays[n] for n in self.inputs[entry]]
        except KeyError as e:
            raise RuntimeError(f"linnet internal error: entry {entry} lacks {e}") from None
        return torch.from_numpy(self.model.call(entry, inputs)[0])

    def _arrays(self, graph, values, transposed=False):
        arrays = dict(graph.numpy_csr())
        perm = None
        if transposed:
            t_row, t_col, perm = graph.transposed()
            arrays["gt.row_ptr"], arrays["gt.col_idx"] = t_row.numpy(), t_col.numpy()
        for (role, name, _), v in zip(self.feats, values):
            arrays[f"{role}_{name}"] = _np(v)
            if role == "edge" and transposed:
                arrays[f"edget_{name}"] = _np(v.detach()[perm])
        return arrays

    def forward(self, graph, values):
        """The aggregation, and what the backward needs besides (softmax: the
        per-destination maximum score and normalizer)."""
        arrays = self._arrays(graph, values)
        stats = None
        if self.reducer.name == "softmax":
            arrays["k_mx"] = self.call("smax", arrays).numpy()
            arrays["k_den"] = self.call("sden", arrays).numpy()
            stats = (arrays["k_mx"], arrays["k_den"])
        out = self.call("forward", arrays)
        if self.reducer.name != "sum" and graph.num_dst:
            empty = graph.in_degree() == 0
            if bool(empty.any()):
                out[empty] = 0
        return out, stats

    def backward(self, graph, values, out, gout, needs, stats=None):
        if not any(needs):
            return [None] * len(values)
        need_t = any(n and role == "src" for n, (role, _, _) in zip(needs, self.feats))
        arrays = self._arrays(graph, values, transposed=need_t)
        gout = gout.to(self.dtype).contiguous()
        arrays["k_gout"] = gout.numpy()
        red = self.reducer.name
        if red == "mean":
            deg = graph.in_degree().to(self.dtype)
            arrays["k_inv_deg"] = (1.0 / deg.clamp(min=1)).numpy()
        if red == "softmax":
            arrays["k_out"] = _np(out)
            arrays["k_mx"], arrays["k_den"] = stats
        if red in ("max", "min"):
            arrays["k_out"] = _np(out)
            count = self.call("count", arrays)
            arrays["k_gsel"] = (gout / count.clamp(min=1)).contiguous().numpy()
        if any(n and role == "edge" for n, (role, _, _) in zip(needs, self.feats)):
            arrays["k_src_of"] = graph.col_idx.numpy()
            arrays["k_dst_of"] = graph.dst_of_edge().numpy()
        grads = []
        for need, (role, name, _) in zip(needs, self.feats):
            grads.append(self.call(f"grad_{role}_{name}", arrays) if need else None)
        return grads


class _Apply(torch.autograd.Function):
    @staticmethod
    def forward(ctx, kernel, graph, *values):
        out, ctx.stats = kernel.forward(graph, values)
        ctx.kernel, ctx.graph = kernel, graph
        ctx.save_for_backward(*values, out)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, gout):
        *values, out = ctx.saved_tensors
        grads = ctx.kernel.backward(ctx.graph, values, out, gout, ctx.needs_input_grad[2:],
                                    ctx.stats)
        return (None, None, *grads)


class MessagePassing(torch.nn.Module):
    """Subclass with `reducer = linnet.sum()` (or mean/max/min, or softmax with
    `edge()` returning `(score, value)`) and
    `def edge(self, src, dst, edge): return <message>`; call as
    `kernel(graph=g, src={"x": x}, dst={...}, edge={"weight": w})`. Features
    are tensors with one row per node (src: num_src, dst: num_dst) or per edge
    (edge: num_edges, in the graph's input order), float32 or float64, on the
    CPU. The result has one row per destination and the message's feature
    shape."""

    reducer = None
    _kernels = None  # per class: signature -> _Kernel

    def edge(self, src, dst, edge):
        raise NotImplementedError(f"{type(self).__name__} must define edge(self, src, dst, edge)")

    def forward(self, graph, src=None, dst=None, edge=None):
        if not isinstance(graph, Graph):
            raise TypeError(f"graph: expected a linnet.Graph, found {type(graph).__name__}")
        reducer = self.reducer  # the class's, or one set on the instance
        if not isinstance(reducer, Reducer):
            raise TypeError(f"{type(self).__name__}.reducer: expected a reducer (linnet.sum(), "
                            f"mean(), max(), min(), softmax()), found {reducer!r}")
        counts = {"src": graph.num_src, "dst": graph.num_dst, "edge": graph.num_edges}
        given = {}
        for role, feats in (("src", src), ("dst", dst), ("edge", edge)):
            if not feats:
                if feats is None or isinstance(feats, dict):
                    continue
            if not isinstance(feats, dict):
                raise TypeError(f"{role}: expected a dict of feature name -> tensor, found "
                                f"{type(feats).__name__}")
            for name, t in feats.items():
                if name not in _CHECKED_NAMES:
                    if not isinstance(name, str) or not _IDENT.match(name):
                        raise ValueError(f"{role} feature {name!r}: a feature name must be an "
                                         "identifier (letters, digits, _; starting with a letter)")
                    _CHECKED_NAMES.add(name)
                if type(t) is not torch.Tensor:
                    if isinstance(t, np.ndarray):
                        t = torch.from_numpy(t)
                    if not isinstance(t, torch.Tensor):
                        raise TypeError(f"{role} feature {name!r}: expected a torch.Tensor, "
                                        f"found {type(t).__name__}")
                if t.dtype not in _DTYPES:
                    raise TypeError(f"{role} feature {name!r}: expected dtype float32 or float64, found {t.dtype}")
                if t.is_cuda or t.device.type != "cpu":
                    raise ValueError(f"{role} feature {name!r}: expected a CPU tensor, found device {t.device}")
                if t.dim() < 1 or t.shape[0] != counts[role]:
                    raise ValueError(f"{role} feature {name!r}: expected {counts[role]} rows (the graph's "
                                     f"{'num_edges' if role == 'edge' else 'num_' + role}), "
                                     f"found shape {tuple(t.shape)}")
                if role == "edge" and graph.edge_order is not None:
                    t = t.index_select(0, graph.edge_order)  # COO order -> CSR order
                given[(role, name)] = t
        key = (reducer.name,) + tuple(sorted(
            (r, n, t.dtype, t.shape[1:]) for (r, n), t in given.items()))
        cls = type(self)
        if cls.__dict__.get("_kernels") is None:
            cls._kernels = {}
        kernel = cls._kernels.get(key)
        if kernel is None:
            kernel = self._trace(reducer, given)
            cls._kernels[key] = kernel
        values = [given[(r, n)] for r, n, _ in kernel.feats]
        if torch.is_grad_enabled() and any(v.requires_grad for v in values):
            return _Apply.apply(kernel, graph, *values)
        return kernel.forward(graph, values)[0]  # nothing to differentiate

    def _trace(self, reducer, given):
        shapes = {r: {n: tuple(t.shape[1:]) for (rr, n), t in given.items() if rr == r}
                  for r in _trace.ROLES}
        used = set()
        proxies = [_trace.Role(r, shapes[r], used) for r in _trace.ROLES]
        msg = self.edge(*proxies)
        name = type(self).__name__
        if reducer.name == "softmax":
            if not (isinstance(msg, tuple) and len(msg) == 2):
                raise TypeError(f"{name}.edge(): the softmax reducer takes a pair (score, value), "
                                f"found {type(msg).__name__}")
            score, value = (_trace._lift(m) for m in msg)
            _trace.broadcast_shapes(score.shape, value.shape)
            expr = (score, value)
        elif isinstance(msg, _trace.Value):
            expr = (msg.expr,)
        else:
            raise TypeError(f"{name}.edge() must return a traced value computed "
                            f"from src/dst/edge features, found {type(msg).__name__}")
        read = sorted(set().union(*(_trace.leaves(e) for e in expr)))
        if not read:
            raise TypeError(f"{type(self).__name__}.edge() must read at least one feature")
        dtypes = {given[k].dtype for k in read}
        if len(dtypes) != 1:
            raise TypeError(f"{type(self).__name__}.edge(): the features it reads must share one "
                            f"dtype, found {', '.join(sorted(map(str, dtypes)))}")
        feats = [(r, n, shapes[r][n]) for r, n in read]
        return _Kernel(expr, reducer, feats, dtypes.pop())


# ---------------------------------------------------------------------------
# Code generation


def _generate(exprs, reducer, feats, ty):
    expr = exprs[-1]
    shape_m = expr.shape
    if len(exprs) == 2:
        shape_m = _trace.broadcast_shapes(exprs[0].shape, exprs[1].shape)

    K = len(shape_m)
    expr_shape = shape_m
    fvars = [f"f{k}" for k in range(K)]
    fdims = [f"F{k}" for k in range(K)]
    node_dim = {"src": "N", "dst": "M", "edge": "E"}

    # The feature axes are the block's generics, bound at build time to the
    # signature's sizes (-D F0=64): the compiler sees constant row widths.
    block_dims = {fdims[k]: expr_shape[k] for k in range(K)}

    # Per feature: its type's dims and its per-axis index (a var or 0).
    ftype, findex = {}, {}
    for r, n, shape in feats:
        off = K - len(shape)
        dims, idx = [node_dim[r]], []
        for j, size in enumerate(shape):
            k = j + off
            if size == expr_shape[k]:
                dims.append(fdims[k])
                idx.append(fvars[k])
            else:  # size 1, broadcast
                dims.append(f"B_{r}_{n}_{j}")
                block_dims[f"B_{r}_{n}_{j}"] = 1
                idx.append("0")
        ftype[(r, n)] = dims
        findex[(r, n)] = idx

    def tensor(dims):
        return f"Tensor[{', '.join(dims)}; {ty}]"

    def printer(ctx, edge_array="edge"):
        def read(leaf, shape):
            r, n = leaf
            arr = f"{edge_array}_{n}" if r == "edge" else f"{r}_{n}"
            return f"{arr}[{', '.join([ctx[r]] + findex[leaf])}]"
        return _trace.Printer(read)

    def outidx(d):
        return ", ".join([d] + fvars)

    def comp(head, axes):
        return "[" + ", ".join(f"{v}: {d}" for v, d in [head] + axes) + "]"

    def generics(types):
        names = []
        for t in types:
            for d in re.findall(r"\b([A-Z][A-Za-z0-9_]*)\b", t):
                if d not in names and d not in ("Tensor", "Csr") and d not in block_dims:
                    names.append(d)
        return "<" + ", ".join(f"{d}: dim" for d in names) + ">"

    def entry(name, params, result, body):
        types = [t for _, t in params] + [result]
        ps = ",\n            ".join(f"{p}: {t}" for p, t in params)
        gen = generics(types)
        return (f"    pub entry {name}{gen if gen != '<>' else ''}(\n            {ps}) -> {result} {{\n"
                f"        {body}\n    }}\n")

    red = reducer.name
    out_type = tensor(["M"] + fdims)
    # max/min: which messages reached the result. The backward recomputes a
    # message in other loops than the forward's (vectorized differently, a
    # transcendental may differ in its last bits), so "equal" allows a few
    # units in the last place.
    tol = "1.0e-6" if ty == "f32" else "1.0e-14"

    def is_extremum(m, d):
        o = f"k_out[{outidx(d)}]"
        return f"__builtin_abs({m} - {o}) <= {tol} * __builtin_abs({o})"
    g = ("g", "Csr[N, M, E]")
    fparams = [(f"{r}_{n}", tensor(ftype[(r, n)])) for r, n, _ in feats]
    fwd_ctx = {"src": "s", "dst": "d", "edge": "k"}
    axes = list(zip(fvars, fdims))
    extra = [("k_gout", out_type)]
    if red == "softmax":
        pf = printer(fwd_ctx)
        score, value = pf(exprs[0]), pf(exprs[1])
        stats = [("k_mx", out_type), ("k_den", out_type)]
        weight = f"(__builtin_exp({score} - k_mx[{outidx('d')}]) / k_den[{outidx('d')}])"
        entries = [
            entry("smax", [g] + fparams, out_type,
                  f"{comp(('d', 'M'), axes)} max(s, k: g[d]) ({score})"),
            entry("sden", [g] + fparams + stats[:1], out_type,
                  f"{comp(('d', 'M'), axes)} sum(s, k: g[d]) "
                  f"__builtin_exp({score} - k_mx[{outidx('d')}])"),
            entry("forward", [g] + fparams + stats, out_type,
                  f"{comp(('d', 'M'), axes)} sum(s, k: g[d]) ({weight} * {value})")]
        extra += [("k_out", out_type)] + stats
    else:
        msg = printer(fwd_ctx)(expr)
        entries = [entry("forward", [g] + fparams, out_type,
                         f"{comp(('d', 'M'), axes)} {red}(s, k: g[d]) {msg}")]
    if red == "mean":
        extra.append(("k_inv_deg", f"Tensor[M; {ty}]"))
    if red in ("max", "min"):
        extra += [("k_out", out_type), ("k_gsel", out_type)]
        entries.append(entry("count", [g] + fparams + [("k_out", out_type)], out_type,
                             f"{comp(('d', 'M'), axes)} sum(s, k: g[d]) "
                             f"(if {is_extremum(msg, 'd')} {{ 1.0 }} else {{ 0.0 }})"))

    def gm(ctx, p):
        d = ctx["dst"]
        if red == "sum":
            return f"k_gout[{outidx(d)}]"
        if red == "mean":
            return f"(k_gout[{outidx(d)}] * k_inv_deg[{d}])"
        return f"(if {is_extremum(p(expr), d)} {{ k_gsel[{outidx(d)}] }} else {{ 0.0 }})"

    for r, n, shape in feats:
        leaf = (r, n)

        off = K - len(shape)
        own = []  # the gradient's feature axes
        for j, size in enumerate(shape):
            k = j + off
            own.append((fvars[k], fdims[k]) if size == expr_shape[k]
                       else (f"u{j}", f"B_{r}_{n}_{j}"))
        summed = [k for k in range(K)
                  if k < off or shape[k - off] != expr_shape[k]]
        result = tensor(ftype[leaf])
        if r == "src":
            ctx = {"src": "s", "dst": "d", "edge": "k"}
            p = printer(ctx, edge_array="edget")
            params = [("gt", "Csr[M, N, E]")] + [
                (f"edget_{fn}" if fr == "edge" else f"{fr}_{fn}", t)
                for (fr, fn, _), (_, t) in zip(feats, fparams)]
            head, rel = ("s", "N"), "sum(d, k: gt[s]) "
        elif r == "dst":
            ctx = {"src": "s", "dst": "d", "edge": "k"}
            p = printer(ctx)
            params = [g] + fparams
            head, rel = ("d", "M"), "sum(s, k: g[d]) "
        else:
            ctx = {"src": "k_src_of[e]", "dst": "k_dst_of[e]", "edge": "e"}
            p = printer(ctx)
            params = [("k_src_of", "Tensor[E; i64]"), ("k_dst_of", "Tensor[E; i64]")] + fparams
            head, rel = ("e", "E"), ""
        if red == "softmax":
            d = ctx["dst"]
            at = outidx(d)
            alpha = (f"(__builtin_exp({p(exprs[0])} - k_mx[{at}]) / k_den[{at}])")
            parts = []
            dv, ds = _trace.diff(exprs[1], leaf), _trace.diff(exprs[0], leaf)
            if not _trace.is_const(dv, 0.0):
                parts.append(f"({p(dv)} * ({alpha} * k_gout[{at}]))")
            if not _trace.is_const(ds, 0.0):
                parts.append(f"({p(ds)} * ({alpha} * (k_gout[{at}] * "
                             f"({p(exprs[1])} - k_out[{at}]))))")
            term = "(" + " + ".join(parts or ["0.0"]) + ")"
        else:
            term = f"({p(_trace.diff(expr, leaf))} * {gm(ctx, p)})"
        for k in summed:
            term = f"(sum({fvars[k]}: {fdims[k]}) {term})"
        body = f"{comp(head, own)} {rel}{term}"
        entries.append(entry(f"grad_{r}_{n}", params + extra, result, body))

    header = ", ".join(f"{d}: dim" for d in block_dims)
    source = ("// Generated by linnet.MessagePassing: one message-passing kernel and its\n"
              "// gradients.\nmodule linnet_py.kernel\n\n"
              f"pub block Kernel{'<' + header + '>' if header else ''} {{\n"
              + "\n".join(entries) + "}\n")
    return source, block_dims

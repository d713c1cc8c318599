"""`MessagePassing`: a Python edge function compiled into a linnet kernel.

A subclass defines `edge(self, src, dst, edge)` and a `reducer`. On every
call `edge` is traced with proxy objects into an expression (0-d tensors it
reads, a learnable `self.alpha`, become inputs). For each distinct trace (the
expression, the features' roles, names, shapes and dtype) a linnet module is
generated with one entry for the forward aggregation over the graph's CSR
relation and one per differentiable input for its gradient (sources through
the transposed relation, destinations and scalars through the relation,
edges per edge). It is compiled for the CPU by `linnet build`, loaded once,
and cached on the class. The call is a `torch.autograd.Function`.
"""

import hashlib
import re
import warnings

import numpy as np
import torch

from . import _compiler, _trace
from .graph import Graph

_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_DTYPES = {torch.float32: "f32", torch.float64: "f64"}
_CHECKED_NAMES = set()  # feature names already checked to be identifiers
_MANY_KERNELS = 8  # compiled kernels of one class past which a warning says why


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
    """Elementwise minimum of the messages (0 for a destination without edges);
    the gradient goes to the minimal message (split evenly between ties)."""
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
    """One compiled trace: the generated source, its artifact and model."""

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

    def _per_edge(self, graph, arrays):
        arrays["k_src_of"] = graph.col_idx.numpy()
        arrays["k_dst_of"] = graph.dst_of_edge().numpy()

    def forward(self, graph, values, record=False):
        """The aggregation, and what the backward needs besides (`record`):
        softmax the per-destination maximum score and normalizer; max/min
        which messages won."""
        arrays = self._arrays(graph, values)
        red = self.reducer.name
        stats = None
        if red == "softmax":
            arrays["k_mx"] = self.call("smax", arrays).numpy()
            arrays["k_den"] = self.call("sden", arrays).numpy()
            stats = (arrays["k_mx"], arrays["k_den"])
        elif red in ("max", "min") and record:
            # The winners are found among the very messages the result was
            # taken from (computed once, per edge): no tolerance, so a winner
            # that is a small difference of large terms or an infinity keeps
            # its gradient. Exact ties share it evenly.
            self._per_edge(graph, arrays)
            msg = self.call("messages", arrays)
            dst = graph.dst_of_edge()
            idx = dst.reshape((-1,) + (1,) * (msg.dim() - 1)).expand_as(msg)
            with warnings.catch_warnings():  # "scatter_reduce() is in beta" (torch 1.13)
                warnings.simplefilter("ignore", UserWarning)
                out = msg.new_zeros((graph.num_dst,) + tuple(msg.shape[1:])).scatter_reduce_(
                    0, idx, msg, reduce="a" + red, include_self=False)
            won = msg == out.index_select(0, dst)
            count = torch.zeros_like(out).index_add_(0, dst, won.to(out.dtype))
            return out, (won, count)
        out = self.call("forward", arrays)
        if red != "sum" and graph.num_dst:
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
            won, count = stats
            share = gout / count.clamp(min=1)
            gm = (won * share.index_select(0, graph.dst_of_edge())).contiguous()
            arrays["k_gm"] = gm.numpy()
            if need_t:
                arrays["k_gmt"] = gm[graph.transposed()[2]].contiguous().numpy()
        if any(n and role == "edge" for n, (role, _, _) in zip(needs, self.feats)):
            self._per_edge(graph, arrays)
        grads = []
        for need, (role, name, _) in zip(needs, self.feats):
            if not need:
                grads.append(None)
            elif role == "scalar":  # per destination, summed here
                grads.append(self.call(f"grad_{role}_{name}", arrays).sum().reshape(()))
            else:
                grads.append(self.call(f"grad_{role}_{name}", arrays))
        return grads


class _Apply(torch.autograd.Function):
    @staticmethod
    def forward(ctx, kernel, graph, *values):
        out, ctx.stats = kernel.forward(graph, values, record=True)
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
    CPU. `edge()` may also read 0-d float tensors (a learnable
    `self.alpha`): they are inputs of the kernel. The result has one row per
    destination and the message's feature shape."""

    reducer = None
    _kernels = None  # per class: (the trace's key, dtype) -> _Kernel
    _reads = None  # per class: the trace's key -> the (role, name) leaves it reads

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
        # edge() is traced on every call: the kernel is keyed by what the
        # trace produced (the expression, the shapes and dtype of what it
        # reads, the constants it captured), so attributes of the instance
        # that edge() reads can never be frozen into another's kernel.
        expr, scalars = self._trace(reducer, given)
        key = (reducer.name,) + tuple(e.key() for e in expr)
        cls = type(self)
        if cls.__dict__.get("_kernels") is None:
            cls._kernels, cls._reads = {}, {}
        read = cls._reads.get(key)
        if read is None:
            read = cls._reads[key] = sorted(set().union(*(_trace.leaves(e) for e in expr)))
        dtypes = {given[k].dtype for k in read if k[0] != "scalar"}
        if len(dtypes) != 1:
            if len(dtypes) > 1:
                raise TypeError(f"{cls.__name__}.edge(): the features it reads must share one "
                                f"dtype, found {', '.join(sorted(map(str, dtypes)))}")
            dtypes = {t.dtype for t in scalars}  # only scalars: theirs
            if len(dtypes) != 1 or not dtypes <= set(_DTYPES):
                raise TypeError(f"{cls.__name__}.edge(): the scalars it reads must be float32 "
                                f"or float64 and share one dtype, found "
                                f"{', '.join(sorted(map(str, dtypes)))}")
        dtype = next(iter(dtypes))
        kernel = cls._kernels.get((key, dtype))
        if kernel is None:
            shapes = {k: tuple(given[k].shape[1:]) if k[0] != "scalar" else () for k in read}
            kernel = _Kernel(expr, reducer, [(r, n, shapes[(r, n)]) for r, n in read], dtype)
            cls._kernels[(key, dtype)] = kernel
            if len(cls._kernels) == _MANY_KERNELS:
                warnings.warn(f"{cls.__name__}.edge() has been compiled {_MANY_KERNELS} times: "
                              "if a Python number it reads changes between calls, make it a "
                              "0-d tensor (a kernel input) instead", stacklevel=3)
        # A scalar takes the features' dtype, as a 0-d tensor does in PyTorch.
        values = [given[(r, n)] if r != "scalar" else scalars[int(n[1:])].to(dtype)
                  for r, n, _ in kernel.feats]
        if torch.is_grad_enabled() and any(v.requires_grad for v in values):
            return _Apply.apply(kernel, graph, *values)
        return kernel.forward(graph, values)[0]  # nothing to differentiate

    def _trace(self, reducer, given):
        """(expression(s), the 0-d tensors read as `scalar` leaves)."""
        name = type(self).__name__
        with _trace.Scalars() as captured:
            msg = self.edge(*(_trace.Role(r, given) for r in _trace.ROLES))
            if reducer.name == "softmax":
                if not (isinstance(msg, tuple) and len(msg) == 2):
                    raise TypeError(f"{name}.edge(): the softmax reducer takes a pair (score, "
                                    f"value), found {type(msg).__name__}")
                score, value = (_trace._lift(m) for m in msg)
                _trace.broadcast_shapes(score.shape, value.shape)
                expr = (score, value)
            elif isinstance(msg, _trace.Value):
                expr = (msg.expr,)
            else:
                raise TypeError(f"{name}.edge() must return a traced value computed "
                                f"from src/dst/edge features, found {type(msg).__name__}")
        if all(e.op == "const" for e in expr):
            raise TypeError(f"{name}.edge() must read at least one feature")
        return expr, captured.tensors


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

    # Per feature: its type's dims and its per-axis index (a var or 0). A
    # scalar is a rank-0 input.
    ftype, findex = {}, {}
    for r, n, shape in feats:
        if r == "scalar":
            continue
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
            if r == "scalar":
                return f"scalar_{n}"
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
        # A relation's source count is bound at run time from an input's
        # shape: when no tensor has it (no source feature is read), from a
        # placeholder with one byte per node (k_count_N, k_count_M).
        for _, t in list(params):
            m = re.fullmatch(r"Csr\[(\w+), \w+, \w+\]", t)
            if m and not any(re.search(rf"\b{m[1]}\b", u) for _, u in params
                             if u.startswith("Tensor")):
                params = params + [(f"k_count_{m[1]}", f"Tensor[{m[1]}; u8]")]
        types = [t for _, t in params] + [result]
        ps = ",\n            ".join(f"{p}: {t}" for p, t in params)
        gen = generics(types)
        return (f"    pub entry {name}{gen if gen != '<>' else ''}(\n            {ps}) -> {result} {{\n"
                f"        {body}\n    }}\n")

    red = reducer.name
    out_type = tensor(["M"] + fdims)
    g = ("g", "Csr[N, M, E]")
    fparams = [(f"{r}_{n}", ty if r == "scalar" else tensor(ftype[(r, n)])) for r, n, _ in feats]
    fwd_ctx = {"src": "s", "dst": "d", "edge": "k"}
    edge_ctx = {"src": "k_src_of[e]", "dst": "k_dst_of[e]", "edge": "e"}
    per_edge = [("k_src_of", "Tensor[E; i64]"), ("k_dst_of", "Tensor[E; i64]")]
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
        # The messages one per edge (in the relation's order): the forward
        # when recording for backward reduces them, and keeps the winners.
        # The backward takes the upstream gradient routed to each message
        # (k_gm; k_gmt in the transposed relation's edge order).
        entries.append(entry("messages", per_edge + fparams, tensor(["E"] + fdims),
                             f"{comp(('e', 'E'), axes)} {printer(edge_ctx)(expr)}"))
        extra = []

    def gm(ctx, edge_array):
        d = ctx["dst"]
        if red == "sum":
            return f"k_gout[{outidx(d)}]"
        if red == "mean":
            return f"(k_gout[{outidx(d)}] * k_inv_deg[{d}])"
        arr = "k_gmt" if edge_array == "edget" else "k_gm"
        return f"{arr}[{outidx(ctx['edge'])}]"

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
        edge_array = "edge"
        if r == "src":
            ctx = fwd_ctx
            edge_array = "edget"
            params = [("gt", "Csr[M, N, E]")] + [
                (f"edget_{fn}" if fr == "edge" else f"{fr}_{fn}", t)
                for (fr, fn, _), (_, t) in zip(feats, fparams)]
            head, rel = ("s", "N"), "sum(d, k: gt[s]) "
            result = tensor(ftype[leaf])
        elif r in ("dst", "scalar"):
            # A scalar's gradient: per destination here, summed by the caller.
            ctx = fwd_ctx
            params = [g] + fparams
            head, rel = ("d", "M"), "sum(s, k: g[d]) "
            result = tensor(ftype[leaf]) if r == "dst" else tensor(["M"])
        else:
            ctx = edge_ctx
            params = per_edge + fparams
            head, rel = ("e", "E"), ""
            result = tensor(ftype[leaf])
        p = printer(ctx, edge_array=edge_array)
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
            term = f"({p(_trace.diff(expr, leaf))} * {gm(ctx, edge_array)})"
        for k in summed:
            term = f"(sum({fvars[k]}: {fdims[k]}) {term})"
        body = f"{comp(head, own)} {rel}{term}"
        routed = []
        if red in ("max", "min"):
            routed = [("k_gmt", tensor(["E"] + fdims))] if edge_array == "edget" \
                else [("k_gm", tensor(["E"] + fdims))]
        entries.append(entry(f"grad_{r}_{n}", params + extra + routed, result, body))

    header = ", ".join(f"{d}: dim" for d in block_dims)
    source = ("// Generated by linnet.MessagePassing: one message-passing kernel and its\n"
              "// gradients.\nmodule linnet_py.kernel\n\n"
              f"pub block Kernel{'<' + header + '>' if header else ''} {{\n"
              + "\n".join(entries) + "}\n")
    return source, block_dims

"""A plan materialized as a pure-PyTorch module (reference semantics).

`linnet.reference("model.ln", root=..., dims=...)` reads the model's JSON plan
(`linnet plan`) and returns a `torch.nn.Module` whose parameters are the
manifest's tensors (canonical paths) and whose entries evaluate the plan's
Core IR with PyTorch operations, so that autograd differentiates them: for
checking the compiled code and for fine-tuning.

The evaluator is vectorized: inside a comprehension or a reduction, a scalar
is a tensor over the index axes bound so far (left-aligned, size 1 where it
does not depend on an axis); a reduction reduces its own trailing axes.

Supported today: comprehensions at function level, the built-in reducers
(sum, mean, max, min, prod) over dense index domains and (sum, mean, max,
min) over CSR relations (a linnet.Graph argument), `where` filters, tensor indexing
(also by index values read from tensors), arithmetic, comparisons, `if`,
`match` on optional parameters, calls of functions, ops and sub-block
methods, constants, casts and the scalar intrinsics. Not yet: user-defined
reducers, `while`, state, structs, slices, arrays of sub blocks;
they raise NotImplementedError naming the construct.
"""

import json

import torch

from . import _compiler, _core
from .graph import Graph
from .module import _TORCH, _Holder

_BUILTINS = {
    "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "tanh": torch.tanh, "erf": torch.erf, "sin": torch.sin, "cos": torch.cos,
    "abs": torch.abs,
}


class _Block:
    """A sub block in scope: its path prefix and its generics' values."""

    def __init__(self, prefix, env):
        self.prefix, self.env = prefix, env


class _Eval:
    def __init__(self, plan, params, dtype):
        self.plan = plan
        self.params = params
        self.dtype = dtype
        self.funcs = {f["name"]: f for f in plan["functions"]}

    # Dims -----------------------------------------------------------------
    def dim(self, d, env):
        if isinstance(d, int):
            return d
        if "sym" in d:
            if d["sym"] not in env:
                raise NotImplementedError(f"reference: dim {d['name']} is not bound")
            return env[d["sym"]]
        if "op" in d:
            # The compiler's one dim arithmetic (_core.eval_dim: operators
            # fold left over their arguments, `/` and `%` floor, a zero
            # divisor or a 64-bit overflow is an error), over the arguments'
            # values here (a pack's size is this evaluator's to know).
            args = [self.dim(x, env) for x in d["args"]]
            try:
                v = _core.eval_dim(json.dumps({"op": d["op"], "args": args}), {})
            except ValueError as e:
                raise ValueError(f"reference: {e}") from None
            if v is not None:
                return v
        if "value" in d:
            return d["value"]
        raise NotImplementedError(f"reference: dim expression {d}")

    # Values ---------------------------------------------------------------
    @staticmethod
    def lift(x, depth):
        if isinstance(x, torch.Tensor) and x.dim() < depth:
            return x.reshape(tuple(x.shape) + (1,) * (depth - x.dim()))
        return x

    def call(self, name, args, env, block, depth=0):
        """Evaluates a function; inside an index space (depth > 0) its body
        works on the caller's axes."""
        f = self.funcs.get(name)
        if f is None:
            raise NotImplementedError(f"reference: no function {name} in the plan")
        vals = {a["id"]: v for a, v in zip(f["body"]["args"], args)}
        return self.region(f["body"]["ops"], vals, env, block, depth)

    def region(self, ops, vals, env, block, depth):
        for op in ops:
            k = op["kind"]
            if k in ("return", "yield"):
                return vals[op["operands"][0]] if op["operands"] else None
            res = self.op(op, vals, env, block, depth)
            for r, v in zip(op["results"], res if isinstance(res, tuple) else (res,)):
                vals[r["id"]] = v
        return None

    @staticmethod
    def scalar(t):
        return t

    def op(self, op, vals, env, block, depth):
        k, a = op["kind"], op.get("attrs", {})
        args = [vals[i] for i in op["operands"]]
        if k in ("const", "constant"):
            v = a.get("value")
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise NotImplementedError(f"reference: constant {v!r}")
            return v
        if k == "tuple":
            # A list: a Python tuple would read as the op's several results.
            return list(args)
        if k == "tuple.get":
            return args[0][a["index"]]
        if k == "member":
            path = block.prefix + a["member"]
            return self.params.get(path)  # None: an absent optional tensor
        if k == "sub":
            return _Block(block.prefix + a["member"] + ".", None)
        if k == "call":
            callee = a["callee"]
            sub_env = {s: self.dim(d, env) for s, d in a.get("substitution", {}).items()
                       if isinstance(d, int) or "sym" in d or "op" in d}
            if a.get("method"):
                target, args = args[0], args[1:]
                target = _Block(target.prefix, sub_env)
                return self.call(callee, args, {**env, **sub_env}, target, depth)
            return self.call(callee, args, {**env, **sub_env}, block, depth)
        if k == "index":
            t, idx = args[0], args[1:]
            if not isinstance(t, torch.Tensor):
                raise NotImplementedError("reference: indexing a non-tensor")
            ix = []
            for i in idx:
                if isinstance(i, int):
                    ix.append(torch.tensor(i))
                else:
                    ix.append(self.lift(i, depth).long())
            return self.scalar(self.lift(t[tuple(ix)], depth))
        if k == "arith":
            o = a["op"]
            if o == "neg":
                return -args[0]
            x, y = args
            x, y = self.lift(x, depth), self.lift(y, depth)
            if o == "add": return x + y
            if o == "sub": return x - y
            if o == "mul": return x * y
            if o == "div":
                integer = _is_int(x) and _is_int(y)
                return torch.div(x, y, rounding_mode="trunc") if integer and \
                    isinstance(x, torch.Tensor) else (x // y if integer else x / y)
            if o == "mod": return x % y
            if o == "and": return x & y if isinstance(x, torch.Tensor) else (x and y)
            if o == "or": return x | y if isinstance(x, torch.Tensor) else (x or y)
            raise NotImplementedError(f"reference: arith {o}")
        if k == "cmp":
            x, y = (self.lift(v, depth) for v in args)
            o = a.get("pred", a.get("op"))
            return {"eq": lambda: x == y, "ne": lambda: x != y, "lt": lambda: x < y,
                    "le": lambda: x <= y, "gt": lambda: x > y, "ge": lambda: x >= y}[o]()
        if k == "builtin":
            n = a["name"]
            xs = [self.lift(v, depth) for v in args]
            if n in ("max", "min"):
                x, y = (v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=self.dtype)
                        for v in xs)
                return torch.maximum(x, y) if n == "max" else torch.minimum(x, y)
            if n == "pow":
                return torch.pow(xs[0], xs[1])
            if n == "inf":
                return float("inf")
            if n in _BUILTINS:
                x = xs[0] if isinstance(xs[0], torch.Tensor) else torch.tensor(xs[0], dtype=self.dtype)
                return _BUILTINS[n](x)
            raise NotImplementedError(f"reference: intrinsic {n}")
        if k == "cast":
            x = args[0]
            ty = op["results"][0]["type"]
            dt = ty.get("dtype")
            dt = dt if isinstance(dt, str) else env.get(dt.get("var"), "f32") if isinstance(dt, dict) else "f32"
            tdt = _TORCH.get(dt, self.dtype)
            return x.to(tdt) if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=tdt)
        if k == "dim":
            return self.dim(a.get("dim", a), env)
        if k == "if":
            cond = args[0]
            then = self.region(op["regions"][0]["ops"], vals, env, block, depth)
            other = self.region(op["regions"][1]["ops"], vals, env, block, depth) \
                if len(op["regions"]) > 1 else None
            if isinstance(cond, torch.Tensor):
                t, e = (v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=self.dtype)
                        for v in (then, other))
                return torch.where(self.lift(cond, depth), self.lift(t, depth), self.lift(e, depth))
            return then if cond else other
        if k == "match":
            v = args[0]
            arms = a["arms"]
            for arm, reg in zip(arms, op["regions"]):
                if arm["kind"] == "some" and v is not None:
                    inner = dict(vals)
                    for ra in reg["args"]:
                        inner[ra["id"]] = v
                    return self.region(reg["ops"], inner, env, block, depth)
                if arm["kind"] == "none" and v is None:
                    return self.region(reg["ops"], vals, env, block, depth)
            raise NotImplementedError("reference: match arms other than some/none")
        if k == "comprehension":
            if depth:
                raise NotImplementedError("reference: a comprehension inside an index space")
            return self.space(op, vals, env, block, depth, reducer=None)
        if k == "reduce":
            r = a["reducer"]
            if not isinstance(r, str) or r not in ("sum", "mean", "max", "min", "prod"):
                raise NotImplementedError(f"reference: reducer {r!r} (user-defined reducers)")
            return self.space(op, vals, env, block, depth, reducer=r)
        raise NotImplementedError(f"reference: Core IR op '{k}'")

    def space(self, op, vals, env, block, depth, reducer):
        idx = op["attrs"]["indices"]
        reg = op["regions"][0]
        inner = dict(vals)
        n = depth + len(idx)
        sizes, mask = [], None
        binders = iter(reg["args"])
        for k, item in enumerate(idx):
            shape = [1] * n
            if "relation" in item:
                # Over a CSR relation: an axis over all edges, masked to the
                # edges into the target destination (reference semantics;
                # O(destinations x edges)).
                graph = vals[op["operands"][item["relation"]]]
                target = vals[op["operands"][item["target"]]]
                if not isinstance(graph, Graph):
                    raise NotImplementedError("reference: a relation that is not a Graph argument")
                size = graph.num_edges
                shape[depth + k] = size
                edges = torch.arange(size).reshape(shape)
                names = item["names"]
                for j, _ in enumerate(names):
                    ra = next(binders)
                    inner[ra["id"]] = graph.col_idx.reshape(shape) if j == 0 else edges
                m = graph.dst_of_edge().reshape(shape) == self.lift(target, n)
                mask = m if mask is None else mask & m
            else:
                if "domain" not in item:
                    raise NotImplementedError(f"reference: reduction index {item}")
                size = self.dim(item["domain"], env)
                shape[depth + k] = size
                inner[next(binders)["id"]] = torch.arange(size).reshape(shape)
            sizes.append(size)
        v = self.region(reg["ops"], inner, env, block, n)
        if op["attrs"].get("filter"):  # `where`: a second region, same binders
            cond_reg = op["regions"][1]
            cinner = dict(inner)
            for ra, rb in zip(cond_reg["args"], reg["args"]):
                cinner[ra["id"]] = inner[rb["id"]]
            cond = self.region(cond_reg["ops"], cinner, env, block, n)
            cond = self.lift(cond if isinstance(cond, torch.Tensor) else torch.tensor(bool(cond)), n)
            mask = cond if mask is None else mask & cond
        if not isinstance(v, torch.Tensor):
            v = torch.tensor(v, dtype=self.dtype)
        v = self.lift(v, n)
        full = [v.shape[d] if d < depth else sizes[d - depth] for d in range(n)]
        if mask is not None:
            full = list(torch.broadcast_shapes(tuple(full), tuple(mask.shape)))
        v = v.expand(full)
        if reducer is None:
            return v.clone()
        axes = tuple(range(depth, n))
        if mask is not None:
            mask = mask.expand(full)
            if reducer == "sum":
                return torch.where(mask, v, torch.zeros((), dtype=v.dtype)).sum(axes)
            if reducer == "mean":
                total = torch.where(mask, v, torch.zeros((), dtype=v.dtype)).sum(axes)
                return total / mask.sum(axes).clamp(min=1).to(v.dtype)
            if reducer in ("max", "min"):
                fill = float("-inf") if reducer == "max" else float("inf")
                masked = torch.where(mask, v, torch.full((), fill, dtype=v.dtype)).flatten(depth)
                return masked.amax(-1) if reducer == "max" else masked.amin(-1)
            raise NotImplementedError(f"reference: reducer {reducer} over a relation")
        if reducer == "sum": out = v.sum(axes)
        elif reducer == "mean": out = v.mean(axes)
        elif reducer == "prod": out = v.flatten(depth).prod(-1)
        elif reducer == "max": out = v.flatten(depth).amax(-1)
        else: out = v.flatten(depth).amin(-1)
        return self.scalar(out)


def _is_int(x):
    if isinstance(x, torch.Tensor):
        return not x.dtype.is_floating_point
    return isinstance(x, int)


class ReferenceModule(torch.nn.Module):
    """The plan's root block in plain PyTorch; entries are methods."""

    def __init__(self, plan, weights=None):
        super().__init__()
        root = plan["root"]
        self._plan = plan
        self._env = {g["sym"]: g["value"] for g in root["generics"] if "sym" in g}
        dts = [g["value"] for g in root["generics"] if g.get("kind") == "dtype"]
        self._dtype = _TORCH.get(dts[0], torch.float32) if dts else torch.float32
        weights = dict(weights or {})
        self._paths = []
        for t in plan["manifest"]:
            if t.get("kind") not in ("param", "buffer") or t.get("repeat"):
                if t.get("repeat"):
                    raise NotImplementedError("reference: arrays of sub blocks")
                continue
            path = t["path"]
            if t.get("optional") and path not in weights:
                continue
            value = torch.as_tensor(weights[path]).clone() if path in weights else \
                torch.nn.init.normal_(torch.zeros(t["shape"], dtype=_TORCH[t["dtype"]]), std=0.02)
            mod = self
            parts = path.split(".")
            for p in parts[:-1]:
                if p not in mod._modules:
                    mod.add_module(p, _Holder())
                mod = mod._modules[p]
            if t["kind"] == "param":
                mod.register_parameter(parts[-1], torch.nn.Parameter(value))
            else:
                mod.register_buffer(parts[-1], value)
            self._paths.append(path)
        self._entries = {f["name"].rsplit(".", 1)[-1]: f for f in plan["functions"]
                         if f.get("kind") == "entry" and f.get("block") == root["name"]}
        for name in self._entries:
            if not hasattr(type(self), name):
                object.__setattr__(self, name, self._method(name))

    def _method(self, name):
        def method(*args):
            return self.call(name, *args)
        method.__name__ = name
        return method

    def forward(self, *args):
        return self.call("forward", *args)

    def call(self, entry, *args):
        f = self._entries.get(entry)
        if f is None:
            raise ValueError(f"no entry {entry!r} (entries: {', '.join(self._entries)})")
        formal = f["body"]["args"]
        if len(args) != len(formal):
            raise TypeError(f"{entry}() takes {len(formal)} inputs, given {len(args)}")
        env = dict(self._env)
        # A Graph.from_coo is read in CSR order: tensors over its edges are
        # permuted into that order and results back, as LinnetModule does.
        orders = {}
        for fa, v in zip(formal, args):
            if fa["type"].get("kind") == "relation":
                if not isinstance(v, Graph):
                    raise TypeError(f"{entry}(): relation {fa['name']!r}: expected a "
                                    f"linnet.Graph, found {type(v).__name__}")
                for d, n in zip(fa["type"]["dims"], (v.num_src, v.num_dst, v.num_edges)):
                    if isinstance(d, dict) and "sym" in d and d["sym"] not in env:
                        env[d["sym"]] = n
                if v.edge_order is not None:
                    d = fa["type"]["dims"][2]
                    if not (isinstance(d, dict) and "sym" in d):
                        raise NotImplementedError(
                            f"reference: {entry}(): relation {fa['name']!r} has a fixed edge "
                            "count: pass a graph made with Graph.from_csr")
                    orders[d["sym"]] = (v.edge_order, v.edge_order_inverse())

        def over_edges(shape):
            return [(axis, orders[d["sym"]]) for axis, d in enumerate(shape)
                    if isinstance(d, dict) and d.get("sym") in orders]

        args = list(args)
        for k, fa in enumerate(formal):
            if isinstance(args[k], torch.Tensor):
                for axis, (order, _) in over_edges(fa["type"].get("shape", [])):
                    args[k] = args[k].index_select(axis, order)
        for fa, v in zip(formal, args):
            if fa["type"].get("kind") == "relation":
                continue
            if not isinstance(v, torch.Tensor):
                raise TypeError(f"{entry}(): input {fa['name']!r}: expected a torch.Tensor, "
                                f"found {type(v).__name__}")
            shape = fa["type"].get("shape", [])
            for d, n in zip(shape, v.shape):
                if isinstance(d, dict) and "sym" in d and d["sym"] not in env:
                    env[d["sym"]] = int(n)
        sd = self.state_dict(keep_vars=True)
        ev = _Eval(self._plan, {p: sd[p] for p in self._paths}, self._dtype)
        out = ev.call(f["name"], args, env, _Block("", env))
        if orders:
            single = not isinstance(out, (tuple, list))
            outs = [out] if single else list(out)
            for k, r in enumerate(f.get("results", [])[:len(outs)]):
                for axis, (_, inverse) in over_edges(r.get("shape", [])):
                    outs[k] = outs[k].index_select(axis, inverse)
            out = outs[0] if single else type(out)(outs)
        return out


def reference(path, root=None, dims=None, weights=None):
    """The `.ln` model at `path` as a pure-PyTorch ReferenceModule (see the
    module docstring for what it supports)."""
    return ReferenceModule(_compiler.plan_file(path, root=root, dims=dims), weights=weights)

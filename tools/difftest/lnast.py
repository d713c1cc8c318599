"""Expression and statement trees of generated linnet programs.

Every node knows how to print itself as linnet source (as a user would write
it, with the parentheses the grammar needs) and how to evaluate itself with
numpy scalars of the node's dtype. The evaluator is the provisional oracle:
it follows docs/language (floor division and remainder on integers, f32
arithmetic in f32, reductions folded in index order).
"""
import math

import numpy as np

NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "bool": np.bool_}
FLOATS = ("f32", "f64")
INTS = ("i32", "i64")

# Precedence levels of docs/language/06-expressions.md §6.1.
P_OR, P_AND, P_CMP, P_ADD, P_MUL, P_CAST, P_UN, P_POST, P_PRIM = 1, 2, 3, 4, 5, 6, 7, 8, 9


class Dim:
    """A dim as written in a type or used as an i64 value, with its value."""

    def __init__(self, text, val, atomic=True, runtime=False):
        self.text, self.val, self.atomic = text, int(val), atomic
        self.runtime = runtime  # an entry generic: bound only when the entry is called

    def etext(self):
        return self.text if self.atomic else "(" + self.text + ")"

    def __repr__(self):
        return "Dim(%s=%d)" % (self.text, self.val)


class Var:
    """A named tensor (rank 0 for a scalar) visible to generated code."""

    def __init__(self, name, dims, dtype, tname=None, mag=2.0, bits=3, kind="let"):
        self.name, self.dims, self.dtype = name, list(dims), dtype
        self.tname = tname or dtype  # the dtype as written ('T' inside a generic)
        self.mag, self.bits, self.kind = mag, bits, kind

    def type_text(self):
        if self.dtype == "rel":
            return "Csr[%s]" % ", ".join(d.text for d in self.dims)
        if not self.dims:
            return self.tname
        return "Tensor[%s; %s]" % (", ".join(d.text for d in self.dims), self.tname)

    def shape(self):
        return tuple(d.val for d in self.dims)


def float_to_int(v, dtype):
    """Truncation toward zero, saturating; NaN gives 0 (§6.9)."""
    f = float(v)
    if math.isnan(f):
        return NP[dtype](0)
    info = np.iinfo(NP[dtype])
    if f >= info.max:
        return NP[dtype](info.max)
    if f <= info.min:
        return NP[dtype](info.min)
    return NP[dtype](math.trunc(f))


def cast_scalar(v, dtype):
    if dtype == "bool":
        return np.bool_(v)
    if dtype in INTS and isinstance(v, (np.floating, float)):
        return float_to_int(v, dtype)
    return NP[dtype](v)


class Node:
    prec = P_PRIM
    greedy = False  # a trailing body that would swallow a following operator
    typed = True
    dtype = "f32"
    mag = 1.0
    bits = 0  # fractional bits of an exactly representable value; None: inexact

    def kids(self):
        return []

    def set_kid(self, i, n):
        raise IndexError(i)

    def free(self):
        """Names of index variables and lets this node reads."""
        s = set()
        for k in self.kids():
            s |= k.free()
        return s

    def binds(self):
        return set()


def wrap(n, level):
    t = n.render()
    if n.prec < level or n.greedy:
        return "(" + t + ")"
    return t


def literal_text(v, dtype):
    if dtype in FLOATS:
        t = repr(float(v))
        if "e" in t or "inf" in t or "nan" in t:
            t = "%.1f" % v
        return t
    return str(int(v))


class Lit(Node):
    """A numeric or bool literal: untyped (`1.5`), suffixed (`1.5f32`) or cast (`1.5 as T`)."""

    def __init__(self, value, dtype, style="untyped", tname=None):
        self.value, self.dtype, self.style, self.tname = value, dtype, style, tname or dtype
        self.typed = style != "untyped" or dtype == "bool"
        self.mag = abs(float(value)) if dtype != "bool" else 1.0
        v = abs(float(value)) if dtype != "bool" else 0.0
        self.bits = 0
        while self.bits < 8 and v * 2 ** self.bits != int(v * 2 ** self.bits):
            self.bits += 1
        self.prec = P_CAST if style == "cast" else (P_UN if dtype != "bool" and float(value) < 0 else P_PRIM)

    def render(self):
        if self.dtype == "bool":
            return "true" if self.value else "false"
        t = literal_text(self.value, self.dtype)
        if self.style == "suffix":
            return t + self.dtype
        if self.style == "cast":
            return (t if float(self.value) >= 0 else "(" + t + ")") + " as " + self.tname
        return t

    def ev(self, env):
        return cast_scalar(self.value, self.dtype)


class Ref(Node):
    """An index variable, a dim generic as an i64 value, or a rank-0 let."""

    def __init__(self, name, dtype="i64", mag=1.0, bits=0, dimtext=None, val=None):
        self.name, self.dtype, self.mag, self.bits = name, dtype, mag, bits
        self.dimtext, self.val = dimtext, val

    def render(self):
        if self.dimtext is not None:
            return self.dimtext
        return self.name

    @property
    def prec(self):
        if self.dimtext is not None and not self.dimtext.replace("_", "").isalnum():
            return P_PRIM if self.dimtext.startswith("(") else P_ADD
        return P_PRIM

    def free(self):
        return set() if self.dimtext is not None else {self.name}

    def ev(self, env):
        if self.dimtext is not None:
            return np.int64(self.val)
        v = env[self.name]
        return np.int64(v) if isinstance(v, int) else v


class Access(Node):
    """`x[i, j + 1]`: one element of a tensor (every axis indexed)."""

    def __init__(self, var, idx):
        self.var, self.idx = var, list(idx)
        self.dtype, self.mag, self.bits = var.dtype, var.mag, var.bits
        self.prec = P_POST

    def kids(self):
        return self.idx

    def set_kid(self, i, n):
        self.idx[i] = n

    def free(self):
        return Node.free(self) | {self.var.name}

    def render(self):
        if not self.idx:
            return self.var.name
        return "%s[%s]" % (self.var.name, ", ".join(i.render() for i in self.idx))

    def ev(self, env):
        a = env[self.var.name]
        if not self.idx:
            return a[()] if isinstance(a, np.ndarray) else a
        ix = tuple(int(i.ev(env)) for i in self.idx)
        for k, d in zip(ix, a.shape):
            if not 0 <= k < d:
                raise IndexError("oracle: %s index %s out of %s" % (self.var.name, ix, a.shape))
        return a[ix]


def floordiv(a, b):
    return a // b


class Bin(Node):
    OPS = {"+": P_ADD, "-": P_ADD, "*": P_MUL, "/": P_MUL, "%": P_MUL,
           "==": P_CMP, "!=": P_CMP, "<": P_CMP, "<=": P_CMP, ">": P_CMP, ">=": P_CMP,
           "&&": P_AND, "||": P_OR}

    def __init__(self, op, a, b, dtype=None):
        self.op, self.a, self.b = op, a, b
        self.prec = self.OPS[op]
        self.dtype = dtype or (a.dtype if a.typed or not b.typed else b.dtype)
        if self.prec <= P_CMP:
            self.dtype = "bool"
        self.typed = a.typed or b.typed or self.dtype == "bool"
        self._stats()

    def _stats(self):
        a, b, op = self.a, self.b, self.op
        if op in ("+", "-"):
            self.mag = a.mag + b.mag
            self.bits = None if a.bits is None or b.bits is None else max(a.bits, b.bits)
        elif op == "*":
            self.mag = a.mag * b.mag
            self.bits = None if a.bits is None or b.bits is None else a.bits + b.bits
        elif op in ("/", "%"):
            self.mag = a.mag if op == "/" else b.mag
            self.bits = 0 if self.dtype in INTS else None
        else:
            self.mag, self.bits = 1.0, 0
        if self.bits is not None and self.dtype in FLOATS and self.bits + math.log2(self.mag + 1) > 20:
            self.bits = None

    def kids(self):
        return [self.a, self.b]

    def set_kid(self, i, n):
        if i == 0:
            self.a = n
        else:
            self.b = n

    def render(self):
        lp = self.prec if self.prec > P_CMP else self.prec + 1
        if self.prec == P_CMP:
            lp = P_ADD
        rp = self.prec + 1 if self.prec != P_CMP else P_ADD
        a = self.a
        # `sum(i: N) x[i] * x[i] + eps`: a reduction's body stops before + and -.
        if isinstance(a, Reduce) and self.prec in (P_ADD, P_CMP):
            lt = a.render()
        else:
            lt = wrap(a, lp)
        return "%s %s %s" % (lt, self.op, wrap(self.b, rp))

    def ev(self, env):
        op = self.op
        if op == "&&":
            return np.bool_(bool(self.a.ev(env)) and bool(self.b.ev(env)))
        if op == "||":
            return np.bool_(bool(self.a.ev(env)) or bool(self.b.ev(env)))
        t = self.a.dtype if self.a.typed else self.b.dtype
        x, y = cast_scalar(self.a.ev(env), t), cast_scalar(self.b.ev(env), t)
        with np.errstate(all="ignore"):
            if op == "+":
                return x + y
            if op == "-":
                return x - y
            if op == "*":
                return x * y
            if op == "/":
                if t in INTS:
                    if y == 0:
                        raise ZeroDivisionError("oracle: integer division by zero")
                    return NP[t](x // y)
                return x / y
            if op == "%":
                if t in INTS:
                    if y == 0:
                        raise ZeroDivisionError("oracle: integer remainder by zero")
                    return NP[t](x % y)
                return NP[t](np.fmod(x, y))
            return np.bool_({"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y,
                             ">": x > y, ">=": x >= y}[op])


class Un(Node):
    def __init__(self, op, a):
        self.op, self.a = op, a
        self.prec, self.dtype, self.typed = P_UN, a.dtype, a.typed
        self.mag, self.bits = a.mag, a.bits

    def kids(self):
        return [self.a]

    def set_kid(self, i, n):
        self.a = n

    def render(self):
        t = wrap(self.a, P_UN)
        if self.op == "-" and t.startswith("-"):
            t = "(" + t + ")"
        return self.op + t

    def ev(self, env):
        v = self.a.ev(env)
        with np.errstate(all="ignore"):
            return np.bool_(not v) if self.op == "!" else -v


class Cast(Node):
    def __init__(self, a, dtype, tname=None):
        self.a, self.dtype, self.tname = a, dtype, tname or dtype
        self.prec = P_CAST
        self.mag = a.mag
        self.bits = a.bits if (a.dtype in FLOATS) == (dtype in FLOATS) or a.dtype in INTS else 0
        if dtype == "f32" and a.dtype == "f64":
            self.bits = None if a.bits is None else a.bits

    def kids(self):
        return [self.a]

    def set_kid(self, i, n):
        self.a = n

    def render(self):
        return "%s as %s" % (wrap(self.a, P_UN), self.tname)

    def ev(self, env):
        v = self.a.ev(env)
        if self.a.dtype in FLOATS and self.dtype in INTS:
            return float_to_int(v, self.dtype)
        return NP[self.dtype](v)


def _erf(x):
    return math.erf(float(x))


MATH = {
    # name: (arity, numpy function on a scalar of the dtype)
    "exp": (1, np.exp), "log": (1, np.log), "sqrt": (1, np.sqrt),
    "rsqrt": (1, lambda x: type(x)(1) / np.sqrt(x)), "tanh": (1, np.tanh),
    "erf": (1, lambda x: type(x)(_erf(x))), "sin": (1, np.sin), "cos": (1, np.cos),
    "pow": (2, np.power), "abs": (1, np.abs),
    "relu": (1, lambda x: max(x, type(x)(0))),
    "sigmoid": (1, lambda x: type(x)(1) / (type(x)(1) + np.exp(-x))),
    "silu": (1, lambda x: x * (type(x)(1) / (type(x)(1) + np.exp(-x)))),
    "gelu": (1, lambda x: type(x)(0.5) * x * (type(x)(1) + type(x)(_erf(x * type(x)(0.7071067811865476))))),
    "gelu_tanh": (1, lambda x: type(x)(0.5) * x * (type(x)(1) + np.tanh(
        type(x)(0.7978845608028654) * (x + type(x)(0.044715) * x * x * x)))),
    # NaN propagates, as linnet's max/min (and torch.maximum) do; Python's
    # max(0.5, nan) would keep 0.5.
    "max": (2, np.maximum), "min": (2, np.minimum),
}


class Call(Node):
    """A scalar call: std.math op, two-argument max/min, or a generated scalar helper."""

    def __init__(self, fn, args, dtype, mag=1.0, bits=None, impl=None):
        self.fn, self.args, self.dtype = fn, list(args), dtype
        self.mag, self.bits, self.impl = mag, bits, impl
        self.typed = any(a.typed for a in args) or fn not in ("max", "min")
        self.prec = P_POST

    def kids(self):
        return self.args

    def set_kid(self, i, n):
        self.args[i] = n

    def render(self):
        return "%s(%s)" % (self.fn, ", ".join(a.render() for a in self.args))

    def ev(self, env):
        t = self.dtype
        vals = [cast_scalar(a.ev(env), t) for a in self.args]
        if self.impl is not None:
            return self.impl(env, vals)
        with np.errstate(all="ignore"):
            return NP[t](MATH[self.fn][1](*vals))


class If(Node):
    def __init__(self, c, a, b):
        self.c, self.a, self.b = c, a, b
        self.dtype = a.dtype if a.typed or not b.typed else b.dtype
        self.typed = a.typed or b.typed
        self.mag = max(a.mag, b.mag)
        self.bits = None if a.bits is None or b.bits is None else max(a.bits, b.bits)
        self.greedy = True

    def kids(self):
        return [self.c, self.a, self.b]

    def set_kid(self, i, n):
        setattr(self, "cab"[i], n)

    def render(self):
        return "if %s { %s } else { %s }" % (self.c.render(), self.a.render(), self.b.render())

    def ev(self, env):
        return cast_scalar((self.a if self.c.ev(env) else self.b).ev(env), self.dtype)


class Binder:
    """`k: K` or `k: K where filter` in a reduction or comprehension header."""

    def __init__(self, name, dim, filt=None):
        self.name, self.dim, self.filt = name, dim, filt


REDUCERS = ("sum", "max", "min", "mean", "prod")


class Reduce(Node):
    """`sum(k: K) body`, `max(j: S where j <= i) body`, over one or more binders."""

    def __init__(self, red, binders, body, dtype, mag, bits, relation=None):
        self.red, self.binders, self.body = red, binders, body
        self.dtype, self.mag, self.bits = dtype, mag, bits
        self.relation = relation  # (rel Var, dst index node, src name, edge name)
        self.greedy = True
        # `max(k: M) 1.0` takes its dtype from its context, like a literal
        self.typed = body.typed or isinstance(body, Tuple)

    def kids(self):
        ks = [self.body]
        ks += [b.filt for b in self.binders if b.filt is not None]
        return ks

    def set_kid(self, i, n):
        if i == 0:
            self.body = n
            return
        j = 0
        for b in self.binders:
            if b.filt is not None:
                j += 1
                if j == i:
                    b.filt = n

    def free(self):
        s = Node.free(self)
        if self.relation:
            rel, dst, src, edge = self.relation
            s = (s | {rel.name} | dst.free())
        return s - self.binds()

    def binds(self):
        s = {b.name for b in self.binders}
        if self.relation:
            s |= {n for n in self.relation[2:] if n}
        return s

    def header(self):
        if self.relation:
            rel, dst, src, edge = self.relation
            names = src + (", " + edge if edge else "")
            return "%s: %s[%s]" % (names, rel.name, dst.render())
        parts = []
        for b in self.binders:
            parts.append("%s: %s" % (b.name, b.dim.text))
        t = ", ".join(parts)
        filts = [b.filt for b in self.binders if b.filt is not None]
        if filts:
            t += " where " + " && ".join(wrap(f, P_AND) for f in filts)
        return t

    def render(self):
        return "%s(%s) %s" % (self.red, self.header(), wrap(self.body, P_MUL))

    def points(self, env):
        if self.relation:
            rel, dst, src, edge = self.relation
            rp, ci = env[rel.name]
            d = int(dst.ev(env))
            for e in range(int(rp[d]), int(rp[d + 1])):
                pt = {src: int(ci[e])}
                if edge:
                    pt[edge] = e
                yield pt
            return
        import itertools
        for combo in itertools.product(*[range(b.dim.val) for b in self.binders]):
            pt = {b.name: v for b, v in zip(self.binders, combo)}
            e2 = dict(env)
            e2.update(pt)
            if all(b.filt is None or bool(b.filt.ev(e2)) for b in self.binders):
                yield pt

    def ev(self, env):
        t = NP[self.dtype]
        vals = []
        for pt in self.points(env):
            e2 = dict(env)
            e2.update(pt)
            vals.append(cast_scalar(self.body.ev(e2), self.dtype))
        with np.errstate(all="ignore"):
            if self.red == "sum":
                acc = t(0)
                for v in vals:
                    acc = t(acc + v)
                return acc
            if self.red == "prod":
                acc = t(1)
                for v in vals:
                    acc = t(acc * v)
                return acc
            if self.red == "mean":
                acc = t(0)
                for v in vals:
                    acc = t(acc + v)
                if not vals:
                    # an empty mean is 0 (§8.2), as PyG's and DGL's mean aggregation
                    return t(0)
                return t(acc / t(len(vals)))
            if self.red == "max":
                lo = t(-np.inf) if self.dtype in FLOATS else np.iinfo(t).min
                return t(max(vals)) if vals else t(lo)
            if self.red == "min":
                hi = t(np.inf) if self.dtype in FLOATS else np.iinfo(t).max
                return t(min(vals)) if vals else t(hi)
        raise ValueError(self.red)


def neighbour_rows(q, p, k, no_self, r=None):
    """The oracle of std.graph's relations (language §10.5), by brute force:
    each destination's neighbours, nearest first, ties by the smaller source
    index; squared distances in f64, axis by axis; a NaN distance ranks last
    and is never within `r`; `no_self` leaves out pair (i, i)."""
    q, p = np.asarray(q, np.float64), np.asarray(p, np.float64)
    rows = []
    for i in range(q.shape[0]):
        s = np.zeros(p.shape[0])
        for a in range(q.shape[1]):
            t = q[i, a] - p[:, a]
            s = s + t * t
        keep = np.ones(p.shape[0], bool)
        if no_self:
            keep[i] = False
        if r is not None:
            keep &= (r >= 0) & (s <= r * r)
        key = np.where(np.isnan(s), np.inf, s)
        j = np.nonzero(keep)[0]
        rows.append(j[np.lexsort((j, key[j]))][:k])
    return rows


class BuiltRel(Node):
    """`knn_graph<K>(pos)`, `knn<K>(q, p)`, `radius_graph<K>(pos, r)`: a
    relation std.graph builds from positions; its value is (row_ptr,
    col_idx) by brute force of §10.5's semantics."""

    def __init__(self, fn, k, args, radius=None):
        self.fn, self.k, self.args, self.radius = fn, k, list(args), radius
        self.dtype, self.mag, self.bits, self.typed = "rel", 0.0, None, True
        self.prec = P_POST

    def kids(self):
        return []

    def free(self):
        return {a.name for a in self.args}

    def render(self):
        args = [a.name for a in self.args] + ([self.radius.render()] if self.radius is not None else [])
        return "%s<%d>(%s)" % (self.fn, self.k, ", ".join(args))

    def ev(self, env):
        r = None if self.radius is None else np.float64(np.float32(self.radius.ev(env)))
        rows = neighbour_rows(env[self.args[0].name], env[self.args[-1].name], self.k,
                              self.fn.endswith("_graph"), r)
        rp = np.concatenate([[0], np.cumsum([len(x) for x in rows])]).astype(np.int64)
        return rp, np.concatenate([np.zeros(0, np.int64)] + [x.astype(np.int64) for x in rows])


class UserReduce(Reduce):
    """A reduction with a reducer the program declares; `fold` evaluates it."""

    def __init__(self, red, binders, body, dtype, mag, bits, fold, relation=None):
        Reduce.__init__(self, red, binders, body, dtype, mag, bits, relation)
        self.fold = fold

    def render(self):
        b = self.body.render() if isinstance(self.body, Tuple) else wrap(self.body, P_MUL)
        return "%s(%s) %s" % (self.red, self.header(), b)

    def ev(self, env):
        vals = []
        for pt in self.points(env):
            e2 = dict(env)
            e2.update(pt)
            vals.append(self.body.ev(e2))
        return NP[self.dtype](self.fold(vals))


class Tuple(Node):
    def __init__(self, items):
        self.items = list(items)
        self.dtype = items[0].dtype

    def kids(self):
        return self.items

    def set_kid(self, i, n):
        self.items[i] = n

    def render(self):
        return "(" + ", ".join(i.render() for i in self.items) + ")"

    def ev(self, env):
        return tuple(i.ev(env) for i in self.items)


class Block(Node):
    """`{ let a = e; body }` as a scalar expression (a comprehension body)."""

    def __init__(self, lets, body):
        self.lets, self.body = lets, body  # lets: [(name, node)]
        self.dtype, self.mag, self.bits, self.typed = body.dtype, body.mag, body.bits, body.typed

    def kids(self):
        return [n for _, n in self.lets] + [self.body]

    def set_kid(self, i, n):
        if i < len(self.lets):
            self.lets[i] = (self.lets[i][0], n)
        else:
            self.body = n

    def free(self):
        s = self.body.free()
        for name, n in reversed(self.lets):
            s = (s - {name}) | n.free()
        return s

    def binds(self):
        return {name for name, _ in self.lets}

    def render(self):
        return "{ " + "; ".join("let %s = %s" % (k, n.render()) for k, n in self.lets) + \
            "; " + self.body.render() + " }"

    def ev(self, env):
        e2 = dict(env)
        for name, n in self.lets:
            e2[name] = n.ev(e2)
        return self.body.ev(e2)

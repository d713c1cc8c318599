"""Tracing `MessagePassing.edge` into an expression, differentiating it
symbolically, and printing it as linnet source.

An expression is elementwise over the message's feature axes, with NumPy
broadcasting between the features it reads (trailing axes aligned; an axis of
size 1 broadcasts).
"""

import math
import numbers
import threading

import torch

ROLES = ("src", "dst", "edge")


def broadcast_shapes(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"edge(): cannot broadcast feature shapes {a} and {b}")
        out.append(y if x == 1 else x)
    return tuple(out)


class Expr:
    """A node of a traced message. `shape` is its feature shape (no node axis)."""
    __slots__ = ("op", "args", "value", "shape", "_key")

    def __init__(self, op, args=(), value=None, shape=()):
        self.op, self.args, self.value, self.shape = op, tuple(args), value, tuple(shape)
        self._key = None

    def key(self):
        if self._key is None:
            self._key = (self.op, self.value, self.shape) + tuple(a.key() for a in self.args)
        return self._key


def feature(role, name, shape):
    return Expr("feat", value=(role, name), shape=shape)


def const(c):
    return Expr("const", value=float(c))


ZERO, ONE = const(0.0), const(1.0)


def is_const(e, v=None):
    return e.op == "const" and (v is None or e.value == v)


def unary(op, a, param=None):
    if a.op == "const" and param is None:
        f = _CONST_UNARY.get(op)
        if f is not None:
            return const(f(a.value))
    return Expr(op, (a,), value=param, shape=a.shape)


def binary(op, a, b):
    shape = broadcast_shapes(a.shape, b.shape)
    if a.op == "const" and b.op == "const":
        x, y = a.value, b.value
        if op == "add": return const(x + y)
        if op == "sub": return const(x - y)
        if op == "mul": return const(x * y)
        if op == "div" and y != 0: return const(x / y)
    # Simplify the zeros and ones differentiation produces; a simplified
    # result keeps the broadcast shape through a multiplication by one.
    if op == "add":
        if is_const(a, 0.0) and b.shape == shape: return b
        if is_const(b, 0.0) and a.shape == shape: return a
    if op == "sub" and is_const(b, 0.0) and a.shape == shape:
        return a
    if op == "sub" and is_const(a, 0.0):
        return unary("neg", b) if b.shape == shape else Expr("sub", (a, b), shape=shape)
    if op == "mul":
        if is_const(a, 1.0) and b.shape == shape: return b
        if is_const(b, 1.0) and a.shape == shape: return a
        if is_const(a, 0.0) or is_const(b, 0.0): return ZERO
    if op == "div" and is_const(b, 1.0) and a.shape == shape:
        return a
    if op == "div" and is_const(a, 0.0):
        return ZERO
    return Expr(op, (a, b), shape=shape)


_CONST_UNARY = {
    "neg": lambda x: -x, "exp": math.exp, "log": math.log, "sqrt": math.sqrt,
    "tanh": math.tanh, "abs": abs, "sin": math.sin, "cos": math.cos,
    "sigmoid": lambda x: 1 / (1 + math.exp(-x)), "relu": lambda x: max(x, 0.0),
}


# ---------------------------------------------------------------------------
# Proxies handed to edge()


class Value:
    """A traced tensor inside `edge()`: arithmetic, `**` with a constant
    exponent and the unary math below are recorded, nothing is computed."""
    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr

    @property
    def shape(self):
        return self.expr.shape

    def __repr__(self):
        return f"<linnet traced value, feature shape {self.expr.shape}>"

    def __bool__(self):
        raise TypeError("edge(): a traced value has no truth value (data-dependent control "
                        "flow cannot be compiled; use relu, abs or leaky_relu)")

    def _compare(self, other):
        raise TypeError("edge(): traced values cannot be compared: they have no truth value "
                        "at trace time (data-dependent control flow cannot be compiled; use "
                        "relu, abs or leaky_relu)")

    __lt__ = __le__ = __gt__ = __ge__ = _compare

    # Arithmetic
    def __add__(self, o): return _bin("add", self, o)
    def __radd__(self, o): return _bin("add", o, self)
    def __sub__(self, o): return _bin("sub", self, o)
    def __rsub__(self, o): return _bin("sub", o, self)
    def __mul__(self, o): return _bin("mul", self, o)
    def __rmul__(self, o): return _bin("mul", o, self)
    def __truediv__(self, o): return _bin("div", self, o)
    def __rtruediv__(self, o): return _bin("div", o, self)
    def __neg__(self): return Value(unary("neg", self.expr))
    def __pos__(self): return self

    def __pow__(self, p):
        if isinstance(p, numbers.Real) and not isinstance(p, bool):
            p = float(p)
            if p == 2.0:
                return self * self
            if p == 1.0:
                return self
            return Value(unary("pow", self.expr, p))
        raise TypeError(f"edge(): ** takes a constant number as exponent, found "
                        f"{type(p).__name__}")

    # Unary math
    def exp(self): return Value(unary("exp", self.expr))
    def log(self): return Value(unary("log", self.expr))
    def sqrt(self): return Value(unary("sqrt", self.expr))
    def tanh(self): return Value(unary("tanh", self.expr))
    def sigmoid(self): return Value(unary("sigmoid", self.expr))
    def relu(self): return Value(unary("relu", self.expr))
    def abs(self): return Value(unary("abs", self.expr))
    def sin(self): return Value(unary("sin", self.expr))
    def cos(self): return Value(unary("cos", self.expr))

    def leaky_relu(self, negative_slope=0.01):
        return Value(unary("leaky_relu", self.expr, float(negative_slope)))

    __abs__ = abs

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        if name in _TORCH_UNARY and len(args) == 1 and not kwargs:
            return getattr(_as_value(args[0], name), _TORCH_UNARY[name])()
        if name == "leaky_relu":
            slope = args[1] if len(args) > 1 else kwargs.get("negative_slope", 0.01)
            return _as_value(args[0], name).leaky_relu(slope)
        if name in _TORCH_BINARY and len(args) == 2 and not kwargs:
            return _bin(_TORCH_BINARY[name], args[0], args[1])
        if name in _TORCH_DUNDER and len(args) == 2 and not kwargs:
            # A torch.Tensor on the left: a 0-d one becomes a kernel input.
            op, swap = _TORCH_DUNDER[name]
            return _bin(op, args[1], args[0]) if swap else _bin(op, args[0], args[1])
        raise TypeError(f"edge(): {name} is not supported on traced values (supported: "
                        f"+ - * /, neg, ** constant, {', '.join(sorted(_TORCH_UNARY))}, "
                        "leaky_relu)")


_TORCH_UNARY = {n: n for n in ("exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs",
                               "sin", "cos")}
_TORCH_UNARY["neg"] = "__neg__"
_TORCH_UNARY["negative"] = "__neg__"
_TORCH_DUNDER = {"__add__": ("add", False), "__radd__": ("add", True),
                 "__sub__": ("sub", False), "__rsub__": ("sub", True),
                 "__mul__": ("mul", False), "__rmul__": ("mul", True),
                 "__truediv__": ("div", False), "__rtruediv__": ("div", True),
                 "__div__": ("div", False), "__rdiv__": ("div", True)}
_TORCH_BINARY = {"add": "add", "sub": "sub", "subtract": "sub", "mul": "mul",
                 "multiply": "mul", "div": "div", "divide": "div", "true_divide": "div"}


def _as_value(x, what):
    if isinstance(x, Value):
        return x
    raise TypeError(f"edge(): {what} expects a traced value, found {type(x).__name__}")


_tracing = threading.local()  # .scalars: the Scalars of the trace in progress


class Scalars:
    """The 0-d tensors a trace reads (a learnable `self.alpha`): each is a
    kernel input `("scalar", "s<k>")`, numbered in order of first use, so
    that its current value is used on every call and it gets a gradient."""

    def __init__(self):
        self.tensors = []
        self._outer = None

    def __enter__(self):
        self._outer = getattr(_tracing, "scalars", None)
        _tracing.scalars = self
        return self

    def __exit__(self, *exc):
        _tracing.scalars = self._outer

    def leaf(self, t):
        for k, u in enumerate(self.tensors):
            if u is t:
                break
        else:
            k = len(self.tensors)
            self.tensors.append(t)
        return feature("scalar", f"s{k}", ())


def _lift(x):
    if isinstance(x, Value):
        return x.expr
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        return const(x)
    if isinstance(x, torch.Tensor) and x.dim() == 0 and x.dtype.is_floating_point:
        scalars = getattr(_tracing, "scalars", None)
        if scalars is not None:
            if x.device.type != "cpu":
                raise TypeError(f"edge(): a scalar tensor read by edge() must be on the CPU, "
                                f"found device {x.device}")
            return scalars.leaf(x)
    raise TypeError(f"edge(): traced values combine with features, constant numbers and 0-d "
                    f"float tensors (a scalar parameter), found {type(x).__name__}"
                    + (f" of shape {tuple(x.shape)} and dtype {x.dtype} (pass tensors with rows "
                       "as src/dst/edge features)" if isinstance(x, torch.Tensor) else ""))


def _bin(op, a, b):
    return Value(binary(op, _lift(a), _lift(b)))


class Role:
    """`src`, `dst` or `edge` inside edge(): its features as attributes.
    `given` maps (role, name) to the tensor passed for that feature."""
    __slots__ = ("_role", "_given")

    def __init__(self, role, given):
        object.__setattr__(self, "_role", role)
        object.__setattr__(self, "_given", given)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        role = self._role
        t = self._given.get((role, name))
        if t is None:
            have = ", ".join(sorted(n for r, n in self._given if r == role)) or "none"
            raise AttributeError(f"edge(): {role} has no feature {name!r} (given: {have})")
        return Value(feature(role, name, tuple(t.shape[1:])))

    __getitem__ = __getattr__

    def __setattr__(self, name, value):
        raise TypeError("edge(): features are read-only")


# ---------------------------------------------------------------------------
# Differentiation


def diff(e, leaf, memo=None):
    """d e / d leaf, elementwise (`leaf` is a feature's (role, name))."""
    if memo is None:
        memo = {}
    k = e.key()
    if k in memo:
        return memo[k]
    op = e.op
    if op == "feat":
        r = ONE if e.value == leaf else ZERO
    elif op == "const":
        r = ZERO
    else:
        a = e.args[0]
        da = diff(a, leaf, memo)
        if op in ("add", "sub"):
            db = diff(e.args[1], leaf, memo)
            r = binary(op, da, db)
        elif op == "mul":
            b = e.args[1]
            db = diff(b, leaf, memo)
            r = binary("add", binary("mul", da, b), binary("mul", a, db))
        elif op == "div":
            b = e.args[1]
            db = diff(b, leaf, memo)
            r = binary("sub", binary("div", da, b),
                       binary("div", binary("mul", a, db), binary("mul", b, b)))
        elif is_const(da, 0.0):
            r = ZERO
        elif op == "neg":
            r = unary("neg", da)
        elif op == "exp":
            r = binary("mul", e, da)
        elif op == "log":
            r = binary("div", da, a)
        elif op == "sqrt":
            r = binary("div", binary("mul", const(0.5), da), e)
        elif op == "tanh":
            r = binary("mul", binary("sub", ONE, binary("mul", e, e)), da)
        elif op == "sigmoid":
            r = binary("mul", binary("mul", e, binary("sub", ONE, e)), da)
        elif op == "relu":
            r = binary("mul", Expr("step", (a,), value=(1.0, 0.0), shape=a.shape), da)
        elif op == "leaky_relu":
            r = binary("mul", Expr("step", (a,), value=(1.0, e.value), shape=a.shape), da)
        elif op == "abs":
            r = binary("mul", Expr("sign", (a,), shape=a.shape), da)
        elif op == "sin":
            r = binary("mul", unary("cos", a), da)
        elif op == "cos":
            r = binary("mul", unary("neg", unary("sin", a)), da)
        elif op == "pow":
            p = e.value
            r = binary("mul", binary("mul", const(p), unary("pow", a, p - 1.0)), da)
        elif op in ("step", "sign"):
            r = ZERO
        else:
            raise NotImplementedError(op)
    memo[k] = r
    return r


def leaves(e, out=None):
    if out is None:
        out = set()
    if e.op == "feat":
        out.add(e.value)
    for a in e.args:
        leaves(a, out)
    return out


# ---------------------------------------------------------------------------
# Printing as linnet source


def literal(x):
    if math.isinf(x):
        return "__builtin_inf()" if x > 0 else "(0.0 - __builtin_inf())"
    if math.isnan(x):
        raise ValueError("edge(): a NaN constant cannot be compiled")
    s = repr(float(x))
    if "e" in s and "." not in s.split("e")[0]:
        m, ex = s.split("e")
        s = f"{m}.0e{ex}"
    return f"({s})" if x < 0 else s


class Printer:
    """Prints expressions over an index context: `reads[(role, name)]` is the
    indexing of that feature (a function of the feature's shape)."""

    def __init__(self, read):
        self.read = read

    def __call__(self, e):
        op = e.op
        if op == "feat":
            return self.read(e.value, e.shape)
        if op == "const":
            return literal(e.value)
        a = self(e.args[0])
        if op in ("add", "sub", "mul", "div"):
            sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]
            return f"({a} {sym} {self(e.args[1])})"
        if op == "neg":
            return f"(0.0 - {a})"
        if op in ("exp", "log", "sqrt", "tanh", "sin", "cos", "abs"):
            return f"__builtin_{op}({a})"
        if op == "sigmoid":
            return f"(1.0 / (1.0 + __builtin_exp(0.0 - {a})))"
        if op == "relu":
            return f"max({a}, 0.0)"
        if op == "leaky_relu":
            return f"(if {a} > 0.0 {{ {a} }} else {{ {a} * {literal(e.value)} }})"
        if op == "pow":
            return f"__builtin_pow({a}, {literal(e.value)})"
        if op == "step":
            hi, lo = e.value
            return f"(if {a} > 0.0 {{ {literal(hi)} }} else {{ {literal(lo)} }})"
        if op == "sign":
            return f"(if {a} > 0.0 {{ 1.0 }} else {{ if {a} < 0.0 {{ 0.0 - 1.0 }} else {{ 0.0 }} }})"
        raise NotImplementedError(op)

"""Tensor-valued expressions and statements of generated programs."""
import itertools

import numpy as np

from lnast import NP, Node, Dim, Tuple, Var, cast_scalar, wrap, P_PRIM, P_POST


class TNode(Node):
    """A tensor-valued expression: dims (list of Dim) and dtype."""
    dims = ()
    prec = P_PRIM

    def shape(self):
        return tuple(d.val for d in self.dims)


class VarT(TNode):
    def __init__(self, var):
        self.var, self.dims, self.dtype = var, var.dims, var.dtype
        self.mag, self.bits = var.mag, var.bits
        self.tname = var.tname

    def free(self):
        return {self.var.name}

    def render(self):
        return self.var.name

    def ev(self, env):
        return np.asarray(env[self.var.name])


class Comp(TNode):
    """`[i: N, j: M] body`; a tensor body appends its axes (§8.1)."""

    def __init__(self, binders, body):
        self.binders, self.body = binders, body
        self.dims = [b.dim for b in binders] + list(getattr(body, "dims", []))
        self.dtype, self.mag, self.bits = body.dtype, body.mag, body.bits
        self.greedy = True

    def kids(self):
        return [self.body]

    def set_kid(self, i, n):
        self.body = n

    def binds(self):
        return {b.name for b in self.binders}

    def free(self):
        return self.body.free() - self.binds()

    def render(self):
        return "[%s] %s" % (", ".join("%s: %s" % (b.name, b.dim.text) for b in self.binders),
                            self.body.render())

    def ev(self, env):
        out = np.zeros(self.shape(), dtype=NP[self.dtype])
        for combo in itertools.product(*[range(b.dim.val) for b in self.binders]):
            e2 = dict(env)
            for b, v in zip(self.binders, combo):
                e2[b.name] = v
            v = self.body.ev(e2)
            if isinstance(v, np.ndarray):
                out[combo] = v.astype(NP[self.dtype])
            else:
                out[combo] = cast_scalar(v, self.dtype)
        return out


class Whole(TNode):
    """Work on whole tensors of one shape (language §6.9; check types these
    elementwise): `x as T`, `max(x, y)`, `min(x, y)`, `x + y`, `x * y`, `-x`,
    and `!x`, `x && y`, `x || y` of tensors of bools."""

    def __init__(self, op, args, dtype, tname):
        self.op, self.args, self.dtype, self.tname = op, list(args), dtype, tname
        self.dims = list(args[0].dims)
        m = max(a.mag for a in args)
        self.mag = m * m if op == "*" else 2 * m if op == "+" else m
        bits = [a.bits for a in args]
        self.bits = None if any(b is None for b in bits) else \
            (sum(bits) if op == "*" else max(bits))
        if op == "cast" and args[0].dtype != dtype:
            self.bits = None if (args[0].dtype in ("f32", "f64") and dtype not in ("f32", "f64")) else self.bits
        self.prec = P_PRIM

    def kids(self):
        return list(self.args)

    def set_kid(self, i, n):
        self.args[i] = n

    def free(self):
        s = set()
        for a in self.args:
            s |= a.free()
        return s

    def render(self):
        a = [x.render() for x in self.args]
        if self.op == "cast":
            return "(%s as %s)" % (a[0], self.tname)
        if self.op in ("max", "min"):
            return "%s(%s, %s)" % (self.op, a[0], a[1])
        if self.op == "neg":
            return "(-%s)" % a[0]
        if self.op == "!":
            return "(!%s)" % a[0]
        return "(%s %s %s)" % (a[0], self.op, a[1])

    def ev(self, env):
        v = [np.asarray(x.ev(env)) for x in self.args]
        t = NP[self.dtype]
        if self.op == "cast":
            return v[0].astype(t)
        if self.op == "max":
            return np.maximum(v[0], v[1]).astype(t)
        if self.op == "min":
            return np.minimum(v[0], v[1]).astype(t)
        if self.op == "neg":
            return (-v[0]).astype(t)
        if self.op == "!":
            return np.logical_not(v[0])
        if self.op == "&&":
            return np.logical_and(v[0], v[1])
        if self.op == "||":
            return np.logical_or(v[0], v[1])
        if self.op == "+":
            return (v[0] + v[1]).astype(t)
        return (v[0] * v[1]).astype(t)


class SliceT(TNode):
    """`x[i, 1:, ...]`: items are ('idx', node), ('slice', lo, hi, step) or ('all',)."""

    def __init__(self, var, items, dims):
        self.var, self.items, self.dims = var, items, dims
        self.dtype, self.mag, self.bits = var.dtype, var.mag, var.bits
        self.prec = P_POST

    def kids(self):
        return [it[1] for it in self.items if it[0] == "idx"]

    def set_kid(self, i, n):
        k = 0
        for j, it in enumerate(self.items):
            if it[0] == "idx":
                if k == i:
                    self.items[j] = ("idx", n)
                k += 1

    def free(self):
        return Node.free(self) | {self.var.name}

    def render(self):
        parts = []
        for it in self.items:
            if it[0] == "idx":
                parts.append(it[1].render())
            elif it[0] == "all":
                parts.append("...")
            else:
                _, lo, hi, st = it[:4]
                t = (lo or "") + ":" + (hi or "")
                if st:
                    t += ":" + st
                parts.append(t)
        return "%s[%s]" % (self.var.name, ", ".join(parts))

    def ev(self, env):
        a = np.asarray(env[self.var.name])
        key = []
        ax = 0
        for it in self.items:
            if it[0] == "idx":
                key.append(int(it[1].ev(env)))
                ax += 1
            elif it[0] == "all":
                n = a.ndim - (len(self.items) - 1)
                key.extend([slice(None)] * n)
                ax += n
            else:
                key.append(slice(it[4], it[5], it[6]) if len(it) > 4 else slice(None))
                ax += 1
        return a[tuple(key)]


class CallT(TNode):
    """`helper(a, b)` or `sub.forward(a)`: a call of a generated function."""

    def __init__(self, text, fn, args, dims, dtype, inst=None, tname=None):
        self.text, self.fn, self.args, self.dims, self.dtype = text, fn, list(args), dims, dtype
        self.inst = inst
        self.tname = tname  # the result's dtype as the caller writes it (T or f32)
        self.mag, self.bits = fn.mag, fn.bits
        self.prec = P_POST

    def kids(self):
        return self.args

    def set_kid(self, i, n):
        self.args[i] = n

    def free(self):
        s = Node.free(self)
        if self.inst is not None:
            s |= {self.inst.split(".")[0].split("[")[0]}
        return s

    def render(self):
        return "%s(%s)" % (self.text, ", ".join(a.render() for a in self.args))

    def ev(self, env):
        vals = [a.ev(env) for a in self.args]
        return self.fn.call(env, vals, self)


class TupleT(Tuple, TNode):
    """`(a, b)`: an entry's several results, each a tensor or a scalar."""

    def __init__(self, items, types):
        Tuple.__init__(self, items)
        self.types = list(types)  # (dims, dtype, tname)
        self.mag = max(i.mag for i in items)
        self.bits = None


# Statements ------------------------------------------------------------

class Let:
    def __init__(self, var, value, annot=False):
        self.var, self.value, self.annot = var, value, annot

    def render(self):
        if self.annot:
            return "let %s: %s = %s" % (self.var.name, self.var.type_text(), self.value.render())
        return "let %s = %s" % (self.var.name, self.value.render())

    def nodes(self):
        return [self.value]

    def free(self):
        return self.value.free()

    def defines(self):
        return {self.var.name}

    def ev(self, env):
        v = self.value.ev(env)
        if self.var.dtype == "rel":
            env[self.var.name] = v  # (row_ptr, col_idx)
            return
        if isinstance(v, np.ndarray):
            v = v.astype(NP[self.var.dtype])
        else:
            v = cast_scalar(v, self.var.dtype)
        env[self.var.name] = v


class Assign:
    """`cache = value`: a state member replaced (§9.3), or a `var` rebound."""

    def __init__(self, var, value):
        self.var, self.value = var, value

    def render(self):
        return "%s = %s" % (self.var.name, self.value.render())

    def nodes(self):
        return [self.value]

    def free(self):
        return self.value.free() | {self.var.name}

    def defines(self):
        return set()

    def ev(self, env):
        v = self.value.ev(env)
        env[self.var.name] = np.asarray(v).astype(NP[self.var.dtype])
        if "__state__" in env and self.var.name in env["__state_names__"]:
            env["__state__"][env["__state_names__"][self.var.name]] = env[self.var.name]


class Loop:
    """`var h = init` then `while l < K { h = step; l = l + 1 }`."""

    def __init__(self, var, init, step, count, counter):
        self.var, self.init, self.step, self.count, self.counter = var, init, step, count, counter

    def render(self, indent):
        pad = " " * indent
        return "\n".join([
            "var %s = %s" % (self.var.name, self.init.render()),
            pad + "var %s = 0" % self.counter,
            pad + "while %s < %s {" % (self.counter, self.count.text),
            pad + "    %s = %s" % (self.var.name, self.step.render()),
            pad + "    %s = %s + 1" % (self.counter, self.counter),
            pad + "}"])

    def nodes(self):
        return [self.init, self.step]

    def free(self):
        return self.init.free() | (self.step.free() - {self.var.name, self.counter})

    def defines(self):
        return {self.var.name}

    def ev(self, env):
        env[self.var.name] = np.asarray(self.init.ev(env)).astype(NP[self.var.dtype])
        for it in range(self.count.val):
            env[self.counter] = np.int64(it)
            env[self.var.name] = np.asarray(self.step.ev(env)).astype(NP[self.var.dtype])
        env[self.counter] = np.int64(self.count.val)


class IfState:
    """`if cond { s = a } else { s = b }`: state written inside branches."""

    def __init__(self, cond, then, other):
        self.cond, self.then, self.other = cond, then, other

    def render(self, indent):
        pad = " " * indent
        return "if %s {\n%s    %s\n%s} else {\n%s    %s\n%s}" % (
            self.cond.render(), pad, self.then.render(), pad, pad, self.other.render(), pad)

    def nodes(self):
        return [self.cond, self.then.value, self.other.value]

    def free(self):
        return self.cond.free() | self.then.free() | self.other.free()

    def defines(self):
        return set()

    def ev(self, env):
        (self.then if self.cond.ev(env) else self.other).ev(env)

"""Random, well-typed linnet programs with their numpy evaluation.

A program is one root block with one entry. The generator builds typed
trees (lnast, tensors), so every program is well-typed by construction and
its expected output is the trees' own evaluation. Features are switched on
by name; a profile is a set of them (see PROFILES and docs/difftest.md).
"""
import itertools
import math
import random

import numpy as np

from lnast import (BuiltRel, NP, FLOATS, INTS, Dim, Var, Lit, Ref, Access, Bin, Un, Cast, Call, If,
                   Binder, Reduce, UserReduce, Tuple, Block, MATH, cast_scalar)
from tensors import TNode, VarT, Comp, SliceT, CallT, TupleT, Let, Assign, Loop, IfState, Whole

ALL_FEATURES = [
    "idxarith",     # i + 1, 2 * i, N - 1 - i, (i + c) % N in indices
    "casts",        # e as T between f32/f64/i32/i64
    "literals",     # untyped literals everywhere, suffixed, `1.0 as T`, `let one: T = 1.0`
    "math",         # std.math ops and two-argument max/min
    "reduce",       # sum/max/min/mean over dense domains
    "prod",         # prod reductions
    "multibind",    # sum(i: M, j: N)
    "tri",          # triangular filters j <= i
    "nested",       # tensor-bodied and nested comprehensions
    "slices",       # x[1:], x[::2], x[i, ...]
    "blockexpr",    # { let a = ...; a } as a comprehension body
    "scalarlet",    # rank-0 lets
    "helpers",      # generic helper fns
    "blocks",       # sub blocks with params and generics
    "params",       # root params (weights)
    "rootdims",     # root generics bound with -D
    "entrydims",    # entry generics bound from input shapes
    "dimexpr_sig",  # entry signatures with dim expressions (N + 1, 2 * B)
    "csr",          # CSR relations with built-in reducers
    "relmean",      # mean over a relation
    "reducer",      # user-declared reducers (struct state)
    "stdreducer",   # std.math.logsumexp / softmax
    "state",        # state updated each call, run with --repeat
    "ifstate",      # state written inside if branches
    "optparam",     # optional params read with match
    "optsub",       # optional sub blocks
    "subarray",     # arrays of sub blocks
    "while",        # var + while loops
    "if",           # if expressions
    "ints",         # i32/i64 values with exact comparison
    "intdiv",       # integer / and % (floor semantics)
    "bool",         # bool results and logic
    "f64",          # f64 values
    "idxcast",      # an index used as a value: i as f32
    "tanh_erf",     # tanh, erf, gelu, gelu_tanh
    "typedT",       # root block generic over its float dtype T
    "smallidx",     # an index whose domain is smaller than the axis: x[i] with i: N, x: [N + 1]
    "emptyred",     # strict filters (k < i) that leave a reduction empty: its identity
    "untypedcomp",  # a comprehension body that is only untyped literals: [i: N] 0.0
    "intlit",       # untyped integer literals in integer arithmetic: 0 * t[n]
    "trimean",      # mean over a filtered (triangular) domain
    "tensorbody",   # a comprehension whose body is a tensor: [i: N] x[i, ...]
    "letannot",     # `let one: f32 = 0.75`: an annotated let of an untyped literal
    "domonly",      # reductions whose body does not read their binders: sum(k: K) 1.0
    "litcast",      # a literal given its type by a cast: 1.0 as T, (-2.0) as f32
    "stepslice",    # slices with a step: x[::2]
    "childcomp",    # a child block's param read inside a comprehension
    # Forms users write (issue 26); each program records the ones it used.
    "tuple",        # an entry with several results: -> (Tensor[..], Tensor[..])
    "runwhile",     # `while l < S` over an entry generic, known only at run time
    "sharedfn",     # one function called from several call sites and entries
    "guarded",      # reads guarded by a reduction's filter (zero padding)
    "castint",      # casts around integer arithmetic: ((i + 1) / 2) as f32
    "emptyrel",     # mean/max/min over relation rows with no edges
    "dimeq",        # Grid: dim = Image / Patch, where Grid * Patch == Image
    "featrel",      # a GNN aggregation of feature rows: [n: Dst, f: F] red(s, e: fg[n]) h[s, f] ...
    "builtrel",     # the same over a relation built from positions: knn_graph<K>(pos), radius(...)
    "wholeT",       # work on whole tensors: x as f64, max(x, y), x + y, -x
]
FORMS = ["tuple", "runwhile", "sharedfn", "guarded", "castint", "emptyrel", "dimeq", "featrel", "builtrel",
         "wholeT"]

# What agrees today; each feature left out is a known gap in docs/difftest.md.
CI_FEATURES = {"idxarith", "casts", "literals", "math", "reduce", "scalarlet", "nested", "slices",
               "helpers", "params", "rootdims", "entrydims", "tri", "if", "f64", "prod", "ints",
               "blockexpr", "while", "stepslice", "domonly", "idxcast", "tensorbody", "bool", "intlit",
               "trimean", "letannot", "litcast", "smallidx", "untypedcomp", "dimexpr_sig", "emptyred",
               "intdiv", "csr", "reducer", "stdreducer", "state", "ifstate", "blocks", "subarray",
               "optsub", "optparam", "childcomp", "tanh_erf", "relmean", "multibind", "typedT"} | set(FORMS)
PROFILES = {
    "ci": CI_FEATURES,
    "forms": CI_FEATURES,
    "full": set(ALL_FEATURES),
    "none": set(),
}

SMALL_LITS = [0.5, 1.0, 1.5, 2.0, 0.25, 3.0, 0.75]
MAGCAP = {"f32": 32.0, "f64": 64.0, "i32": float(1 << 12), "i64": float(1 << 14), "bool": 1.0}


class Fn:
    """A generated function: helper fn, block method or the entry."""

    def __init__(self, name, kind="fn"):
        self.name, self.kind = name, kind
        self.generics = []      # text of generic params
        self.params = []        # Vars
        self.stmts = []
        self.result = None      # TNode or Node
        self.rdims, self.rdtype, self.rtname = [], "f32", "f32"
        self.block = None
        self.mag, self.bits = 1.0, None
        self.where = ""

    def sig(self):
        g = "<%s>" % ", ".join(self.generics) if self.generics else ""
        ps = ", ".join("%s: %s" % (p.name, p.type_text()) for p in self.params)
        rt = Var("_", self.rdims, self.rdtype, self.rtname).type_text()
        if isinstance(self.result, TupleT):
            rt = "(%s)" % ", ".join(Var("_", d, dt, tn).type_text() for d, dt, tn in self.result.types)
        return "%s %s%s(%s) -> %s%s" % (self.kind, self.name, g, ps, rt, self.where)

    def render(self, indent):
        pad = " " * indent
        out = [pad + ("pub " if self.kind in ("entry",) or self.block else "") + self.sig() + " {"]
        for s in self.stmts:
            if isinstance(s, (Loop, IfState)):
                out.append(pad + "    " + s.render(indent + 4))
            else:
                out.append(pad + "    " + s.render())
        out.append(pad + "    " + self.result.render())
        out.append(pad + "}")
        return "\n".join(out)

    def call(self, env, vals, node=None):
        e = {"__weights__": env["__weights__"], "__state__": env["__state__"], "__state_names__": {}}
        inst = node.inst if node is not None else None
        if self.block is not None:
            prefix = inst + "." if inst else ""
            for m in self.block.params:
                key = prefix + m.name
                if key in env["__weights__"]:
                    e[m.name] = env["__weights__"][key]
            for m in self.block.states:
                e[m.name] = env["__state__"][prefix + m.name]
                e["__state_names__"][m.name] = prefix + m.name
            for s in self.block.subs:
                e["__inst__" + s.name] = prefix + s.name
        for p, v in zip(self.params, vals):
            e[p.name] = v
        for s in self.stmts:
            s.ev(e)
        r = self.result.ev(e)
        if isinstance(self.result, TupleT):
            return tuple(np.asarray(v).astype(NP[dt]) for v, (_, dt, _) in zip(r, self.result.types))
        if isinstance(r, np.ndarray):
            return r.astype(NP[self.rdtype])
        return cast_scalar(r, self.rdtype)


class BlockDef:
    def __init__(self, name):
        self.name = name
        self.generics = []   # text
        self.params = []     # Vars (kind param), .optional attribute
        self.states = []
        self.subs = []       # SubDecl
        self.fns = []
        self.where = ""

    def render(self, pub=False):
        g = "<%s>" % ", ".join(self.generics) if self.generics else ""
        out = ["%sblock %s%s%s {" % ("pub " if pub else "", self.name, g, self.where)]
        for p in self.params:
            if getattr(p, "optional", False):
                out.append("    param %s: %s? = none" % (p.name, p.type_text()))
            else:
                out.append("    param %s: %s" % (p.name, p.type_text()))
        for s in self.states:
            out.append("    state %s: %s" % (s.name, s.type_text()))
        for s in self.subs:
            out.append("    " + s.render())
        for f in self.fns:
            out.append("")
            out.append(f.render(4))
        out.append("}")
        return "\n".join(out)


class SubDecl:
    def __init__(self, name, block, args, count=None, optional=False):
        self.name, self.block, self.args, self.count, self.optional = name, block, args, count, optional

    def render(self):
        t = self.block.name + ("<%s>" % ", ".join(self.args) if self.args else "")
        if self.count is not None:
            return "sub %s: [%s; %s]" % (self.name, t, self.count.text)
        if self.optional:
            return "sub %s: %s? = none" % (self.name, t)
        return "sub %s: %s" % (self.name, t)


class Program:
    def __init__(self):
        self.imports = set()
        self.structs = []    # text
        self.reducers = []   # text
        self.fns = []        # helper Fns
        self.blocks = []     # child BlockDefs
        self.root = None     # BlockDef
        self.entry = None    # Fn
        self.defines = {}    # -D name -> value
        self.inputs = {}     # input name -> np array
        self.relations = {}  # name -> (row_ptr, col_idx)
        self.weights = {}    # path -> np array
        self.repeat = 1
        self.features = set()
        self.entries = []    # the entry Fns; difftest runs each (entries[0] is `entry`)
        self.forms = set()   # the FORMS this program uses

    def all_fns(self):
        return list(self.fns) + [f for b in self.blocks for f in b.fns] + list(self.entries or [self.entry])

    def render(self):
        out = ["// generated by tools/difftest (seed %s)" % getattr(self, "seed", "?"),
               "module difftest.case", ""]
        for mod in sorted({m for m, _ in self.imports}):
            names = sorted({n for m2, n in self.imports if m2 == mod})
            out.append("import %s.{%s}" % (mod, ", ".join(names)))
        if self.imports:
            out.append("")
        for t in self.structs + self.reducers:
            out.append(t)
            out.append("")
        for f in self.fns:
            out.append(f.render(0))
            out.append("")
        for b in self.blocks:
            out.append(b.render())
            out.append("")
        out.append(self.root.render(pub=True))
        return "\n".join(out) + "\n"

    def evaluate(self, entry=None):
        """An entry's results after `repeat` calls (state kept between them)."""
        entry = entry or self.entry
        state = {}
        self._init_state(self.root, "", state)
        env = {"__weights__": dict(self.weights), "__state__": state, "__state_names__": {}}
        for k, v in self.relations.items():
            env[k] = v
        vals = []
        for p in entry.params:
            if p.kind == "relation":
                vals.append(self.relations[p.name])
            else:
                vals.append(self.inputs[p.name])
        r = None
        for _ in range(self.repeat):
            r = entry.call(env, vals)
        if isinstance(r, tuple):
            return [np.asarray(v) for v in r]
        return [np.asarray(r)]

    def _init_state(self, block, prefix, state):
        for s in block.states:
            state[prefix + s.name] = np.zeros(s.shape(), dtype=NP[s.dtype])
        for sub in block.subs:
            if sub.count is not None:
                for i in range(sub.count.val):
                    self._init_state(sub.block, "%s%s.%d." % (prefix, sub.name, i), state)
            else:
                self._init_state(sub.block, prefix + sub.name + ".", state)


class Scope:
    def __init__(self, fn, block=None, tnames=None):
        self.fn, self.block = fn, block
        self.vars = []       # Vars readable here
        self.idx = []        # (name, Dim)
        self.dims = []       # Dims usable as domains/values
        self.tnames = dict(tnames or {})  # dtype -> written name
        self.subs = []       # SubDecls callable here

    def child(self):
        s = Scope(self.fn, self.block, self.tnames)
        s.vars, s.idx, s.dims, s.subs = list(self.vars), list(self.idx), list(self.dims), list(self.subs)
        return s

    def tn(self, dt):
        return self.tnames.get(dt, dt)


class Gen:
    def __init__(self, seed, features, size=1.0):
        self.rng = random.Random(seed)
        self.seed = seed
        self.f = set(features)
        self.counter = itertools.count()
        self.size = size
        self.prog = Program()
        self.prog.features = self.f
        self.prog.seed = seed

    # -- helpers ---------------------------------------------------------
    def name(self, base):
        return "%s%d" % (base, next(self.counter))

    def has(self, feat):
        return feat in self.f

    def chance(self, p):
        return self.rng.random() < p

    def pick(self, xs):
        return self.rng.choice(xs)

    def dtypes(self):
        ds = ["f32"]
        if self.has("f64"):
            ds.append("f64")
        if self.has("ints"):
            ds += ["i32", "i64"]
        return ds

    def rand_array(self, shape, dt):
        shape = tuple(shape)
        if dt in FLOATS:
            return (np.array([self.rng.randint(-16, 16) for _ in range(int(np.prod(shape)))],
                             dtype=np.float64).reshape(shape) / 8.0).astype(NP[dt])
        if dt == "bool":
            return np.array([self.chance(0.5) for _ in range(int(np.prod(shape)))]).reshape(shape)
        return np.array([self.rng.randint(-8, 8) for _ in range(int(np.prod(shape)))],
                        dtype=NP[dt]).reshape(shape)

    def lit(self, dt, sc, style=None):
        if dt == "bool":
            return Lit(self.chance(0.5), "bool")
        if dt in FLOATS:
            v = self.pick(SMALL_LITS) * (-1 if self.chance(0.2) else 1)
        else:
            v = self.rng.randint(-3, 4)
        if style is None:
            if self.has("literals"):
                style = self.pick(["untyped", "untyped", "suffix", "cast"])
            else:
                style = "suffix"
        if dt in INTS and style == "untyped" and not self.has("intlit"):
            style = "suffix"
        if style == "cast" and not self.has("litcast"):
            style = "suffix"
        tname = sc.tn(dt)
        if style == "suffix" and tname != dt:
            style = "cast" if self.has("litcast") else "untyped"
        if dt in FLOATS and style == "untyped" and self.has("literals") and self.chance(0.2) and v == int(v):
            return Lit(int(v), dt, "untyped")  # an integer literal in float context
        return Lit(v, dt, style, tname)

    def tlit(self, v, dt, tname, untyped_ok=False):
        """A literal of type `tname` (a dtype or a generic T) written as the features allow."""
        if untyped_ok and self.has("literals"):
            return Lit(v, dt, "untyped", tname)
        if tname == dt:
            return Lit(v, dt, "suffix", tname)
        if self.has("litcast"):
            return Lit(v, dt, "cast", tname)
        # `2i64 as T`: a typed integer literal converted, not a literal typed by its use
        if v == int(v):
            return Cast(Lit(int(v), "i64", "suffix"), dt, tname)
        return Bin("*", Cast(Lit(int(v * 4), "i64", "suffix"), dt, tname), Lit(0.25, dt, "untyped", tname))

    def typed(self, n, sc):
        """Make every untyped literal of `n` typed when nothing else fixes its type."""
        if n.typed:
            return n
        if isinstance(n, Lit):
            return self.tlit(n.value, n.dtype, sc.tn(n.dtype))
        for i, k in enumerate(n.kids()):
            if not k.typed and k.dtype != "bool":
                n.set_kid(i, self.typed(k, sc))
        n.typed = True
        return n

    # -- index expressions -----------------------------------------------
    def range_of(self, n, sc):
        names = [x for x in n.free() if any(x == i for i, _ in sc.idx)]
        doms = {i: d.val for i, d in sc.idx}
        lo, hi = None, None
        for combo in itertools.product(*[range(doms[x]) for x in names]):
            env = dict(zip(names, combo))
            try:
                v = int(n.ev(env))
            except Exception:
                return None
            lo = v if lo is None else min(lo, v)
            hi = v if hi is None else max(hi, v)
        if lo is None:
            return (0, -1)
        return lo, hi

    def index(self, axis, sc):
        """An i64 index expression into an axis of `axis` (a Dim), always in bounds."""
        cands = []
        one = Lit(1, "i64")
        for (i, d) in sc.idx:
            ri = Ref(i, "i64", mag=d.val)
            cands += [ri] * 4
            if self.has("idxarith"):
                cands.append(Bin("+", ri, Lit(self.rng.randint(1, 2), "i64")))
                cands.append(Bin("-", Bin("-", Ref(d.text, dimtext=d.etext(), val=d.val), one), ri))
                cands.append(Bin("*", Lit(2, "i64"), ri))
                cands.append(Bin("*", ri, Lit(2, "i64")))
                cands.append(Bin("/", ri, Lit(2, "i64")))
                cands.append(Bin("%", Bin("+", ri, Lit(self.rng.randint(1, 3), "i64")),
                                 Ref(axis.text, dimtext=axis.etext(), val=axis.val)))
                cands.append(Call("min", [ri, Bin("-", Ref(axis.text, dimtext=axis.etext(), val=axis.val), one)], "i64"))
                for (j, e) in sc.idx:
                    if j != i and self.has("smallidx"):
                        cands.append(Bin("+", ri, Ref(j, "i64", mag=e.val)))
        self.rng.shuffle(cands)
        doms = {i: d.val for i, d in sc.idx}
        for c in cands:
            r = self.range_of(c, sc)
            if not self.has("smallidx") and any(doms.get(x, axis.val) != axis.val for x in c.free()):
                continue
            if r and r[0] >= 0 and r[1] < axis.val:
                return c
        if axis.val > 0 and self.has("idxarith") and self.chance(0.3):
            return Bin("-", Ref(axis.text, dimtext=axis.etext(), val=axis.val), one)
        return Lit(self.rng.randint(0, max(0, axis.val - 1)), "i64")

    # -- scalar expressions ----------------------------------------------
    def readable(self, sc, dt=None, rank=None):
        # A value written `f32` where the scope writes `T` (a non-generic
        # layer's result in a `T` block) does not mix with the scope's values.
        vs = [v for v in sc.vars if v.dtype != "rel" and (dt is None or v.dtype == dt)
              and (rank is None or len(v.dims) == rank) and all(d.val > 0 for d in v.dims)
              and v.tname == sc.tn(v.dtype)]
        return vs

    def access(self, dt, sc):
        vs = self.readable(sc, dt)
        if not vs and self.has("casts"):
            vs = [v for v in self.readable(sc) if v.dtype != "bool"]
            if vs:
                v = self.pick(vs[-4:] if self.chance(0.6) else vs)
                a = Access(v, [self.index(d, sc) for d in v.dims])
                if dt in INTS and v.dtype in FLOATS and a.bits is None:
                    return None
                return Cast(a, dt, sc.tn(dt))
        if not vs:
            return None
        v = self.pick(vs[-3:] if self.chance(0.6) else vs)
        return Access(v, [self.index(d, sc) for d in v.dims])

    def leaf(self, dt, sc, need_typed):
        if self.has("castint") and dt != "bool" and self.chance(0.12):
            n = self.castint(dt, sc)
            if n is not None:
                return n
        r = self.rng.random()
        if r < 0.6:
            a = self.access(dt, sc)
            if a is not None:
                return a
        if r < 0.75 and sc.idx and dt != "bool" and self.has("idxcast"):
            i, d = self.pick(sc.idx)
            n = Ref(i, "i64", mag=d.val)
            if self.has("idxarith") and self.chance(0.5):
                n = Bin("+", n, Lit(1, "i64"))
            if dt != "i64":
                return Cast(n, dt, sc.tn(dt))
            return n
        if dt == "bool":
            return self.cond(sc, 1)
        lit = self.lit(dt, sc, None if not need_typed else None)
        if need_typed and not lit.typed:
            lit = self.typed(lit, sc)
        return lit

    def castint(self, dt, sc):
        """`((i + 1) / 2) as f32`: integer arithmetic with untyped literals
        under a cast. The cast does not type its operand: the literals are
        integers, `/` floors (docs/language/06-expressions.md)."""
        u = lambda v: Lit(v, "i64", "untyped")
        if sc.idx and self.chance(0.75):
            i, d = self.pick(sc.idx)
            a = Ref(i, "i64", mag=d.val)
        else:
            ints = [v for v in self.readable(sc) if v.dtype in INTS]
            if not ints:
                return None
            v = self.pick(ints)
            a = Access(v, [self.index(x, sc) for x in v.dims])
            u = lambda c, t=v.dtype: Lit(c, t, "untyped")
        form = self.rng.randint(0, 4)
        if form == 0:
            n = Bin("/", Bin("+", a, u(1)), u(2))
        elif form == 1:
            n = Bin("/", a, u(2))
        elif form == 2:
            n = Bin("%", Bin("+", Bin("*", a, u(3)), u(1)), u(4))
        elif form == 3:
            n = Bin("/", Bin("-", Bin("*", u(2), a), u(1)), u(3))
        else:
            n = Bin("-", a, Bin("/", a, u(2)))
        if dt == n.dtype:
            return n
        c = Cast(n, dt, sc.tn(dt))
        c.form = "castint"
        return c

    def ok(self, n, dt):
        return n is not None and n.mag <= MAGCAP[dt]

    def scalar(self, dt, sc, depth, need_typed=True):
        for _ in range(6):
            n = self._scalar(dt, sc, depth, need_typed)
            if self.ok(n, dt):
                if need_typed and not n.typed:
                    n = self.typed(n, sc)
                return n
        n = self.access(dt, sc) or self.typed(self.lit(dt, sc, "suffix"), sc)
        if not self.ok(n, dt):
            n = self.typed(self.lit(dt, sc, "suffix"), sc)
        return n

    def cond(self, sc, depth):
        """A bool that does not depend on float rounding (exact operands only)."""
        r = self.rng.random()
        if sc.idx and r < 0.45:
            i, d = self.pick(sc.idx)
            ri = Ref(i, "i64", mag=d.val)
            rhs = self.pick([Lit(self.rng.randint(0, max(0, d.val - 1)), "i64"),
                             Ref(d.text, dimtext=d.etext(), val=d.val)] +
                            [Ref(j, "i64", mag=e.val) for j, e in sc.idx if j != i])
            if isinstance(rhs, Ref) and rhs.dimtext is not None:
                rhs = Bin("/", rhs, Lit(2, "i64"))
            return Bin(self.pick(["<", "<=", ">", ">=", "==", "!="]), ri, rhs)
        if depth > 0 and self.has("bool") and r < 0.6:
            op = self.pick(["&&", "||"])
            a, b = self.cond(sc, depth - 1), self.cond(sc, depth - 1)
            n = Bin(op, a, b)
            return Un("!", n) if self.chance(0.2) else n
        dts = [d for d in self.dtypes()]
        dt = self.pick(dts)
        for _ in range(4):
            a = self.scalar(dt, sc, min(depth, 1), need_typed=True)
            if a.bits is not None:
                b = self.lit(dt, sc) if self.chance(0.5) else self.scalar(dt, sc, 0, need_typed=False)
                if b.bits is not None:
                    return Bin(self.pick(["<", "<=", ">", ">=", "==", "!="]), a, b)
        if sc.idx:
            i, d = self.pick(sc.idx)
            return Bin("<", Ref(i, "i64", mag=d.val), Lit(max(1, d.val // 2), "i64"))
        return Lit(self.chance(0.5), "bool")

    def _scalar(self, dt, sc, depth, need_typed):
        if dt == "bool":
            return self.cond(sc, depth)
        if depth <= 0:
            return self.leaf(dt, sc, need_typed)
        choices = [("leaf", 3), ("bin", 5), ("neg", 1)]
        if self.has("casts"):
            choices.append(("cast", 1.5))
        if self.has("math"):
            choices.append(("math", 2 if dt in FLOATS else 0.5))
            choices.append(("maxmin", 1))
        if self.has("if"):
            choices.append(("if", 1))
        if self.has("reduce") and depth >= 1:
            choices.append(("reduce", 3))
        if self.has("blockexpr") and depth >= 2:
            choices.append(("block", 0.5))
        if sc.fn is not None and getattr(sc.fn, "_scalar_helpers", None):
            pass
        kind = self.weighted(choices)
        if kind == "leaf":
            return self.leaf(dt, sc, need_typed)
        if kind == "bin":
            ops = ["+", "-", "*", "*", "+"]
            if dt in FLOATS:
                ops.append("/")
            elif self.has("intdiv"):
                ops += ["/", "%"]
            op = self.pick(ops)
            a = self.scalar(dt, sc, depth - 1, need_typed=False)
            if op in ("/", "%"):
                b = self.divisor(dt, sc, depth - 1)
            else:
                b = self.scalar(dt, sc, depth - 1, need_typed=need_typed and not a.typed)
            if not a.typed and not b.typed and need_typed:
                b = self.typed(b, sc)
            n = Bin(op, a, b)
            return n
        if kind == "neg":
            return Un("-", self.scalar(dt, sc, depth - 1, need_typed))
        if kind == "cast":
            src = self.pick([d for d in self.dtypes() if d != dt] or [dt])
            # A cast does not type its operand: `(2 / 4) as f32` divides integers.
            a = self.scalar(src, sc, depth - 1, need_typed=True)
            if src in FLOATS and dt in INTS and a.bits is None:
                return None
            if src == dt:
                return a
            return Cast(a, dt, sc.tn(dt))
        if kind == "maxmin":
            a = self.scalar(dt, sc, depth - 1, need_typed=False)
            b = self.scalar(dt, sc, depth - 1, need_typed=need_typed and not a.typed)
            fn = self.pick(["max", "min"])
            n = Call(fn, [a, b], dt, mag=max(a.mag, b.mag),
                     bits=None if a.bits is None or b.bits is None else max(a.bits, b.bits))
            n.typed = a.typed or b.typed
            return n
        if kind == "math":
            return self.mathcall(dt, sc, depth)
        if kind == "if":
            c = self.cond(sc, 1)
            a = self.scalar(dt, sc, depth - 1, need_typed=False)
            b = self.scalar(dt, sc, depth - 1, need_typed=need_typed and not a.typed)
            return If(c, a, b)
        if kind == "reduce":
            return self.reduction(dt, sc, depth)
        if kind == "block":
            s2 = sc.child()
            name = self.name("e")
            v0 = self.scalar(dt, s2, depth - 1)
            var = Var(name, [], dt, sc.tn(dt), mag=v0.mag, bits=v0.bits)
            s2.vars.append(var)
            body = self.scalar(dt, s2, depth - 1)
            return Block([(name, v0)], body)
        return None

    def weighted(self, choices):
        tot = sum(w for _, w in choices)
        r = self.rng.random() * tot
        for k, w in choices:
            r -= w
            if r <= 0:
                return k
        return choices[-1][0]

    def divisor(self, dt, sc, depth):
        if dt in FLOATS:
            a = self.scalar(dt, sc, max(0, depth - 1))
            lit = self.lit(dt, sc, "untyped" if self.has("literals") else None)
            lit = Lit(1.0 + abs(float(lit.value)), dt, lit.style if lit.style != "untyped" else "untyped", sc.tn(dt))
            self.prog.imports.add(("std.math", "abs"))
            d = Bin("+", Call("abs", [a], dt, mag=a.mag, bits=a.bits), lit)
            d = Bin("+", Call("abs", [a], dt, mag=a.mag, bits=a.bits), lit) if self.chance(0.5) else \
                self.tlit(self.pick([2.0, 4.0, 0.5]), dt, sc.tn(dt), untyped_ok=self.chance(0.5))
            return d
        c = self.rng.choice([2, 3, -2, 5])
        if self.chance(0.4):
            a = self.scalar(dt, sc, 0)
            return Call("max", [a, Lit(1, dt, "untyped" if self.has("intlit") else "suffix")], dt, mag=max(a.mag, 1), bits=0)
        return Lit(c, dt, "untyped" if self.has("intlit") else "suffix")

    def mathcall(self, dt, sc, depth):
        if dt not in FLOATS:
            if self.has("casts") and self.chance(0.5):
                self.prog.imports.add(("std.math", "abs"))
                return Call("abs", [self.scalar(dt, sc, depth - 1)], dt, mag=MAGCAP[dt], bits=0)
            return self.scalar(dt, sc, depth - 1)
        fns = ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "pow", "abs", "relu", "sigmoid", "silu"]
        if self.has("tanh_erf"):
            fns += ["tanh", "erf", "gelu", "gelu_tanh"]
        fn = self.pick(fns)
        a = self.scalar(dt, sc, depth - 1)
        mk = lambda args, mag: self._math(fn, args, dt, mag)
        one = lambda v: self.tlit(v, dt, sc.tn(dt), untyped_ok=True)
        if fn == "exp":
            if a.mag > 4:
                return None
            return mk([a], math.exp(a.mag))
        if fn in ("log", "sqrt", "rsqrt"):
            self.prog.imports.add(("std.math", "abs"))
            pos = Bin("+", Call("abs", [a], dt, mag=a.mag, bits=a.bits), one(self.pick([0.5, 1.0, 2.0])))
            mag = {"log": math.log(a.mag + 2) + 1, "sqrt": math.sqrt(a.mag + 2), "rsqrt": 2.0}[fn]
            return mk([pos], mag)
        if fn == "pow":
            self.prog.imports.add(("std.math", "abs"))
            if a.mag > 4:
                return None
            pos = Bin("+", Call("abs", [a], dt, mag=a.mag, bits=a.bits), one(0.5))
            e = one(self.pick([2.0, 0.5, 1.5, 3.0]))
            return mk([pos, e], (a.mag + 0.5) ** 3)
        if fn in ("sin", "cos", "tanh", "erf", "sigmoid"):
            return mk([a], 1.0)
        return mk([a], a.mag + 1.0)

    def _math(self, fn, args, dt, mag):
        self.prog.imports.add(("std.math", fn))
        bits = args[0].bits if fn in ("abs", "relu") else None
        return Call(fn, args, dt, mag=mag, bits=bits)

    def guarded(self, dt, sc, depth):
        """`sum(k: K where l + k >= P && l + k < L + P) x[l + k - P]`: a read
        out of range for some k, which the filter skips (zero padding)."""
        vs = [v for v in self.readable(sc, dt) if v.dims]
        if not sc.idx or not vs:
            return None
        v = self.pick(vs)
        ax = self.rng.randrange(len(v.dims))
        A = v.dims[ax]
        l, ld = self.pick(sc.idx)
        K = self.pick([Dim("3", 3), Dim("2", 2)] + [d for d in sc.dims if 0 < d.val <= 4])
        pad = self.rng.randint(0, min(2, K.val))
        stride = self.pick([1, 1, 2])
        k = self.name("k")
        u = lambda c: Lit(c, "i64", "untyped")
        pos = lambda: Bin("+", Ref(l, "i64", mag=ld.val) if stride == 1 else
                          Bin("*", u(stride), Ref(l, "i64", mag=ld.val)), Ref(k, "i64", mag=K.val))
        Aref = Ref(A.text, dimtext=A.etext(), val=A.val)
        if pad:
            filt = Bin("&&", Bin(">=", pos(), u(pad)), Bin("<", pos(), Bin("+", Aref, u(pad))))
            at = Bin("-", pos(), u(pad))
        else:
            filt = Bin("<", pos(), Aref)
            at = pos()
        s2 = sc.child()
        s2.idx.append((k, K))
        idx = [at if j == ax else self.index(d, s2) for j, d in enumerate(v.dims)]
        body = Access(v, idx)
        if self.chance(0.5):
            w = self.scalar(dt, s2, max(0, depth - 2))
            body = Bin("*", body, w)
        counts = [sum(1 for kk in range(K.val) if pad <= stride * ll + kk < A.val + pad) for ll in range(ld.val)]
        reds = ["sum", "sum"] + (["max", "mean"] if dt in FLOATS and min(counts or [0]) > 0 else [])
        red = self.pick(reds)
        mag = body.mag * K.val if red == "sum" else body.mag
        bits = body.bits if red in ("sum", "max") else None
        if dt in FLOATS and bits is not None and bits + math.log2(mag + 1) > 20:
            bits = None
        r = Reduce(red, [Binder(k, K, filt)], body, dt, mag, bits)
        r.form = "guarded"
        return r

    def reduction(self, dt, sc, depth):
        if self.has("guarded") and self.chance(0.15):
            r = self.guarded(dt, sc, depth)
            if r is not None and r.mag <= MAGCAP[dt]:
                return r
        reds = ["sum", "max", "min"]
        if dt in FLOATS:
            reds.append("mean")
        if self.has("prod"):
            reds.append("prod")
        red = self.pick(reds)
        s2 = sc.child()
        binders = []
        nb = 2 if self.has("multibind") and self.chance(0.25) else 1
        tri = self.has("tri") and sc.idx and self.chance(0.4)
        if tri and red == "mean" and not self.has("trimean"):
            red = "sum"
        for _ in range(nb):
            k = self.name("k")
            if tri and not binders:
                i, d = self.pick(sc.idx)
                op = self.pick(["<=", "<=", "<", ">=", ">"] if self.has("emptyred") else ["<=", ">="])
                if red == "mean" and op in ("<", ">"):
                    op = op + "="
                filt = Bin(op, Ref(k, "i64", mag=d.val), Ref(i, "i64", mag=d.val))
                if self.has("idxarith") and self.chance(0.2):
                    filt = Bin("&&", filt, Bin("<", Bin("-", Ref(i, "i64"), Ref(k, "i64")), Lit(2, "i64")))
                    if red == "mean" or "<" in op and op != "<=":
                        filt = Bin(op if op in ("<=", ">=") else op + "=", Ref(k, "i64", mag=d.val), Ref(i, "i64", mag=d.val))
                binders.append(Binder(k, d, filt))
                s2.idx.append((k, d))
            else:
                d = self.domain(sc)
                if red == "mean" and d.val == 0:
                    d = Dim("2", 2)
                binders.append(Binder(k, d))
                s2.idx.append((k, d))
        if red == "prod":
            body = self.scalar(dt, s2, max(0, depth - 2))
            n = math.prod(b.dim.val for b in binders)
            if body.mag > 1.5 or n > 8:
                return None
            mag = body.mag ** max(1, n)
        else:
            body = self.scalar(dt, s2, depth - 1, need_typed=False)
            n = math.prod(b.dim.val for b in binders)
            mag = body.mag * n if red == "sum" else body.mag
        if not self.has("domonly") and not (body.free() & {b.name for b in binders}):
            return None
        bits = body.bits if red in ("sum", "max", "min", "prod") else None
        if red == "prod" and body.bits is not None:
            bits = body.bits * max(1, n)
        if dt in FLOATS and bits is not None and bits + math.log2(mag + 1) > 20:
            bits = None
        if red in ("max", "min") and n == 0:
            return None
        if red in ("max", "min") and dt in FLOATS and any(b.filt is not None for b in binders):
            # the identity (-inf) of an empty filtered row is fine to compare, keep it
            pass
        return Reduce(red, binders, body, dt, mag, bits)

    def domain(self, sc):
        ds = [d for d in sc.dims if d.val > 0] or [Dim("3", 3)]
        d = self.pick(ds)
        return d

    # -- tensor-level values ---------------------------------------------
    def comp(self, dt, sc, depth, dims=None):
        s2 = sc.child()
        binders = []
        given = dims
        if dims is None:
            dims = [self.domain(sc) for _ in range(self.weighted([(1, 3), (2, 3), (3, 1)]))]
        for d in dims:
            i = self.name(self.pick(["i", "j", "b", "n"]))
            binders.append(Binder(i, d))
            s2.idx.append((i, d))
        body = None
        if self.has("nested") and self.chance(0.2) and len(dims) >= 2:
            inner = self.comp(dt, s2, depth, dims=dims[1:]) if False else None
            # `[i: N] [j: M] body`: the inner comprehension gives the trailing axes
            s3 = sc.child()
            s3.idx.append((binders[0].name, binders[0].dim))
            inner = self.comp(dt, s3, depth, dims=dims[1:])
            return Comp(binders[:1], inner)
        if given is None and self.has("tensorbody") and self.has("slices") and self.chance(0.15):
            vs = [v for v in self.readable(sc, dt) if len(v.dims) >= 2]
            if vs:
                v = self.pick(vs)
                items = [("idx", self.index(v.dims[0], s2))] + [("all",)]
                body = SliceT(v, items, v.dims[1:])
                return Comp(binders, body)
        names = {b.name for b in binders}
        for _ in range(5):
            # A comprehension of untyped literals bound by `let` takes the
            # default dtype (f32, i64): only there may its body be untyped.
            untyped_ok = self.has("untypedcomp") and dt in ("f32", "i64") and sc.tn(dt) == dt
            body = self.scalar(dt, s2, depth, need_typed=not (untyped_ok and self.chance(0.1)))
            if self.has("domonly") or body.free() & names:
                break
        body = self.typed(body, s2) if not body.typed else body
        return Comp(binders, body)

    def whole(self, sc, rng):
        """Work on whole tensors (check types it elementwise): a cast to
        another dtype, max/min, +, * or - of tensors of one shape and dtype;
        !, && or || of tensors of bools.
        Drawn from `rng`, the feature's own stream."""
        vs = [v for v in self.readable(sc) if v.dims and v.dtype in FLOATS + INTS + ("bool",)]
        if not vs:
            return None
        v = rng.choice(vs)
        x = VarT(v)
        same = [w for w in vs if w.dtype == v.dtype and [d.text for d in w.dims] == [d.text for d in v.dims]]
        y = VarT(rng.choice(same))
        if v.dtype == "bool":
            op = rng.choice(["!", "&&", "||"])
            return Whole(op, [x] if op == "!" else [x, y], "bool", v.tname)
        op = rng.choice(["cast", "cast", "max", "min", "+", "*", "neg"])
        if op == "cast":
            to = [d for d in self.dtypes() if d != v.dtype and (v.dtype in INTS or d in FLOATS)]
            if not to:
                return None
            dt = rng.choice(to)
            n = Whole("cast", [x], dt, sc.tn(dt))
        elif op == "neg":
            n = Whole("neg", [x], v.dtype, v.tname)
        else:
            n = Whole(op, [x, y], v.dtype, v.tname)
        return n if n.mag <= MAGCAP[n.dtype] else None

    def slice_of(self, sc):
        vs = [v for v in self.readable(sc) if v.dims and v.dtype != "rel"]
        if not vs:
            return None
        v = self.pick(vs)
        items, dims = [], []
        for d in v.dims:
            r = self.rng.random()
            if r < 0.3 and d.val >= 2:
                items.append(("slice", "1", None, None, 1, None, None))
                dims.append(Dim("%s - 1" % d.text, d.val - 1, atomic=False))
            elif r < 0.45 and d.val >= 2 and self.has("stepslice"):
                items.append(("slice", None, None, "2", None, None, 2))
                dims.append(Dim("(%s + 1) / 2" % d.text, (d.val + 1) // 2, atomic=False))
            elif r < 0.55 and d.val >= 1 and len(v.dims) > 1 and len(dims) + 1 < len(v.dims) + 1:
                items.append(("idx", Lit(self.rng.randint(0, d.val - 1), "i64")))
            else:
                items.append(("slice", None, None, None, None, None, None))
                dims.append(d)
        if not dims or all(it[0] == "slice" and it[1] is None and it[3] is None for it in items):
            return None
        return SliceT(v, items, dims)

    def let_stmt(self, sc, depth):
        dt = self.pick(self.dtypes())
        if self.has("bool") and self.chance(0.15):
            dt = "bool"
        r = self.rng.random()
        val = None
        if self.has("sharedfn") and sc.subs and self.chance(0.3):
            # a layer called again: from a second call site (experts on token groups)
            val = self.method_call(sc, depth, again=True)
        elif r < 0.12 and self.has("scalarlet") and dt != "bool":
            val = self.scalar(dt, sc, depth + 1)
            if not isinstance(val, Reduce) and self.has("reduce"):
                val = self.reduction(dt, sc, depth + 1) or val
                if not val.typed:
                    # bound alone, `sum(k: K) 1.0` would take the default dtype
                    val = self.typed(val, sc)
        elif r < 0.22 and self.has("slices"):
            val = self.slice_of(sc)
        elif r < 0.40 and self.has("helpers"):
            val = self.helper_call(sc, depth)
        elif r < 0.55 and sc.subs:
            val = self.method_call(sc, depth)
        if val is None:
            val = self.comp(dt, sc, depth)
        vdt = val.dtype
        dims = list(getattr(val, "dims", []))
        tname = sc.tn(vdt)
        if isinstance(val, CallT) and val.tname:
            tname = val.tname
        elif isinstance(val, SliceT):
            tname = val.var.tname
        var = Var(self.name("t"), dims, vdt, tname, mag=val.mag, bits=val.bits)
        annot = self.has("literals") and not dims and self.chance(0.3)
        if annot and isinstance(val, Lit) is False and not dims:
            pass
        if self.has("letannot") and not dims and self.chance(0.15) and vdt in FLOATS:
            # `let one: T = 1.0`
            val = Lit(self.pick(SMALL_LITS), vdt, "untyped")
            var.mag, var.bits = val.mag, val.bits
            annot = True
        return Let(var, val, annot), var

    # -- functions -------------------------------------------------------
    def body(self, fn, sc, nstmts, depth, result_dims=None, result_dt=None):
        for _ in range(nstmts):
            st, var = self.let_stmt(sc, depth)
            fn.stmts.append(st)
            sc.vars.append(var)
            if (self.has("while") or self.has("runwhile")) and var.dims and var.dtype in FLOATS and \
                    self.chance(0.2 if self.has("runwhile") else 0.1):
                fn.stmts.append(self.loop(sc, var))
        # the result: a comprehension over the result dims reading recent values
        dt = result_dt or self.pick([v.dtype for v in sc.vars if v.dims and v.dtype != "rel"] or ["f32"])
        if result_dims is None:
            ok = lambda ds: self.has("dimexpr_sig") or all(d.atomic for d in ds)
            cands = [v for v in sc.vars[-3:] if v.dims and v.dtype == dt and ok(v.dims)]
            atomic = [d for d in sc.dims if d.atomic and d.val > 0] or [Dim("3", 3)]
            result_dims = list(self.pick(cands).dims) if cands else [self.pick(atomic)]
        res = self.comp(dt, sc, depth, dims=result_dims)
        fn.result = res
        fn.rdims, fn.rdtype, fn.rtname = list(res.dims), dt, sc.tn(dt)
        fn.mag, fn.bits = res.mag, res.bits

    def loop(self, sc, var):
        h = Var(self.name("h"), var.dims, var.dtype, var.tname, mag=var.mag, bits=var.bits)
        s2 = sc.child()
        s2.vars.append(h)
        s3 = s2.child()
        binders = []
        for d in var.dims:
            i = self.name("i")
            binders.append(Binder(i, d))
            s3.idx.append((i, d))
        a = Access(h, [Ref(b.name, "i64", mag=b.dim.val) for b in binders])
        half = self.tlit(0.5, var.dtype, var.tname, untyped_ok=True)
        counter = self.name("l")
        count = Dim(str(self.rng.randint(1, 3)), 0)
        count.val = int(count.text)
        runtime = [d for d in sc.dims if d.runtime and d.val > 0]
        other = None
        if self.has("runwhile") and runtime and self.chance(0.7):
            # `while l < S`: a recurrence over an entry generic (the input's
            # sequence length), reading step l of the input
            count = self.pick(runtime)
            s3.idx.append((counter, count))
            xs = [v for v in self.readable(s3, var.dtype) if any(d.text == count.text for d in v.dims)]
            if xs:
                x = self.pick(xs)
                ax = self.pick([j for j, d in enumerate(x.dims) if d.text == count.text])
                other = Access(x, [Ref(counter, "i64", mag=count.val) if j == ax else self.index(d, s3)
                                   for j, d in enumerate(x.dims)])
        if other is None:
            other = self.scalar(var.dtype, s3, 1)
        step = Comp(binders, Bin("+", Bin("*", a, half), Bin("*", half, other)))
        loop = Loop(h, VarT(var), step, count, counter)
        if count.runtime:
            loop.form = "runwhile"
        h.mag = max(var.mag, other.mag)
        h.bits = None
        sc.vars.append(h)
        return loop

    def helper_call(self, sc, depth):
        """A call of a new generic helper fn taking 1-2 tensors from scope."""
        if self.has("sharedfn") and self.chance(0.4):
            r = self.reuse_helper(sc)
            if r is not None:
                return r
        vs = [v for v in self.readable(sc) if v.dims and v.dtype in FLOATS + INTS]
        if not vs:
            return None
        args = [self.pick(vs)]
        more = [v for v in vs if v.dtype == args[0].dtype and v.tname == args[0].tname and v is not args[0]]
        if more and self.chance(0.5):
            args.append(self.pick(more))
        dt = args[0].dtype
        fn = Fn(self.name("helper"))
        generic_dt = dt in FLOATS and (self.chance(0.6) or any(a.tname != a.dtype for a in args))
        dmap = {}
        gens = []
        for a in args:
            for d in a.dims:
                if d.text not in dmap:
                    g = "D%d" % len(dmap)
                    dmap[d.text] = Dim(g, d.val)
                    gens.append(g + ": dim")
        tn = {}
        if generic_dt:
            gens.append("T: dtype(float)")
            tn[dt] = "T"
        fn.generics = gens
        hsc = Scope(fn, tnames=tn)
        hsc.dims = list(dmap.values())
        for k, a in enumerate(args):
            p = Var(self.name("a"), [dmap[d.text] for d in a.dims], a.dtype, tn.get(a.dtype, a.dtype),
                    mag=a.mag, bits=a.bits, kind="param")
            fn.params.append(p)
            hsc.vars.append(p)
        rdims = list(fn.params[0].dims)
        self.body(fn, hsc, self.rng.randint(0, 2), max(1, depth - 1), result_dims=rdims, result_dt=dt)
        self.prog.fns.append(fn)
        # the caller's view of the result dims
        back = {v.text: k for k, v in dmap.items()}
        cdims = [next(d for a in args for d in a.dims if d.text == back[r.text]) for r in rdims]
        fn.calls = 1
        return CallT(fn.name, fn, [VarT(a) for a in args], cdims, dt, tname=args[0].tname)

    def reuse_helper(self, sc, fns=None):
        """A call of a helper some other site already calls: one function
        reached from several call sites (and entries)."""
        opts = []
        for fn in (fns if fns is not None else self.prog.fns):
            if fn is sc.fn or getattr(sc.fn, "name", None) == fn.name:
                continue
            bind, tbind, args = {}, None, []
            for p in fn.params:
                ok = []
                for v in self.readable(sc, p.dtype, len(p.dims)):
                    if p.tname != p.dtype and tbind is not None and v.tname != tbind:
                        continue
                    if p.tname == p.dtype and v.tname != p.dtype:
                        continue
                    b2 = dict(bind)
                    if all(b2.setdefault(g.text, d.text) == d.text and g.val == d.val
                           for g, d in zip(p.dims, v.dims)):
                        ok.append(v)
                if not ok:
                    break
                v = self.pick(ok)
                args.append(v)
                bind.update({g.text: d.text for g, d in zip(p.dims, v.dims)})
                if p.tname != p.dtype:
                    tbind = v.tname
            else:
                opts.append((fn, args, bind, tbind))
        if not opts:
            return None
        fn, args, bind, tbind = self.pick(opts)
        cdims = [next(d for a in args for d in a.dims if d.text == bind[r.text]) for r in fn.rdims]
        fn.calls = getattr(fn, "calls", 1) + 1
        self.prog.forms.add("sharedfn")
        return CallT(fn.name, fn, [VarT(a) for a in args], cdims, fn.rdtype,
                     tname=tbind if fn.rtname != fn.rdtype else fn.rtname)

    def method_call(self, sc, depth, again=False):
        sub = self.pick(sc.subs)
        fn = sub.block.fns[0]
        p = fn.params[0]
        # the block's T as this sub binds it (T or f32), or none
        tbind = sub.args[1] if len(sub.args) > 1 else None
        want = tbind if p.tname != p.dtype else p.tname
        vs = [v for v in self.readable(sc, p.dtype) if [d.val for d in v.dims] == [d.val for d in p.dims]
              and [d.text for d in v.dims] == [d.text for d in sub.outer_dims] and v.tname == want]
        if not vs:
            return None
        arg = self.pick(vs)
        called = getattr(sub, "called", [])
        if sub.count is not None:
            k = self.rng.randint(0, sub.count.val - 1)
            if again and called:
                k = self.pick(called)
            sub.called = called + [k]
            inst = "%s.%d" % (sub.name, k)
            text = "%s[%d].%s" % (sub.name, k, fn.name)
        else:
            inst, text = sub.name, "%s.%s" % (sub.name, fn.name)
        fn.calls = getattr(fn, "calls", 0) + 1
        if fn.calls >= 2:
            self.prog.forms.add("sharedfn")
        return CallT(text, fn, [VarT(arg)], list(sub.outer_dims), p.dtype, inst=inst,
                     tname=tbind if fn.rtname != fn.rdtype else fn.rtname)


# -- user reducers -----------------------------------------------------------
REDUCER_DEFS = {
    "argmax": ("struct ArgMax { value: f32, index: i64 }",
               """reducer argmax: associative, commutative {
    identity() -> ArgMax { ArgMax { value: -3.4e38, index: -1 } }
    lift(value: f32, index: i64) -> ArgMax { ArgMax { value: value, index: index } }
    combine(a: ArgMax, b: ArgMax) -> ArgMax {
        if b.value > a.value || (b.value == a.value && b.index < a.index) { b } else { a }
    }
    finalize(s: ArgMax) -> i64 { s.index }
}"""),
    "average": ("struct MeanState<T: dtype(float)> { total: T, count: T }",
                """reducer average<T: dtype(float)>: associative, commutative {
    identity() -> MeanState<T> { MeanState<T> { total: 0.0, count: 0.0 } }
    lift(x: T) -> MeanState<T> { MeanState<T> { total: x, count: 1.0 } }
    combine(a: MeanState<T>, b: MeanState<T>) -> MeanState<T> {
        MeanState<T> { total: a.total + b.total, count: a.count + b.count }
    }
    finalize(s: MeanState<T>) -> T { if s.count == 0.0 { 0.0 } else { s.total / s.count } }
}"""),
    "sumsq": (None, """reducer sumsq<T: dtype(float)>: associative, commutative {
    identity() -> T { 0.0 }
    lift(x: T) -> T { x * x }
    combine(a: T, b: T) -> T { a + b }
    finalize(s: T) -> T { s }
}"""),
}


def fold_argmax(vals):
    best, bi = np.float32(-3.4e38), -1
    for v, i in vals:
        v = np.float32(v)
        if v > best or (v == best and int(i) < bi):
            best, bi = v, int(i)
    return bi


def fold_average(vals):
    if not vals:
        return 0.0
    t = type(vals[0])
    s = t(0)
    for v in vals:
        s = t(s + v)
    return s / t(len(vals))


def fold_sumsq(vals):
    if not vals:
        return 0.0
    t = type(vals[0])
    s = t(0)
    for v in vals:
        s = t(s + t(v * v))
    return s


def fold_lse(vals):
    if not vals:
        return -np.inf
    t = type(vals[0])
    m = max(vals)
    if np.isinf(m):
        # All -inf (an empty log-sum), or a +inf among them: torch.logsumexp's
        # -inf and +inf, which linnet's std.math.logsumexp gives too; the
        # shifted form would be nan.
        return t(m)
    with np.errstate(invalid="ignore"):
        return t(m + np.log(sum(np.exp(np.float64(v) - np.float64(m)) for v in vals)))


class RelGen(Gen):
    """Relations and user reducers on top of Gen's dense expressions."""

    def reduction(self, dt, sc, depth):
        rels = [v for v in sc.vars if v.dtype == "rel"]
        if rels and self.chance(0.5):
            for rel in rels:
                dsts = [(i, d) for i, d in sc.idx if d.text == rel.dims[1].text]
                if dsts:
                    return self.rel_reduction(dt, sc, depth, rel, self.pick(dsts))
        if dt in FLOATS + ("i64",) and self.chance(0.25) and (self.has("reducer") or self.has("stdreducer")):
            r = self.user_reduction(dt, sc, depth, None)
            if r is not None:
                return r
        return Gen.reduction(self, dt, sc, depth)

    def rel_reduction(self, dt, sc, depth, rel, dst):
        src, edge = self.name("src"), self.name("edge")
        s2 = sc.child()
        s2.idx.append((src, rel.dims[0]))
        s2.idx.append((edge, rel.dims[2]))
        relation = (rel, Ref(dst[0], "i64", mag=dst[1].val), src, edge)
        if self.chance(0.3):
            r = self.user_reduction(dt, sc, depth, relation, s2)
            if r is not None:
                return r
        reds = ["sum", "max", "min"]
        if (self.has("relmean") or self.has("emptyrel")) and dt in FLOATS:
            reds.append("mean")
        red = self.pick(reds)
        body = self.scalar(dt, s2, depth - 1, need_typed=False)
        n = max(1, rel.maxdeg)
        mag = body.mag * n if red == "sum" else body.mag
        bits = body.bits if red != "mean" else None
        uses_edge = edge in body.free()
        r = Reduce(red, [], body, dt, mag, bits, relation=(rel, relation[1], src, edge if uses_edge else None))
        if red in ("max", "min", "mean") and rel.has_empty:
            if red == "mean" and not self.has("emptyrel"):
                return None
            # an isolated node: max/min give the identity, mean gives 0
            r.form = "emptyrel"
            if red in ("max", "min"):
                r.bits = None  # ±inf: never cast to an integer or compared
        return r

    def user_reduction(self, dt, sc, depth, relation, s2=None):
        opts = []
        if self.has("reducer"):
            if dt == "i64":
                opts.append("argmax")
            elif dt in FLOATS:
                opts += ["average", "sumsq"]
        if self.has("stdreducer") and dt in FLOATS and relation is None:
            opts.append("logsumexp")
        if not opts:
            return None
        red = self.pick(opts)
        if s2 is None:
            s2 = sc.child()
            k = self.name("k")
            d = self.domain(sc)
            binders = [Binder(k, d)]
            s2.idx.append((k, d))
            n = d.val
        else:
            binders, k, n = [], relation[2], max(1, relation[0].maxdeg)
        if red == "argmax":
            v = self.scalar("f32", s2, depth - 1)
            if v.bits is None:
                return None
            body = Tuple([v, Ref(k, "i64")])
            fold, mag, bits = fold_argmax, 1 << 10, 0
        else:
            body = self.scalar(dt, s2, depth - 1)
            if red == "logsumexp" and body.mag > 8:
                return None
            fold = {"average": fold_average, "sumsq": fold_sumsq, "logsumexp": fold_lse}[red]
            mag = {"average": body.mag, "sumsq": body.mag * body.mag * n,
                   "logsumexp": body.mag + math.log(n + 1)}[red]
            bits = None
        if red == "logsumexp":
            self.prog.imports.add(("std.math", "logsumexp"))
            if relation is None and n == 0:
                return None
        else:
            st, rd = REDUCER_DEFS[red]
            if st and st not in self.prog.structs:
                self.prog.structs.append(st)
            if rd not in self.prog.reducers:
                self.prog.reducers.append(rd)
        rel = None
        if relation is not None:
            relv, dst, src, edge = relation
            rel = (relv, dst, src, edge if edge in body.free() else None)
        return UserReduce(red, binders, body, dt, mag, bits, fold, relation=rel)


class MatchT(TNode):
    """`match opt { some(p) => a, none => b }` over an optional param or sub."""

    def __init__(self, path, bind, some, none, dims, dtype, present):
        self.path, self.bind, self.some, self.none = path, bind, some, none
        self.dims, self.dtype = dims, dtype
        self.mag, self.bits = max(some.mag, none.mag), None
        self.present = present

    def kids(self):
        return [self.some, self.none]

    def set_kid(self, i, n):
        if i == 0:
            self.some = n
        else:
            self.none = n

    def free(self):
        return ((self.some.free() - {self.bind}) | self.none.free() | {self.path})

    def render(self):
        return "match %s {\n        some(%s) => %s,\n        none => %s,\n    }" % (
            self.path, self.bind, self.some.render(), self.none.render())

    def ev(self, env):
        if self.present(env):
            e2 = dict(env)
            e2[self.bind] = env.get(self.path)
            return self.some.ev(e2)
        return self.none.ev(env)


def generate(seed, features, size=1.0):
    g = RelGen(seed, features, size)
    return g.program()


def _program(g):
    prog = g.prog
    rng = g.rng
    root = BlockDef("Prog")
    prog.root = root
    entry = Fn("main", "entry")
    entry.block = root
    prog.entry = entry
    root.fns.append(entry)
    tn = {}
    if g.has("typedT") and g.chance(0.4):
        tn = {"f32": "T"}
    sc = Scope(entry, root, tn)
    # root generics, bound with -D (or fixed sizes)
    dims = []
    if g.has("rootdims"):
        for nm in ["N", "M", "K"][:rng.randint(1, 3)]:
            v = rng.randint(1, 5)
            prog.defines[nm] = v
            dims.append(Dim(nm, v))
            root.generics.append(nm + ": dim")
    else:
        for v in sorted({rng.randint(1, 5) for _ in range(2)}):
            dims.append(Dim(str(v), v))
    dimeq = None
    if g.has("dimeq") and g.chance(0.25):
        # a derived dim and the equality that relates it (a vision
        # transformer's patches): `Grid: dim = Image / Patch`
        grid, patch = rng.randint(1, 3), rng.randint(1, 3)
        prog.defines["Image"] = grid * patch
        prog.defines["Patch"] = patch
        root.generics += ["Image: dim", "Patch: dim", "Grid: dim = Image / Patch"]
        root.where = " where Grid * Patch == Image"
        dimeq = (Dim("Image", grid * patch), Dim("Patch", patch), Dim("Grid", grid))
        dims += list(dimeq)
        prog.forms.add("dimeq")
    if tn:
        root.generics.append("T: dtype(float) = f32")
    edims = []
    if g.has("entrydims"):
        for nm in ["B", "S"][:rng.randint(1, 2)]:
            v = rng.randint(1, 4)
            edims.append(Dim(nm, v, runtime=True))
            entry.generics.append(nm + ": dim")
    alld = dims + edims
    sc.dims = list(alld)
    if g.has("dimexpr_sig") and g.chance(0.4):
        d = g.pick(alld)
        extra = g.pick([Dim("%s + 1" % d.text, d.val + 1, False), Dim("2 * %s" % d.etext(), 2 * d.val, False)])
        if len(dims) >= 2 and g.chance(0.3):
            extra = Dim("%s * %s" % (dims[0].text, dims[1].text), dims[0].val * dims[1].val, False)
        sc.dims.append(extra)
    # entry inputs
    bound = set()
    for k in range(rng.randint(1, 3)):
        rank = rng.randint(1, 2)
        ds = [g.pick(sc.dims) for _ in range(rank)]
        dt = g.pick(g.dtypes())
        v = Var("x%d" % k, ds, dt, sc.tn(dt), mag=2.0, bits=3 if dt in FLOATS else 0, kind="input")
        if dt in INTS:
            v.mag = 8.0
        entry.params.append(v)
        sc.vars.append(v)
        prog.inputs[v.name] = g.rand_array(v.shape(), dt)
        bound |= {d.text for d in ds}
    # every entry generic must be bound by an input's axis
    for d in edims:
        if d.text not in bound:
            v = Var("x%d" % len(entry.params), [d], "f32", sc.tn("f32"), mag=2.0, bits=3, kind="input")
            entry.params.append(v)
            sc.vars.append(v)
            prog.inputs[v.name] = g.rand_array(v.shape(), "f32")
    for v in entry.params:
        for d in v.dims:
            if not d.atomic and not any(d.text in (e.text for e in w.dims) for w in entry.params if w is not v and all(x.atomic for x in w.dims)):
                pass
    if dimeq:
        img = Var("img", [dimeq[0]], "f32", sc.tn("f32"), mag=2.0, bits=3, kind="input")
        entry.params.append(img)
        sc.vars.append(img)
        prog.inputs[img.name] = g.rand_array(img.shape(), "f32")
    # relations
    if (g.has("csr") or g.has("emptyrel")) and g.chance(0.7 if g.has("emptyrel") else 0.5):
        src = g.pick(alld[:len(dims)] or alld)
        dst = g.pick(alld[:len(dims)] or alld)
        e_name = "E"
        degs = [rng.randint(0, 3) for _ in range(dst.val)]
        if g.has("emptyrel") and degs and g.chance(0.6):
            degs[rng.randrange(len(degs))] = 0  # an isolated node
        if src.val == 0:
            degs = [0] * dst.val
        col = [rng.randint(0, src.val - 1) for _ in range(sum(degs))]
        rp = np.concatenate([[0], np.cumsum(degs)]).astype(np.int64)
        e = Dim(e_name, len(col))
        entry.generics.append("E: dim")
        rel = Var("g", [src, dst, e], "rel", kind="relation")
        rel.maxdeg, rel.has_empty = max(degs) if degs else 0, 0 in degs
        entry.params.append(rel)
        sc.vars.append(rel)
        prog.relations["g"] = (rp, np.array(col, dtype=np.int64))
        if len(col) > 0:
            ew = Var("ew", [e], "f32", sc.tn("f32"), mag=2.0, bits=3, kind="input")
            entry.params.append(ew)
            sc.vars.append(ew)
            prog.inputs["ew"] = g.rand_array(ew.shape(), "f32")
        sc.dims = [d for d in sc.dims]
        if g.has("emptyrel") and rel.has_empty:
            # a GNN's aggregation, where an isolated node has no neighbours
            s2 = sc.child()
            n = g.name("n")
            s2.idx.append((n, dst))
            for _ in range(4):
                r = g.rel_reduction("f32", s2, 2, rel, (n, dst))
                if r is not None and r.mag <= MAGCAP["f32"]:
                    v = Var(g.name("agg"), [dst], "f32", sc.tn("f32"), mag=r.mag, bits=r.bits)
                    entry.stmts.append(Let(v, Comp([Binder(n, dst)], g.typed(r, s2))))
                    sc.vars.append(v)
                    break
    featrel = None
    # Its own random stream: programs without it are the ones the seed gave
    # before the feature existed.
    frng = random.Random(g.seed * 1000003 + 7)
    if g.has("featrel") and frng.random() < 0.3:
        featrel = add_feature_rows(g, frng, entry, root, alld)
    # Likewise over a relation the program builds from positions.
    brng = random.Random(g.seed * 1000003 + 11)
    builtrel = None
    if g.has("builtrel") and brng.random() < 0.25:
        builtrel = add_feature_rows(g, brng, entry, root, alld, built=True)
    # root params
    if g.has("params"):
        for k in range(rng.randint(0, 2)):
            ds = [g.pick(dims or alld) for _ in range(rng.randint(1, 2))]
            dt = "f32"
            p = Var("w%d" % k, ds, dt, sc.tn(dt), mag=2.0, bits=3, kind="param")
            root.params.append(p)
            sc.vars.append(p)
            prog.weights[p.name] = g.rand_array(p.shape(), dt)
    if g.has("optparam") and g.chance(0.3):
        d = g.pick(dims or alld)
        p = Var("bias", [d], "f32", sc.tn("f32"), mag=2.0, bits=3, kind="param")
        p.optional = True
        root.params.append(p)
        if g.chance(0.5):
            prog.weights["bias"] = g.rand_array(p.shape(), "f32")
        sc.optparams = [p]
    # a child block (and arrays / optionals of it)
    if g.has("blocks") and g.chance(0.7 if g.has("sharedfn") else 0.5):
        make_child(g, sc, root, dims, alld)
    # state, updated first thing every call
    if g.has("state") and g.chance(0.35):
        d = g.pick(dims or alld)
        st = Var("acc", [d], "f32", sc.tn("f32"), mag=8.0, bits=None, kind="state")
        root.states.append(st)
        s2 = sc.child()
        i = g.name("i")
        s2.idx.append((i, d))
        inc = g.scalar("f32", s2, 1)
        inc_mag = min(inc.mag, 4.0)
        upd = Comp([Binder(i, d)], Bin("+", Bin("*", Access(st, [Ref(i, "i64", mag=d.val)]),
                                                 g.tlit(0.5, "f32", sc.tn("f32"), untyped_ok=True)),
                                       inc))
        st.mag = 2 * inc.mag
        if g.has("ifstate") and g.chance(0.5):
            upd2 = Comp([Binder(i, d)], Access(st, [Ref(i, "i64", mag=d.val)]))
            c = g.cond(sc, 0) if sc.idx else Bin(">", Ref(d.text, dimtext=d.etext(), val=d.val), Lit(2, "i64"))
            entry.stmts.append(IfState(c, Assign(st, upd), Assign(st, upd2)))
        else:
            entry.stmts.append(Assign(st, upd))
        sc.vars.append(st)
        prog.repeat = rng.randint(2, 3)
    if dimeq:
        add_patches(g, sc, entry, dimeq, img)
    # the body
    nst = rng.randint(1, 3 + int(2 * g.size))
    g.body(entry, sc, nst, rng.randint(1, 3))
    if getattr(sc, "optparams", None) and g.chance(0.9):
        add_optparam_use(g, sc, entry)
    prog.entries = [entry]
    if g.has("sharedfn") and g.chance(0.5):
        add_second_entry(g, sc, root, entry, tn)
    for e, esc in zip(prog.entries, [sc] + [getattr(prog, "aux_scope", None)]):
        if g.has("tuple") and g.chance(0.3):
            add_results(g, esc, e)
    # Work on whole tensors, an extra result; its own random stream too.
    wrng = random.Random(g.seed * 1000003 + 13)
    if g.has("wholeT") and wrng.random() < 0.3:
        w = g.whole(sc, wrng)
        if w is not None:
            v = Var(g.name("w"), list(w.dims), w.dtype, w.tname, mag=w.mag, bits=w.bits)
            entry.stmts.append(Let(v, w))
            prog.forms.add("wholeT")
            item, typ = VarT(v), (list(v.dims), v.dtype, v.tname)
            if not isinstance(entry.result, TupleT):
                entry.result = TupleT([entry.result], [(list(entry.rdims), entry.rdtype, entry.rtname)])
            entry.result = TupleT(entry.result.items + [item], entry.result.types + [typ])
    for agg in (featrel, builtrel):
        if agg is None:
            continue
        # A result of its own: aggregated rows may exceed MAGCAP, so nothing
        # else reads them.
        item, typ = VarT(agg), (list(agg.dims), "f32", agg.tname)
        if not isinstance(entry.result, TupleT):
            entry.result = TupleT([entry.result], [(list(entry.rdims), entry.rdtype, entry.rtname)])
        entry.result = TupleT(entry.result.items + [item], entry.result.types + [typ])
    return prog


# Multiples of 8 split over 8 to 32 lanes on the GPU; 20 keeps the
# neighbour-split kernel.
FEATURE_WIDTHS = [16, 24, 32, 40, 48, 64, 96, 128, 20]


def add_feature_rows(g, rng, entry, root, alld, built=False):
    """A GNN layer's aggregation: `let a = [n: Dst, f: F] red(s, e: fg[n]) msg`,
    where the message reads feature rows at column f (h[s, f], hd[n, f]) and
    edge weights. F >= 16 is the shape the CUDA target splits over lanes with
    neighbour tiles in shared memory; a hub row of up to 70 neighbours spans
    several tiles. The relation and its tensors are this aggregation's own, so
    the magnitudes of other expressions stay bounded. `built`: the relation
    is built in the program from positions (std.graph, with ties: points on a
    half-integer lattice), so there are no edge weights."""
    pick = rng.choice
    chance = lambda p: rng.random() < p

    def rand_array(shape):
        n = int(np.prod(shape))
        return (np.array([rng.randint(-16, 16) for _ in range(n)], dtype=np.float64).reshape(shape) / 8.0
                ).astype(np.float32)

    width = pick(FEATURE_WIDTHS)
    fname = "BF" if built else "F"
    if g.has("rootdims"):
        F = Dim(fname, width)
        g.prog.defines[fname] = width
        root.generics.append("%s: dim" % fname)
    else:
        F = Dim(str(width), width)
    pre = "b" if built else ""
    src, dst = pick(alld), pick(alld)
    if built:
        fn = pick(["knn_graph", "knn", "radius_graph", "radius"])
        if fn.endswith("_graph"):
            dst = src
        K, D = rng.randint(1, 8), rng.randint(1, 4)
        pos = []
        for name, d in ([("bpos", src)] if fn.endswith("_graph") else [("bq", dst), ("bp", src)]):
            v = Var(name, [d, Dim(str(D), D)], "f32", "f32", mag=2.0, bits=3, kind="input")
            entry.params.append(v)
            lattice = chance(0.5)
            g.prog.inputs[name] = np.array(
                [rng.randint(0, 4) / 2.0 if lattice else rng.randint(-16, 16) / 8.0
                 for _ in range(d.val * D)], dtype=np.float32).reshape(d.val, D)
            pos.append(v)
        radius = Lit(pick([0.0, 0.5, 1.0, 1.5, 2.5]), "f32") if fn.startswith("radius") else None
        rel = Var("bg", [src, dst, Dim("%s * %d" % (dst.text, K), dst.val * K)], "rel")
        entry.stmts.append(Let(rel, BuiltRel(fn, K, pos, radius)))
        g.prog.imports.add(("std.graph", fn))
        degs, col = [K] * dst.val, []
    else:
        degs = [rng.randint(0, 4) for _ in range(dst.val)]
        if degs and chance(0.5):
            degs[rng.randrange(len(degs))] = rng.randint(20, 70)  # a hub
        if src.val == 0:
            degs = [0] * dst.val
        col = [rng.randint(0, src.val - 1) for _ in range(sum(degs))]
        rp = np.concatenate([[0], np.cumsum(degs)]).astype(np.int64)
        ef = Dim("EF", len(col), runtime=True)
        entry.generics.append("EF: dim")
        rel = Var("fg", [src, dst, ef], "rel", kind="relation")
        entry.params.append(rel)
        g.prog.relations["fg"] = (rp, np.array(col, dtype=np.int64))
    h = Var(pre + "h", [src, F], "f32", "f32", mag=2.0, bits=3, kind="input")
    entry.params.append(h)
    g.prog.inputs[h.name] = rand_array(h.shape())
    n, f, s, e = g.name("n"), g.name("f"), g.name("s"), g.name("e")
    hs = Access(h, [Ref(s, "i64", mag=src.val), Ref(f, "i64", mag=width)])
    msgs = [hs]
    hd = w = None
    if chance(0.6):
        hd = Var(pre + "hd", [dst, F], "f32", "f32", mag=2.0, bits=3, kind="input")
        entry.params.append(hd)
        g.prog.inputs[hd.name] = rand_array(hd.shape())
        hd = Access(hd, [Ref(n, "i64", mag=dst.val), Ref(f, "i64", mag=width)])
        msgs += [Bin("-", hs, hd), Bin("*", hs, hd), Call("max", [hs, hd], "f32", mag=2.0)]
    if col and not built and chance(0.6):
        w = Var("few", [ef], "f32", "f32", mag=2.0, bits=3, kind="input")
        entry.params.append(w)
        g.prog.inputs["few"] = rand_array(w.shape())
        w = Access(w, [Ref(e, "i64", mag=len(col))])
        msgs += [Bin("*", hs, w)]
        if hd is not None:
            msgs += [Bin("*", Bin("-", hs, hd), w)]
    if g.has("math"):
        fn = pick(["relu", "tanh", "sigmoid"])
        g.prog.imports.add(("std.math", fn))
        msgs.append(Call(fn, [pick(msgs)], "f32", mag=2.0))
    body = pick(msgs)
    red = pick(["sum", "sum", "max", "min", "mean"])
    rows = max(degs) if degs else 0
    r = Reduce(red, [], body, "f32", body.mag * max(1, rows) if red == "sum" else body.mag, None,
               relation=(rel, Ref(n, "i64", mag=dst.val), s, e if w is not None else None))
    if 0 in degs and red != "sum":
        r.form = "emptyrel"
    agg = Var(g.name("agg"), [dst, F], "f32", "f32", mag=r.mag, bits=None)
    entry.stmts.append(Let(agg, Comp([Binder(n, dst), Binder(f, F)], r)))
    g.prog.forms.add("builtrel" if built else "featrel")
    return agg


def add_patches(g, sc, entry, dimeq, img):
    """`let p: Tensor[Grid, Patch; f32] = [g: Image / Patch, q: Patch] img[g * Patch + q]`
    and back, `let f: Tensor[Image; f32] = [r: Grid * Patch] p[r / Patch, r % Patch]`:
    types equal only through the dim's definition and the `where` equality."""
    image, patch, grid = dimeq
    pref = Ref("Patch", dimtext="Patch", val=patch.val)
    gi, qi, ri = g.name("g"), g.name("q"), g.name("r")
    gdom = Dim("Image / Patch", grid.val, atomic=False) if g.chance(0.5) else grid
    pv = Var(g.name("patches"), [grid, patch], "f32", sc.tn("f32"), mag=2.0, bits=3)
    val = Comp([Binder(gi, gdom), Binder(qi, patch)],
               Access(img, [Bin("+", Bin("*", Ref(gi, "i64", mag=grid.val), pref), Ref(qi, "i64", mag=patch.val))]))
    entry.stmts.append(Let(pv, val, annot=True))
    sc.vars.append(pv)
    fv = Var(g.name("flat"), [image], "f32", sc.tn("f32"), mag=2.0, bits=3)
    val = Comp([Binder(ri, Dim("Grid * Patch", image.val, atomic=False))],
               Access(pv, [Bin("/", Ref(ri, "i64", mag=image.val), pref), Bin("%", Ref(ri, "i64", mag=image.val), pref)]))
    entry.stmts.append(Let(fv, val, annot=True))
    sc.vars.append(fv)


def add_results(g, sc, entry):
    """`-> (Tensor[..], Tensor[..])`: the result and one or two more values."""
    ok = lambda v: v.dims and all(d.val > 0 for d in v.dims) and (g.has("dimexpr_sig") or all(d.atomic for d in v.dims))
    cands = [v for v in sc.vars if v.kind == "let" and v.dtype != "rel" and v.tname == sc.tn(v.dtype)
             and (not v.dims or ok(v))]
    items = [entry.result]
    types = [(list(entry.rdims), entry.rdtype, entry.rtname)]
    for _ in range(g.rng.randint(1, 2)):
        if cands and g.chance(0.7):
            v = g.pick(cands)
            cands.remove(v)
            items.append(VarT(v))
            types.append((list(v.dims), v.dtype, v.tname))
        else:
            dt = g.pick(g.dtypes())
            atomic = [d for d in sc.dims if d.atomic and d.val > 0] or [Dim("3", 3)]
            c = g.comp(dt, sc, 1, dims=[g.pick(atomic)])
            items.append(c)
            types.append((list(c.dims), dt, sc.tn(dt)))
    entry.result = TupleT(items, types)
    g.prog.forms.add("tuple")


def add_second_entry(g, sc, root, entry, tn):
    """`aux`, a second entry with main's inputs, calling a function main calls
    (a layer stack run by two entries)."""
    aux = Fn("aux", "entry")
    aux.block = root
    aux.generics = list(entry.generics)
    aux.params = entry.params  # the same list: the minimizer drops an input from both
    asc = Scope(aux, root, tn)
    asc.dims = list(sc.dims)
    asc.vars = [v for v in sc.vars if v.kind in ("input", "relation", "param") and not getattr(v, "optional", False)]
    asc.subs = list(sc.subs)
    shared = None
    if asc.subs and g.chance(0.8):
        shared = g.method_call(asc, 1, again=True)
    if shared is None:
        shared = g.reuse_helper(asc)
    if shared is None and asc.subs:
        shared = g.method_call(asc, 1, again=True)
    if shared is None:
        return
    tname = shared.tname or asc.tn(shared.dtype)
    v = Var(g.name("t"), list(shared.dims), shared.dtype, tname, mag=shared.mag, bits=shared.bits)
    aux.stmts.append(Let(v, shared))
    asc.vars.append(v)
    g.body(aux, asc, g.rng.randint(0, 2), g.rng.randint(1, 2))
    root.fns.append(aux)
    g.prog.entries.append(aux)
    g.prog.aux_scope = asc
    g.prog.forms.add("sharedfn")


def add_optparam_use(g, sc, entry):
    p = sc.optparams[0]
    res = entry.result
    if len(res.dims) < 1 or res.dims[-1].text != p.dims[0].text or res.dtype != "f32":
        return
    # let r = <result>; match bias { some(b) => [..] r[..] + b[o], none => r }
    rv = Var(g.name("r"), res.dims, res.dtype, res.dims and entry.rtname, mag=res.mag, bits=res.bits)
    entry.stmts.append(Let(rv, res))
    b = g.name("b")
    bv = Var(b, p.dims, "f32", p.tname)
    binders = [Binder(g.name("i"), d) for d in res.dims]
    some = Comp(binders, Bin("+", Access(rv, [Ref(x.name, "i64") for x in binders]),
                             Access(bv, [Ref(binders[-1].name, "i64")])))
    present = lambda env, path=p.name: path in env["__weights__"]
    entry.result = MatchT(p.name, b, some, VarT(rv), res.dims, "f32", present)


def make_child(g, sc, root, dims, alld):
    rng = g.rng
    blk = BlockDef("Layer")
    d = g.pick(dims or alld)
    generic_t = g.has("typedT") and g.chance(0.5)
    blk.generics = ["D: dim"] + (["T: dtype(float)"] if generic_t else [])
    tn = {"f32": "T"} if generic_t else {}
    D = Dim("D", d.val)
    w = Var("weight", [D], "f32", tn.get("f32", "f32"), mag=2.0, bits=3, kind="param")
    blk.params.append(w)
    fn = Fn("forward")
    fn.block = blk
    bsc = Scope(fn, blk, tn)
    bsc.vars.append(w)
    # the argument pattern: [D] or [B, D] with a method generic B
    outer = [d]
    if g.chance(0.5) and len(alld) > 0:
        od = g.pick(alld)
        fn.generics = ["B: dim"]
        outer = [od, d]
        pdims = [Dim("B", od.val), D]
    else:
        pdims = [D]
    x = Var(g.name("x"), pdims, "f32", tn.get("f32", "f32"), mag=4.0, bits=None, kind="param")
    fn.params.append(x)
    bsc.vars.append(x)
    bsc.dims = list(pdims)
    if g.has("state") and g.chance(0.3):
        st = Var("mem", [D], "f32", tn.get("f32", "f32"), mag=8.0, bits=None, kind="state")
        blk.states.append(st)
        s2 = bsc.child()
        i = g.name("i")
        s2.idx.append((i, D))
        fn.stmts.append(Assign(st, Comp([Binder(i, D)], Bin("+", Bin("*", Access(st, [Ref(i, "i64")]), g.tlit(0.5, "f32", tn.get("f32", "f32"), untyped_ok=True)), Access(w, [Ref(i, "i64")])))))
        bsc.vars.append(st)
    saved = g.f
    if not g.has("childcomp"):
        g.f = set(g.f) - {"helpers"}
    g.body(fn, bsc, rng.randint(0, 2), 1, result_dims=pdims, result_dt="f32")
    g.f = saved
    fn.mag = min(fn.mag, 1e9)
    blk.fns.append(fn)
    g.prog.blocks.append(blk)
    args = [d.text] + (["T"] if generic_t and sc.tn("f32") == "T" else (["f32"] if generic_t else []))
    kind = g.weighted([("one", 3)] + ([("array", 2)] if g.has("subarray") else []) +
                      ([("optional", 2)] if g.has("optsub") else []))
    count = None
    if kind == "array":
        count = Dim(str(rng.randint(1, 3)), 0)
        count.val = int(count.text)
    sub = SubDecl("layers" if count else ("extra" if kind == "optional" else "layer"), blk, args,
                  count=count, optional=(kind == "optional"))
    sub.outer_dims = outer
    root.subs.append(sub)
    n = count.val if count else 1
    present = kind != "optional" or g.chance(0.5)
    for k in range(n):
        prefix = "%s.%d." % (sub.name, k) if count else sub.name + "."
        if present:
            g.prog.weights[prefix + "weight"] = g.rand_array((d.val,), "f32")
    if kind == "optional":
        sc.optsubs = [sub]
    else:
        sc.subs.append(sub)


RelGen.program = lambda self: _program(self)

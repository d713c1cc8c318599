#!/usr/bin/python3
"""Differential testing of linnet: random programs, compiled vs. a reference.

Each generated program goes through `linnet check`, `linnet build` and
`linnet run`, and its results are compared with a reference: the reference
interpreter (`linnet run --interpret`) when this linnet has it, otherwise the
numpy evaluation the generator computes alongside every program. What
`check` accepts must build and run, so a build or run that refuses or crashes
on an accepted program is a finding as well. docs/difftest.md describes the
features, profiles, tolerances and the known gaps.

  difftest.py --seed 1 --count 200 [--profile ci|full] [--keep DIR] [-j2]
  difftest.py --minimize DIR/case-... [--out FILE.ln]
"""
import argparse
import concurrent.futures
import copy
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import gen  # noqa: E402
from lnast import Node, Lit, FLOATS, INTS  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# f32: |a - b| <= 1e-4 + 1e-4 * |b|. Generated values stay below 32 in
# magnitude and reductions fold at most a few dozen terms, so f32 rounding
# (2^-24 relative per operation) accumulates to well under 1e-5; the bound
# leaves room for libm/vector-math differences in exp/log/tanh/erf (a few
# ulp) and for reassociated reductions, while any real miscompile (a wrong
# index, a dropped term, a wrong identity) is off by far more.
TOL = {"f32": (1e-4, 1e-4), "f64": (1e-9, 1e-9)}
TIMEOUT = 120

DT_ST = {"float32": "F32", "float64": "F64", "int32": "I32", "int64": "I64", "bool": "BOOL"}


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        b = a.tobytes()
        header[name] = {"dtype": DT_ST[str(a.dtype)], "shape": list(a.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def case_seed(seed, i):
    return seed * 1000003 + i


# The build flags of each --target: the compiled side of the comparison.
TARGETS = {
    "cpu": ["--target", "cpu"],
    "cuda": ["--target", "cuda"],
    "cuda-emulate": ["--target", "cuda", "--emulate"],
    # The CUDA artifact run by the real CUDA runtime on the driver emulator
    # (docs/cuda-abi.md, "The driver emulator").
    "cuda-driver-emulator": ["--target", "cuda", "--host-kernels"],
}


def emulator_env(lin, art):
    """The environment a run of `art` gets: the driver emulator and the
    artifact's kernels for the cuda-driver-emulator target, else none."""
    if lin.target != "cuda-driver-emulator":
        return None
    exe = lin.exe if os.sep in lin.exe else shutil.which(lin.exe)
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(exe))), "lib",
                       "liblinnet-cuda-emulator.so")
    return dict(os.environ, LINNET_LIBCUDA=lib, LINNET_CUDA_EMULATOR_KERNELS=art)


class Linnet:
    def __init__(self, exe, oracle, numpy_check=True):
        self.exe = exe
        self.oracle = oracle
        self.target = "cpu"
        self.numpy_check = numpy_check

    @staticmethod
    def has_interpreter(exe):
        try:
            p = subprocess.run([exe, "run", "--help"], capture_output=True, text=True, timeout=30)
            return "--interpret" in p.stdout
        except Exception:
            return False


def defines(prog):
    out = []
    for k, v in prog.defines.items():
        out += ["-D", "%s=%d" % (k, v)]
    return out


def write_case(prog, d):
    """Writes the program, inputs and weights of `prog` into directory d."""
    os.makedirs(d, exist_ok=True)
    src = prog.render()
    with open(os.path.join(d, "prog.ln"), "w") as f:
        f.write(src)
    args = []
    for p in prog.entry.params:
        if p.kind == "relation":
            rp, ci = prog.relations[p.name]
            np.save(os.path.join(d, p.name + ".row_ptr.npy"), rp)
            np.save(os.path.join(d, p.name + ".col_idx.npy"), ci)
            args += ["--relation", "%s=%s,%s" % (p.name, p.name + ".row_ptr.npy", p.name + ".col_idx.npy")]
        else:
            np.save(os.path.join(d, p.name + ".npy"), prog.inputs[p.name])
            args += ["--input", "%s=%s.npy" % (p.name, p.name)]
    write_safetensors(os.path.join(d, "weights.safetensors"), prog.weights)
    return src, args


def run(cmd, cwd, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, env=env)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return -999, "timeout after %d s" % TIMEOUT


def crashed(rc, out):
    # A signal, an abort, a timeout, or an internal error the user cannot act on.
    return rc < 0 or rc >= 128 or re.search(r"internal error|importer bug|Assertion|LLVM ERROR|"
                                             r"Stack dump|Segmentation", out) is not None


def first_error(out):
    for line in out.splitlines():
        if "error" in line.lower() or "failed" in line.lower():
            return line.strip()
    lines = [l for l in out.splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""


def signature(res):
    """What must stay the same while a failing case is minimized."""
    kind = res["kind"]
    if kind in ("disagreed", "agreed"):
        return kind
    msg = re.sub(r"'[^']*'|\"[^\"]*\"|\d+|%\w+|/\S+", "_", res.get("error", ""))
    msg = re.sub(r"^.*?error:", "error:", msg)
    return kind + ":" + msg[:120]


def compare(exp, got, dtype, loose=False):
    if exp.shape != got.shape:
        return "shape %s expected, %s found" % (exp.shape, got.shape)
    if dtype in TOL:
        at, rt = TOL["f32" if loose else dtype]
        e64, g64 = exp.astype(np.float64), got.astype(np.float64)
        same_nan = np.isnan(e64) & np.isnan(g64)
        same_inf = np.isinf(e64) & (e64 == g64)
        with np.errstate(invalid="ignore"):
            bad = ~(same_nan | same_inf | (np.abs(e64 - g64) <= at + rt * np.abs(e64)))
    else:
        bad = exp != got
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        return "%d of %d elements differ; first at %s: expected %r, found %r" % (
            int(bad.sum()), bad.size, list(idx), exp[idx].item(), got[idx].item())
    return None


def entries(prog):
    return prog.entries or [prog.entry]


def result_dtypes(entry):
    if isinstance(entry.result, gen.TupleT):
        return [dt for _, dt, _ in entry.result.types]
    return [entry.rdtype]


def outputs(entry, stem):
    """The --output files of an entry's results (one per element of a tuple)."""
    n = len(result_dtypes(entry))
    names = ["%s.npy" % stem] if entry.name == "main" and n == 1 else \
        ["%s-%s-%d.npy" % (stem, entry.name, k) for k in range(n)]
    return names, [a for f in names for a in ("--output", f)]


def run_case(prog, d, lin, keep_going=True):
    """check -> build -> run (-> interpret) for each entry; returns a result dict."""
    src, io = write_case(prog, d)
    D = defines(prog)
    res = {"commands": []}
    check = [lin.exe, "check", "prog.ln"]
    # Built without the weights: the weights choose the optional tensors at
    # load time, among a library per combination (--variants each).
    build = [lin.exe, "build", "prog.ln"] + D + TARGETS[lin.target] + ["--variants", "each", "-o", "art"]
    steps = [("check", check, None), ("build", build, None)]
    for e in entries(prog):
        got, args = outputs(e, "got")
        steps.append(("run", [lin.exe, "run", "art", "--weights", "weights.safetensors", "--entry", e.name] +
                      io + args + ["--repeat", str(prog.repeat)], e))
    for name, cmd, _ in steps:
        res["commands"].append(cmd)
        rc, out = run(cmd, d, emulator_env(lin, os.path.join(d, "art")) if name == "run" else None)
        if rc != 0 or (name != "run" and crashed(rc, out)):
            res["log"] = out
            res["error"] = first_error(out) or ("exit %d" % rc)
            if name == "check":
                res["kind"] = "check-rejected"
            elif crashed(rc, out):
                res["kind"] = "crashed"
            else:
                res["kind"] = "build-refused" if name == "build" else "run-refused"
            res["stage"] = name
            return res
    # The compiled results against the interpreter's (or the numpy evaluation),
    # then the interpreter's against the numpy evaluation: where the
    # interpreter and the compiled code share a wrong convention (a cast typing
    # its operand's literals, the mean of an empty neighbourhood), only the
    # generator's own evaluation of the language's rules sees it.
    for e in entries(prog):
        gots, _ = outputs(e, "got")
        got = [np.load(os.path.join(d, f)) for f in gots]
        ref = None
        if lin.numpy_check or lin.oracle != "interpret":
            try:
                ref = prog.evaluate(e)
            except Exception as ex:  # the generator's own evaluation failed: a generator bug
                res.update(kind="oracle-error", error="oracle: %s" % ex, stage="oracle")
                return res
        if lin.oracle == "interpret":
            exps, args = outputs(e, "expected")
            icmd = [lin.exe, "run", "prog.ln", "--interpret"] + D + ["--weights", "weights.safetensors",
                                                                      "--entry", e.name] + io + \
                args + ["--repeat", str(prog.repeat)]
            res["commands"].append(icmd)
            rc, out = run(icmd, d)
            if rc != 0:
                res.update(kind="interp-failed", log=out, error=first_error(out), stage="interpret")
                return res
            exp = [np.load(os.path.join(d, f)) for f in exps]
        else:
            exp = ref
            for f, a in zip(outputs(e, "expected")[0], exp):
                np.save(os.path.join(d, f), a)
        where = "" if len(entries(prog)) == 1 and len(got) == 1 else None
        for k, (x, y, dt) in enumerate(zip(exp, got, result_dtypes(e))):
            at = where if where is not None else "entry %s, result %d: " % (e.name, k)
            diff = compare(np.asarray(x), np.asarray(y), dt)
            if diff:
                res.update(kind="disagreed", error=at + diff, stage="compare")
                return res
        if ref is not None and lin.oracle == "interpret":
            for k, (x, y, dt) in enumerate(zip(ref, exp, result_dtypes(e))):
                at = where if where is not None else "entry %s, result %d: " % (e.name, k)
                # numpy's f32 tanh/exp may differ from libm's by an ulp, which
                # an f64 result carries: this check looks for wrong rules, so
                # it holds every float to the f32 tolerance
                diff = compare(np.asarray(x), np.asarray(y), dt, loose=True)
                if diff:
                    np.save(os.path.join(d, "numpy-%s-%d.npy" % (e.name, k)), x)
                    res.update(kind="reference-disagreed", stage="numpy",
                               error=at + "the interpreter and the compiled code agree; the generator's "
                               "evaluation differs: " + diff.replace("expected", "numpy gives")
                               .replace("found", "both give"))
                    return res
    res["kind"] = "agreed"
    return res


# Known gaps of issue 26 that the generator's forms reach: a failing case is
# filed under the first item whose error text (and form, where given)
# matches; anything else is "new". (kinds, error pattern, form, item)
CLASSES = [
    (None, r"returns \d+ values, its signature says", None, "item 7: several results"),
    (None, r"`while` whose condition is not known at build time", None, "item 8: run-time while"),
    (None, r"issued twice", None, "item 9: one function, several call sites or entries"),
    (None, r"out of range", "guarded", "item 10: a read guarded by a filter"),
    (("check-rejected",), r"\b(Grid|Image|Patch)\b", "dimeq", "item 18: dim equalities"),
    (("check-rejected",), r"appears in no input shape|expects (.*), found \1", None,
     "item 19: generics only in products"),
    (("check-rejected",), r"found index|has type index|yields .*\bindex\b", None, "item 20: an index as i64"),
    (("check-rejected",), r"dtype mismatch in '.': f32 and T", None, "item 21: a float literal in a T function"),
    (("reference-disagreed", "disagreed"), r"numpy gives 0\.0, both give nan", "emptyrel",
     "item 2: mean of an empty neighbourhood"),
    (("reference-disagreed",), r"", "castint", "item 1: a cast types its operand's literals"),
    # found by these forms, not in the issue: gaps/*.ln hold their repros
    (None, r"role '(src|dst)' needs num_(src|dst)", None,
     "new: a relation body reads a tensor longer than its dim (gaps/relation-read-longer-tensor.ln)"),
    (None, r"'llvm\.intr\.abs' op result .* 'index'", None, "new: abs of an index (gaps/abs-of-index.ln)"),
]


def forms_of(prog):
    """The issue-26 forms a program uses (gen.FORMS)."""
    fs = set(prog.forms)
    for (_, _, n) in walk(prog):
        if getattr(n, "form", None):
            fs.add(n.form)
    for f in prog.all_fns():
        for st in f.stmts:
            if getattr(st, "form", None):
                fs.add(st.form)
    return fs


def classify(res):
    if res["kind"] == "agreed":
        return None
    err = res.get("error", "") + "\n" + res.get("log", "")
    for kinds, pat, form, item in CLASSES:
        if (kinds is None or res["kind"] in kinds) and (form is None or form in res.get("forms", ())) \
                and re.search(pat, err):
            return item
    return "new"


def describe(res):
    return "%s: %s" % (res["kind"], res.get("error", ""))


def keep_case(keep, name, prog, d, res, meta):
    out = os.path.join(keep, name)
    if os.path.exists(out):
        shutil.rmtree(out)
    shutil.copytree(d, out, ignore=shutil.ignore_patterns("art"))
    with open(os.path.join(out, "commands.sh"), "w") as f:
        f.write("#!/bin/sh\n# %s\ncd \"$(dirname \"$0\")\"\n" % describe(res).replace("\n", " "))
        for c in res["commands"]:
            f.write(" ".join([os.path.basename(c[0]) if c[0].endswith("linnet") else c[0]] + c[1:]) + "\n")
    with open(os.path.join(out, "result.txt"), "w") as f:
        f.write(describe(res) + "\n\n" + res.get("log", ""))
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return out


def prepare_device_case(prog, d, lin):
    """For scripts/device-check: the program built for the GPU (--target
    cuda) and the interpreter's results, written into d; the case as the
    device runner reads it (inputs in the entry's order)."""
    src, io = write_case(prog, d)
    D = defines(prog)
    # --target cuda-driver-emulator: with the kernels the emulator runs.
    flags = TARGETS["cuda-driver-emulator" if lin.target == "cuda-driver-emulator" else "cuda"]
    build = [lin.exe, "build", "prog.ln"] + D + flags + ["--variants", "each", "-o", "art"]
    exps, outs = outputs(prog.entry, "expected")
    icmd = [lin.exe, "run", "prog.ln", "--interpret"] + D + ["--weights", "weights.safetensors",
                                                              "--entry", "main"] + io + \
        outs + ["--repeat", str(prog.repeat)]
    for name, cmd in (("build", build), ("interpret", icmd)):
        rc, out = run(cmd, d)
        if rc != 0:
            return {"kind": "build-refused" if name == "build" else "interp-failed",
                    "error": first_error(out), "log": out, "commands": [cmd], "stage": name}
    entry = [e for e in json.load(open(os.path.join(d, "art", "runtime.json")))["entries"]
             if e["name"] == "main"][0]
    inputs = []
    for p in prog.entry.params:
        if p.kind == "relation":
            inputs += [p.name + ".row_ptr.npy", p.name + ".col_idx.npy"]
        else:
            inputs.append(p.name + ".npy")
    if len(inputs) != len(entry["inputs"]):
        return {"kind": "prepare-failed", "error": "entry main takes %d inputs, the case has %d" % (
            len(entry["inputs"]), len(inputs)), "commands": [build], "stage": "prepare"}
    base = os.path.basename(d)
    case = {"name": base, "artifact": base + "/art", "weights": base + "/weights.safetensors",
            "entry": "main", "inputs": [base + "/" + f for f in inputs],
            "expected": [base + "/" + f for f in exps], "repeat": prog.repeat, "rtol": 1e-4, "atol": 1e-5}
    return {"kind": "agreed", "case": case}


def one(args, i, lin, features):
    s = case_seed(args.seed, i)
    prog = gen.generate(s, features, args.size)
    if args.device_cases:
        d = os.path.join(args.device_cases, "gen-%d-%d" % (args.seed, i))
        shutil.rmtree(d, ignore_errors=True)
        res = prepare_device_case(prog, d, lin)
        res.update(seed=s, index=i)
        return res
    d = tempfile.mkdtemp(prefix="difftest-")
    try:
        res = run_case(prog, d, lin)
        res["seed"] = s
        res["index"] = i
        res["forms"] = sorted(forms_of(prog))
        res["class"] = classify(res)
        if res["kind"] != "agreed" and args.keep:
            meta = {"seed": s, "features": sorted(features), "size": args.size, "result": describe(res),
                    "forms": res["forms"], "class": res["class"]}
            res["kept"] = keep_case(args.keep, "case-%d-%d" % (args.seed, i), prog, d, res, meta)
        return res
    finally:
        shutil.rmtree(d, ignore_errors=True)


def find_linnet(arg):
    if arg:
        return os.path.abspath(arg) if os.sep in arg else arg
    for c in (os.path.join(ROOT, "build", "bin", "linnet"), shutil.which("linnet")):
        if c and os.path.exists(c):
            return c
    sys.exit("difftest: error: no linnet binary (pass --linnet PATH or build the 'linnet' target)")


# Features a target refuses by design (a located refusal, not a wrong
# answer), with the reason; left out of every profile on that target.
CUDA_REFUSES = {"builtrel": "relations built from coordinates have a CPU builder only (§10.5)"}
TARGET_REFUSES = {"cuda": CUDA_REFUSES, "cuda-emulate": CUDA_REFUSES, "cuda-driver-emulator": CUDA_REFUSES}


def features_of(args):
    fs = set(gen.PROFILES[args.profile])
    target = "cuda" if getattr(args, "device_cases", None) else getattr(args, "target", "cpu")
    for f in TARGET_REFUSES.get(target, {}):
        fs.discard(f)
    for f in args.with_ or []:
        fs |= set(f.split(","))
    for f in args.without or []:
        fs -= set(f.split(","))
    unknown = fs - set(gen.ALL_FEATURES)
    if unknown:
        sys.exit("difftest: error: unknown feature(s) %s (known: %s)" % (
            ", ".join(sorted(unknown)), ", ".join(gen.ALL_FEATURES)))
    return fs


# -- minimizer ---------------------------------------------------------------

def walk(prog):
    """(owner, kid index, node, scope binds) for every expression node, in a fixed order."""
    out = []

    def visit(n, owner, k):
        out.append((owner, k, n))
        for j, c in enumerate(n.kids()):
            visit(c, n, j)

    for f in prog.all_fns():
        for s in f.stmts:
            for j, n in enumerate(s.nodes()):
                visit(n, s, j)
        visit(f.result, f, 0)
    return out


def set_node(owner, k, new):
    from tensors import Let, Assign, Loop, IfState
    if isinstance(owner, gen.Fn):
        owner.result = new
    elif isinstance(owner, (Let, Assign)):
        owner.value = new
    elif isinstance(owner, Loop):
        if k == 0:
            owner.init = new
        else:
            owner.step = new
    elif isinstance(owner, IfState):
        if k == 0:
            owner.cond = new
        elif k == 1:
            owner.then.value = new
        else:
            owner.other.value = new
    else:
        owner.set_kid(k, new)


def candidates(prog):
    """Smaller programs: statements deleted, expressions replaced by a part or a literal."""
    fns = prog.all_fns()
    for fi, f in enumerate(fns):
        for si in range(len(f.stmts) - 1, -1, -1):
            yield ("delstmt", fi, si)
    nodes = walk(prog)
    for ni, (owner, k, n) in enumerate(nodes):
        scalar = not hasattr(n, "dims") or not getattr(n, "dims", ())
        for ci, c in enumerate(n.kids()):
            cs = not hasattr(c, "dims") or not getattr(c, "dims", ())
            if c.dtype == n.dtype and cs == scalar and not (c.free() & n.binds()) and \
                    list(getattr(c, "dims", [])) == list(getattr(n, "dims", [])):
                yield ("kid", ni, ci)
        if scalar and not isinstance(n, Lit) and n.dtype in FLOATS + INTS:
            yield ("lit", ni, None)
    for pi in range(len(prog.entry.params)):
        yield ("param", pi, None)


def apply(prog, cand):
    p = copy.deepcopy(prog)
    kind, a, b = cand
    if kind == "delstmt":
        fns = p.all_fns()
        del fns[a].stmts[b]
        return p
    if kind == "param":
        x = p.entry.params[a]
        used = set()
        for (_, _, n) in walk(p):
            used |= n.free()
        for e in p.all_fns():
            for s in e.stmts:
                used |= s.free()
        if x.name in used:
            return None
        del p.entry.params[a]
        p.inputs.pop(x.name, None)
        p.relations.pop(x.name, None)
        return p
    nodes = walk(p)
    owner, k, n = nodes[a]
    if kind == "kid":
        set_node(owner, k, n.kids()[b])
    else:
        v = 1 if n.dtype in INTS else 1.0
        set_node(owner, k, Lit(v, n.dtype, "suffix"))
    return p


def prune(prog):
    """Drops helpers, blocks, reducers and imports nothing refers to any more."""
    for _ in range(3):
        text = prog.render()
        body = text
        prog.fns = [f for f in prog.fns if re.search(r"\b%s\(" % f.name, body.replace("fn %s" % f.name, ""))]
        prog.reducers = [r for r in prog.reducers
                         if re.search(r"\b%s[<(]" % re.escape(r.split()[1].split("<")[0].rstrip(":")),
                                      body.replace(r, ""))]
        prog.imports = {(m, n) for (m, n) in prog.imports
                        if re.search(r"\b%s\b" % n, body.split("\n", 4)[-1])}
    return prog


def minimize(args, lin):
    meta = json.load(open(os.path.join(args.minimize, "meta.json")))
    prog = gen.generate(meta["seed"], set(meta["features"]), meta.get("size", 1.0))
    d = tempfile.mkdtemp(prefix="difftest-min-")
    res = run_case(prog, d, lin)
    sig = signature(res)
    print("minimize: %s (%d lines)" % (describe(res), len(prog.render().splitlines())))
    if res["kind"] == "agreed":
        sys.exit("difftest: error: %s does not fail any more" % args.minimize)
    best, best_res = prog, res
    changed = True
    tries = 0
    while changed and tries < args.max_tries:
        changed = False
        for cand in list(candidates(best)):
            tries += 1
            if tries >= args.max_tries:
                break
            try:
                p = apply(best, cand)
                if p is None:
                    continue
                prune(p)
                if len(p.render()) >= len(best.render()):
                    continue
            except Exception:
                continue
            shutil.rmtree(d, ignore_errors=True)
            r = run_case(p, d, lin)
            if signature(r) == sig:
                best, best_res, changed = p, r, True
                print("minimize: %d lines" % len(best.render().splitlines()))
                break
    shutil.rmtree(d, ignore_errors=True)
    run_case(best, d, lin)
    out = args.out or os.path.join(args.minimize, "min.ln")
    with open(out, "w") as f:
        f.write(header(best, best_res) + best.render())
    mdir = os.path.join(args.minimize, "min")
    if os.path.exists(mdir):
        shutil.rmtree(mdir)
    shutil.copytree(d, mdir, ignore=shutil.ignore_patterns("art"))
    print("minimize: wrote %s (%s)" % (out, describe(best_res)))


def header(prog, res):
    lines = ["// difftest finding: %s" % res["kind"]]
    for c in res["commands"]:
        lines.append("//   " + " ".join(["linnet"] + c[1:]))
    err = res.get("error", "")
    m = re.search(r"first at (.*): expected (.*), found (.*)", err)
    if res["kind"] == "disagreed" and m:
        lines.append("// expected: result%s = %s (reference)" % (m.group(1), m.group(2)))
        lines.append("// found: result%s = %s (compiled; %s)" % (m.group(1), m.group(3), err.split(";")[0]))
    else:
        lines.append("// expected: %s" % ("builds and runs (check accepts it)"))
        lines.append("// found: %s" % err)
    if prog.inputs or prog.relations:
        parts = []
        for k, v in list(prog.inputs.items()) + [(k + ".row_ptr", v[0]) for k, v in prog.relations.items()] + \
                [(k + ".col_idx", v[1]) for k, v in prog.relations.items()]:
            parts.append("%s=%s" % (k, np.asarray(v).tolist()))
        lines.append("// inputs: " + "; ".join(parts))
    if prog.weights:
        lines.append("// weights: " + "; ".join("%s=%s" % (k, v.tolist()) for k, v in prog.weights.items()))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device-cases", metavar="DIR",
                    help="do not run: build each program for the GPU into DIR with the "
                         "interpreter's results, and write DIR/cases.json (scripts/device-check)")
    ap.add_argument("--target", choices=sorted(TARGETS), default="cpu",
                    help="what the compiled side is: cpu, cuda (on a GPU), cuda-emulate "
                         "(the CUDA target's kernels run on the CPU) or cuda-driver-emulator (the "
                         "CUDA artifact run by the real CUDA runtime on the driver emulator)")
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--profile", choices=sorted(gen.PROFILES), default="full")
    ap.add_argument("--with", dest="with_", action="append", help="add features (comma-separated)")
    ap.add_argument("--without", action="append", help="remove features (comma-separated)")
    ap.add_argument("--size", type=float, default=1.0, help="program size factor")
    ap.add_argument("--keep", help="write failing cases into this directory")
    ap.add_argument("-j", type=int, default=1, dest="jobs", help="parallel cases (at most 2)")
    ap.add_argument("--linnet", help="the linnet binary (default: build/bin/linnet)")
    ap.add_argument("--oracle", choices=["auto", "interpret", "numpy"], default="auto",
                    help="reference: the interpreter when linnet has --interpret (auto), or numpy")
    ap.add_argument("--print", type=int, metavar="I", help="print program I of the seed and exit")
    ap.add_argument("--minimize", metavar="CASE", help="shrink a kept failing case")
    ap.add_argument("--out", help="with --minimize: where to write the minimized program")
    ap.add_argument("--max-tries", type=int, default=400)
    ap.add_argument("--jsonl", metavar="FILE", help="append one JSON line per program (a long campaign "
                    "can be stopped and still be summarized)")
    ap.add_argument("--summarize", metavar="FILE", help="print the summary of a --jsonl log and exit")
    ap.add_argument("--no-numpy-check", action="store_true",
                    help="do not hold the interpreter's results against the generator's evaluation")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.jobs > 2:
        sys.exit("difftest: error: -j%d: at most -j2 (this machine's cores are shared)" % args.jobs)
    if args.summarize:
        summarize(args.summarize)
        return 0
    features = features_of(args)
    if args.print is not None:
        p = gen.generate(case_seed(args.seed, args.print), features, args.size)
        sys.stdout.write(p.render())
        print("// -D %s, repeat %d" % (p.defines, p.repeat))
        return 0
    exe = find_linnet(args.linnet)
    oracle = args.oracle
    if oracle == "auto":
        oracle = "interpret" if Linnet.has_interpreter(exe) else "numpy"
    lin = Linnet(exe, oracle, numpy_check=not args.no_numpy_check)
    lin.target = args.target
    if args.minimize:
        minimize(args, lin)
        return 0
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    cases = []
    if args.device_cases:
        os.makedirs(args.device_cases, exist_ok=True)
    log = open(args.jsonl, "a") if args.jsonl else None
    results = []
    seen = set()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        for res in ex.map(lambda i: one(args, i, lin, features), range(args.count)):
            if "case" in res:
                cases.append(res["case"])
            results.append(res)
            if log:
                rec = {k: res.get(k) for k in LOGGED}
                rec["log"] = res.get("log", "")[:600]  # enough to file it again (--summarize)
                log.write(json.dumps(rec) + "\n")
                log.flush()
            if res["kind"] != "agreed":
                sig = signature(res)
                if args.verbose or sig not in seen:
                    print("case %d (seed %d): [%s] %s%s" % (
                        res["index"], res["seed"], res.get("class"), describe(res),
                        "  [kept %s]" % res["kept"] if "kept" in res else ""))
                seen.add(sig)
    print("difftest: oracle %s, profile %s, seed %d" % (oracle, args.profile, args.seed))
    summary(results)
    if args.device_cases:
        with open(os.path.join(args.device_cases, "cases.json"), "w") as f:
            json.dump({"cases": cases}, f, indent=1)
    return 0 if all(r["kind"] == "agreed" for r in results) and len(results) == args.count else 1


LOGGED = ("seed", "index", "kind", "class", "forms", "error", "stage", "kept")


def summary(results):
    """The summary lines of a run (or of a --jsonl log, --summarize)."""
    counts, findings, classes, forms = {}, {}, {}, {}
    for res in results:
        counts[res["kind"]] = counts.get(res["kind"], 0) + 1
        for f in res.get("forms") or ():
            used = forms.setdefault(f, [0, 0])
            used[0] += 1
            used[1] += res["kind"] == "agreed"
        if res["kind"] != "agreed":
            findings.setdefault(signature(res), []).append(res)
            classes[res.get("class")] = classes.get(res.get("class"), 0) + 1
    c = lambda k: counts.get(k, 0)
    refused = c("build-refused") + c("run-refused")
    other = {k: v for k, v in counts.items() if k not in ("agreed", "disagreed", "build-refused",
                                                          "run-refused", "crashed")}
    print("generated %d, agreed %d, disagreed %d, build-refused %d, crashed %d%s" % (
        len(results), c("agreed"), c("disagreed"), refused, c("crashed"),
        "".join(", %s %d" % kv for kv in sorted(other.items()))))
    print("distinct failures: %d" % len(findings))
    if forms:
        print("forms (programs, agreed): " + ", ".join(
            "%s %d/%d" % (f, forms[f][1], forms[f][0]) for f in gen.FORMS if f in forms))
    for cl in sorted(classes, key=lambda c: (str(c).startswith("new"), str(c))):
        print("  %s: %d" % (cl, classes[cl]))
    return findings


def summarize(path):
    results = [json.loads(l) for l in open(path) if l.strip()]
    for r in results:  # filed again with today's classes (the log keeps the first error line)
        r["class"] = classify(r)
    findings = summary(results)
    for sig, rs in sorted(findings.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        r = rs[0]
        print("  %5d  [%s] %s (first: seed %d%s)" % (len(rs), r.get("class"), describe(r)[:160], r["seed"],
                                                   ", kept " + r["kept"] if r.get("kept") else ""))


if __name__ == "__main__":
    sys.exit(main())

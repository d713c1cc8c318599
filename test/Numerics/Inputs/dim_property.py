"""Every evaluator of dim expressions agrees: random expressions over two
entry generics (known at run time) and a block generic (known at build
time), with + - * / % min max and small constants, as an entry's result
extent. Each expression is evaluated by the compiled code (the importer's
folding and its run-time arithmetic, the runtime's result shapes), the
reference interpreter, and Python's reference (linnet.reference), on
several value sets; `/` and `%` floor. An expression that is negative or
divides by zero for some values must be refused by every evaluator (a
clear error, no crash), never given a shape. (Check's exact division
simplifies `N % N` to 0 and `N * K / N` to K symbolically, before any
value: such a division is not one the plan holds.)

usage: dim_property.py LINNET WORKDIR SEED COUNT
"""
import os
import random
import re
import subprocess
import sys

import numpy as np


def gen(rng, depth):
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(["N", "M", "K", str(rng.randint(1, 5)), str(rng.randint(0, 3))])
    op = rng.choice(["+", "-", "*", "/", "%", "min", "max"])
    a, b = gen(rng, depth - 1), gen(rng, depth - 1)
    # A divisor that is zero whatever the generics is refused by check
    # (a build-time error, tested elsewhere): draw another.
    while op in ("/", "%") and not any(c in b for c in "NMK") and evaluate(b, {}) == 0:
        b = gen(rng, depth - 1)
    if op in ("min", "max"):
        return f"{op}({a}, {b})"
    return f"({a} {op} {b})"


def evaluate(e, env):
    """The language's dim arithmetic: integers, / and % floored."""
    try:
        return eval(e.replace("/", "//"), {"min": min, "max": max}, dict(env))
    except ZeroDivisionError:
        return None


def main():
    linnet, work, seed, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    os.makedirs(work, exist_ok=True)
    exprs = [gen(rng, 3) for _ in range(count)]
    # Each result extent is the expression plus a margin so that most
    # are valid shapes; the margin is part of what is evaluated.
    def module(path, skip=()):
        entries = []
        for i, e in enumerate(exprs):
            if i in skip:
                continue
            ext = f"{e} + 6"
            # The extent as a result's (the runtime sizes it) and as a loop's
            # inside (the compiled code computes it): sum of 0..E-1.
            entries.append(f"    pub entry e{i}<N: dim, M: dim>(x: Tensor[N; f32], y: Tensor[M; f32]) "
                           f"-> (Tensor[{ext}; f32], f32) {{\n"
                           f"        ([i: {ext}] i as f32, sum(j: {ext}) j as f32)\n    }}")
        with open(path, "w") as f:
            f.write("module dims\npub block B<K: dim> {\n" + "\n".join(entries) + "\n}\n")

    # Each result extent is the expression plus a margin so that most are
    # valid shapes; the margin is part of what is evaluated.
    ln = os.path.join(work, "dims.ln")
    # Expressions check refuses whatever the values (a divisor its algebra
    # makes 0, as K % (N % N)) are left out, each named by its line.
    while True:
        module(ln)
        c = subprocess.run([linnet, "check", ln], capture_output=True, text=True)
        if c.returncode == 0:
            break
        bad = {(int(l) - 3) // 3 for l in re.findall(r"dims\.ln:(\d+):\d+: error", c.stderr)}
        kept = [e for k, e in enumerate(exprs) if k not in bad]
        if not bad or len(kept) == len(exprs):
            print(f"CHECK FAILED: {c.stderr[:300]}")
            return 1
        exprs[:] = kept
    values = [(1, 4, 2), (7, 2, 3), (0, 3, 1), (5, 5, 4), (2, 9, 5)]
    status, checked, refused = 0, 0, 0
    sys.path.insert(0, os.environ.get("LINNET_PYTHON", ""))
    import torch
    from linnet import reference
    # The build binds K: an entry whose extent divides by zero or is
    # negative with it is refused by the build, naming the entry and the
    # extent at its source; it is left out of that build.
    arts = {}
    for K in sorted({v[2] for v in values}):
        art, lnK, skip = os.path.join(work, f"art{K}"), os.path.join(work, f"dims{K}.ln"), set()
        while True:
            module(lnK, skip)
            b = subprocess.run([linnet, "build", lnK, "-D", f"K={K}", "--target", "cpu", "-o", art],
                               capture_output=True, text=True)
            if b.returncode == 0:
                break
            m = re.search(r"dims::B\.e(\d+)\b.*(divides by zero|\(negative\))", b.stderr)
            if not m or int(m.group(1)) in skip:
                print(f"BUILD FAILED for K={K}: {b.stderr[:300]}")
                return 1
            skip.add(int(m.group(1)))
        arts[K] = (art, skip)
    for N, M, K in values:
        art, skip = arts[K]
        np.save(os.path.join(work, "x.npy"), np.zeros(N, np.float32))
        np.save(os.path.join(work, "y.npy"), np.zeros(M, np.float32))
        ref = reference(ln, dims={"K": K})
        for i, e in enumerate(exprs):
            env = {"N": N, "M": M, "K": K}
            want = evaluate(e + " + 6", env)
            # A build-time zero divisor (K alone) refuses the build itself.
            got = {"compiled": None} if i in skip else {}
            for side, cmd in (("compiled", [linnet, "run", art]),
                              ("interpreter", [linnet, "run", ln, "-D", f"K={K}", "--interpret"])):
                if side in got:
                    continue
                out, total = os.path.join(work, f"{side}.npy"), os.path.join(work, f"{side}-sum.npy")
                for o in (out, total):
                    if os.path.exists(o):
                        os.remove(o)
                r = subprocess.run(cmd + ["--entry", f"e{i}", "--input", f"x={work}/x.npy",
                                          "--input", f"y={work}/y.npy", "--output", out,
                                          "--output", total],
                                   capture_output=True, text=True)
                if r.returncode < 0 or "internal error" in r.stderr or "loc(" in r.stderr:
                    print(f"CRASH {side} e{i} = {e} at N={N} M={M} K={K}: rc {r.returncode} {r.stderr[:200]}")
                    status = 1
                got[side] = None
                if r.returncode == 0:
                    a = np.load(out)
                    # The result is [i: E] i: its extent, and every element
                    # written by a loop of that extent.
                    n, t = a.shape[0], float(np.load(total))
                    got[side] = n if np.array_equal(a, np.arange(n)) and t == n * (n - 1) / 2 else \
                        f"extent {n} with elements {a[:8].tolist()}, sum {t}"
            try:
                t, tot = ref.call(f"e{i}", torch.zeros(N), torch.zeros(M))
                n = int(t.shape[0])
                got["python"] = n if torch.equal(t, torch.arange(n).to(t.dtype)) and \
                    float(tot) == n * (n - 1) / 2 else f"extent {n} with elements {t[:8].tolist()}, sum {float(tot)}"
            except Exception:  # noqa: BLE001 - any refusal counts as one
                got["python"] = None
            expect = want if want is not None and want >= 0 else None
            # Check's algebra divides exactly where the divisor divides the
            # dividend as polynomials (N * K / N is K, N % N is 0) whatever
            # the values: the plan then has no division to fail at N = 0,
            # and every evaluator reads the plan.
            values_seen = set(got.values())
            if want is None and len(values_seen) == 1 and None not in values_seen:
                expect = values_seen.pop()
            checked += 1
            refused += expect is None
            if any(v != expect for v in got.values()):
                print(f"DISAGREE e{i} = {e} at N={N} M={M} K={K}: expected {expect}, got {got}")
                status = 1
    print(f"dims: {checked} evaluations of {len(exprs)} expressions, {refused} refused by all, "
          f"{'all agree' if status == 0 else 'DISAGREEMENT'}")
    return status


if __name__ == "__main__":
    sys.exit(main())

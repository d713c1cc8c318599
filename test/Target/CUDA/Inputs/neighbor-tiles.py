"""neighbor-tiles.py LINNET OUT: builds Inputs/features.ln for the CUDA
target's CPU execution (--emulate) at several row counts and feature
widths, runs each relation entry on a random CSR graph (empty rows, rows
longer than several neighbor tiles) and compares it with the interpreter.
Prints one line per case."""
import os
import subprocess
import sys

import numpy as np

linnet, out = sys.argv[1], sys.argv[2]
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "features.ln")
rng = np.random.default_rng(11)


def run(args):
    subprocess.run([linnet] + args, check=True)


for rows, feats in [(61, 64), (2, 64), (40, 256), (33, 48)]:
    d = ["-D", f"Rows={rows}", "-D", f"F={feats}"]
    case = os.path.join(out, f"r{rows}f{feats}")
    os.makedirs(case, exist_ok=True)
    n = 50
    deg = rng.integers(0, 80, rows)
    deg[0] = 0
    deg[-1] = 131  # five tiles of 32 and a remainder
    rp = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    ci = rng.integers(0, n, rp[-1]).astype(np.int64)
    files = {"rp": rp, "ci": ci, "x": rng.standard_normal((n, feats)).astype(np.float32),
             "w": rng.standard_normal(rp[-1]).astype(np.float32),
             "h": rng.standard_normal((rows, feats)).astype(np.float32)}
    for k, v in files.items():
        np.save(os.path.join(case, k + ".npy"), v)
    f = lambda k: os.path.join(case, k + ".npy")
    weights = os.path.join(case, "none.safetensors")
    run(["init-weights", src] + d + ["-o", weights])
    art = os.path.join(case, "emu")
    run(["build", src] + d + ["--target", "cuda", "--emulate", "--variants", "none", "-o", art])
    for entry, inputs in [("weighted", ["x", "w"]), ("relative", ["x", "h"])]:
        args = ["--entry", entry, "--weights", weights, "--relation", f"g={f('rp')},{f('ci')}"]
        for i in inputs:
            args += ["--input", f"{i}={f(i)}"]
        run(["run", src] + d + ["--interpret"] + args + ["--output", f("want-" + entry)])
        run(["run", art] + args + ["--output", f("got-" + entry)])
        want, got = np.load(f("want-" + entry)), np.load(f("got-" + entry))
        ok = want.shape == got.shape and np.allclose(want, got, rtol=1e-5, atol=1e-5)
        print(f"rows {rows} F {feats} {entry}: {'agree' if ok else 'DIFFER %g' % np.abs(want - got).max()}")

"""relation-mean.py LINNET MODEL OUT: the model's three mean aggregations
on random graphs (a row without edges, a row of 70), interpreted and built
for the CPU and for the CUDA target's CPU execution, against each other
and numpy. One line per (rows, features)."""
import os
import subprocess
import sys

import numpy as np

exe, model, out = sys.argv[1:4]
rng = np.random.default_rng(5)
for K, F in [(1, 32), (3, 8), (40, 48)]:
    d = os.path.join(out, "k%df%d" % (K, F))
    os.makedirs(d, exist_ok=True)
    f = lambda n: os.path.join(d, n)
    deg = rng.integers(0, 5, K)
    deg[0], deg[-1] = 0, 70
    rp = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    S = 6
    ci = rng.integers(0, S, rp[-1]).astype(np.int64)
    h = rng.standard_normal((S, F)).astype(np.float32)
    w = rng.standard_normal(rp[-1]).astype(np.float32)
    for n, a in [("rp", rp), ("ci", ci), ("x", rng.standard_normal(S).astype(np.float32)), ("h", h), ("w", w)]:
        np.save(f(n + ".npy"), a)
    D = ["-D", "K=%d" % K, "-D", "F=%d" % F]
    args = ["--entry", "main", "--relation", "g=%s,%s" % (f("rp.npy"), f("ci.npy"))]
    for n in "xhw":
        args += ["--input", "%s=%s" % (n, f(n + ".npy"))]
    outs = lambda p: sum([["--output", f("%s%d.npy" % (p, i))] for i in range(3)], [])
    subprocess.run([exe, "run", model] + D + ["--interpret"] + args + outs("want"), check=True)
    ok = []
    for tgt, flags in [("cpu", ["--target", "cpu"]), ("emu", ["--target", "cuda", "--emulate"])]:
        subprocess.run([exe, "build", model] + D + flags + ["-o", f("art-" + tgt)], check=True)
        subprocess.run([exe, "run", f("art-" + tgt)] + args + outs(tgt), check=True)
        ok.append(all(np.allclose(np.load(f("want%d.npy" % i)), np.load(f("%s%d.npy" % (tgt, i))),
                                  rtol=1e-5, atol=1e-6) for i in range(3)))
    mean = np.zeros((K, F))
    for r in range(K):
        if deg[r]:
            mean[r] = h[ci[rp[r]:rp[r + 1]]].mean(0)
    ok.append(np.allclose(np.load(f("want1.npy")), mean, rtol=1e-5, atol=1e-6))
    print("rows %d F %d: %s" % (K, F, "agree" if all(ok) else "DIFFER %s" % ok))

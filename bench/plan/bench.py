#!/usr/bin/env python3
"""linnet plan speed: examples/llama.ln with 32 layers (target < 100 ms) and a
generated model of 1,000 block instances (target < 2 s).

Usage: bench/plan/bench.py [--linnet build/bin/linnet] [--runs 5]
Prints each figure (best of the runs, wall clock) and PASS/FAIL; exits 1 on
a FAIL.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def generated_model(groups=100, per_group=9):
    """Root -> `groups` Group instances, each with `per_group` distinct Leaf
    subs (not an array, so each is its own instance): 1 + groups * (1 +
    per_group) = 1,001 instances with the defaults."""
    leaf = """block Leaf<N: dim, T: dtype(float)> {
    param weight: Tensor[N, N; T]
    param bias: Tensor[N; T]? = none
    state acc: Tensor[N; T]
    pub fn forward<B: dim>(x: Tensor[B, N; T]) -> Tensor[B, N; T] {
        acc = [n: N] acc[n] + x[0, n]
        [b: B, o: N] sum(i: N) x[b, i] * weight[o, i]
    }
}
"""
    subs = "\n".join(f"    sub l{i}: Leaf<N, T>" for i in range(per_group))
    calls = "\n".join(f"        let h{i + 1} = l{i}.forward(h{i})" for i in range(per_group))
    group = f"""block Group<N: dim, T: dtype(float)> {{
{subs}
    pub fn forward<B: dim>(x: Tensor[B, N; T]) -> Tensor[B, N; T] {{
        let h0 = x
{calls}
        h{per_group}
    }}
}}
"""
    gsubs = "\n".join(f"    sub g{i}: Group<N, T>" for i in range(groups))
    return f"""module gen
{leaf}
{group}
pub block Root<N: dim = 64, T: dtype(float) = f32> {{
{gsubs}
    pub entry forward<B: dim>(x: Tensor[B, N; T]) -> Tensor[B, N; T] {{
        g0.forward(x)
    }}
}}
"""


def best(cmd, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - t0)
        if r.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr.decode()}")
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--linnet", default=os.path.join(ROOT, "build", "bin", "linnet"))
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    ok = True
    t = best([a.linnet, "plan", os.path.join(ROOT, "examples", "llama.ln"), "-D", "Layers=32"], a.runs)
    good = t < 0.100
    ok &= good
    print(f"plan examples/llama.ln -D Layers=32: {t * 1000:.1f} ms (target < 100 ms) {'PASS' if good else 'FAIL'}")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "gen.ln")
        with open(path, "w") as f:
            f.write(generated_model())
        t = best([a.linnet, "plan", path], a.runs)
        good = t < 2.0
        ok &= good
        print(f"plan of a generated model with 1,001 block instances: {t * 1000:.1f} ms (target < 2 s) "
              f"{'PASS' if good else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

"""Forward + backward of the CSR weighted aggregation (out[d] = sum over edges
s -> d of x[s] * w[e]), compiled by linnet.MessagePassing, against the same
computation with torch.sparse (forward and backward), in the same run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/aggregation.py [--nodes N] [--edges E] [--features F]

The graph is R-MAT (a = 0.57, b = c = 0.19), as in the issue's target:
100k nodes, ~1M edges, F = 64, gradients to x. Also prints the per-call
overhead of a compiled kernel on a 3-node graph.
"""

import argparse
import time

import torch

import linnet


class WeightedAggregation(linnet.MessagePassing):
    reducer = linnet.sum()

    def edge(self, src, dst, edge):
        return src.x * edge.weight


def rmat(n, m, seed, a=0.57, b=0.19, c=0.19):
    g = torch.Generator().manual_seed(seed)
    bits = max(1, (n - 1).bit_length())
    src = torch.zeros(m, dtype=torch.int64)
    dst = torch.zeros(m, dtype=torch.int64)
    for _ in range(bits):
        r = torch.rand(m, generator=g)
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)
        down = r >= a + b
        src = src * 2 + down.long()
        dst = dst * 2 + right.long()
    return src % n, dst % n


def timeit(fn, repeat):
    fn()  # warm up (and compile)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    n, f = args.nodes, args.features
    src, dst = rmat(n, args.edges, seed=0)
    graph = linnet.Graph.from_coo(src, dst, num_src=n, num_dst=n, validate="cheap")
    w = torch.rand(args.edges)
    x = torch.randn(n, f, requires_grad=True)
    kernel = WeightedAggregation()
    up = torch.randn(n, f)
    graph.transposed()  # built once per graph, as a training loop would reuse it

    def ours():
        out = kernel(graph=graph, src={"x": x}, edge={"weight": w})
        (gx,) = torch.autograd.grad(out, x, up)
        return out, gx

    a = torch.sparse_coo_tensor(torch.stack([dst, src]), w, (n, n)).coalesce()

    def sparse():
        out = torch.sparse.mm(a, x)
        (gx,) = torch.autograd.grad(out, x, up)
        return out, gx

    o1, g1 = ours()
    o2, g2 = sparse()
    torch.testing.assert_close(o1, o2, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(g1, g2, rtol=1e-4, atol=1e-4)
    t_ours, t_sparse = timeit(ours, args.repeat), timeit(sparse, args.repeat)
    print(f"R-MAT {n} nodes, {args.edges} edges, F = {f}, forward + backward (best of "
          f"{args.repeat}):")
    print(f"  linnet MessagePassing: {t_ours * 1e3:.1f} ms")
    print(f"  torch.sparse:          {t_sparse * 1e3:.1f} ms")
    print(f"  speedup: {t_sparse / t_ours:.2f}x (target >= 3x)")

    tiny = linnet.Graph.from_csr(torch.tensor([0, 2, 3, 3]), torch.tensor([0, 1, 1]), num_src=2)
    tx, tw = torch.tensor([2.0, 3.0]), torch.tensor([4.0, 5.0, 2.0])
    calls, best = 1000, float("inf")
    kernel(graph=tiny, src={"x": tx}, edge={"weight": tw})
    for _ in range(7):  # best of 7 batches: the machine may be shared
        t = time.perf_counter()
        for _ in range(calls):
            kernel(graph=tiny, src={"x": tx}, edge={"weight": tw})
        best = min(best, (time.perf_counter() - t) / calls)
    txg = tx.clone().requires_grad_()
    best_grad = float("inf")
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(calls):
            kernel(graph=tiny, src={"x": txg}, edge={"weight": tw})
        best_grad = min(best_grad, (time.perf_counter() - t) / calls)
    print(f"call overhead (3-node graph, forward; best of 7 x {calls} calls): "
          f"{best * 1e6:.1f} us without autograd, {best_grad * 1e6:.1f} us recording "
          f"for backward (target < 20 us)")


if __name__ == "__main__":
    main()

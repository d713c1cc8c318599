"""paged.py LINNET MODEL OUT: std.graph.paged (a relation read through a
block table) compiled for the CPU and for CUDA (emulated) and interpreted, each against numpy's
reading of §10.6: lengths clamped to the table, pages shared between rows,
rows of no edges, and slots outside the pool (not related). One line per
case."""
import os
import subprocess
import sys

import numpy as np

exe, model, out = sys.argv[1:4]
P, PAGES, M, B, F = 4, 6, 3, 3, 5
rng = np.random.default_rng(5)


def rows_of(table, lengths):
    rows = []
    for d in range(M):
        n = min(max(int(lengths[d]), 0), B * P)
        row = []
        for j in range(n):
            slot = int(table[d, j // P]) * P + j % P
            if 0 <= slot < PAGES * P and table[d, j // P] >= 0:
                row.append(slot)
        rows.append(row)
    return rows


def oracle(table, lengths, pool, q, k, v):
    rows = rows_of(table, lengths)
    gather = np.zeros((M, F), np.float64)
    attend = np.zeros((M, F), np.float64)  # no keys: zeros (std.nn's finalize)
    e = 0
    for d, row in enumerate(rows):
        for s in row:
            gather[d] += pool[s] * (1.0 + e)
            e += 1
        if row:
            scores = np.array([q[d] @ k[s] for s in row], np.float64)
            w = np.exp(scores - scores.max())
            attend[d] = (w[:, None] * v[row]).sum(0) / w.sum()
    return np.array([len(r) for r in rows], np.int64), gather, attend


arts = {"cpu": os.path.join(out, "cpu"), "cuda": os.path.join(out, "cuda")}
subprocess.run([exe, "build", model, "--target", "cpu", "-o", arts["cpu"]], check=True)
subprocess.run([exe, "build", model, "--target", "cuda", "--emulate", "-o", arts["cuda"]], check=True)


def save(name, a):
    p = os.path.join(out, name + ".npy")
    np.save(p, a)
    return p


def run(entry, inputs, how):
    o = os.path.join(out, "%s-%s.npy" % (entry, how))
    cmd = [exe, "run", arts["cpu" if how == "interpret" else how], "--entry", entry, "--output", o]
    cmd += sum([["--input", "%s=%s" % (n, save(n, a))] for n, a in inputs], [])
    if how == "interpret":
        cmd.append("--interpret")
    subprocess.run(cmd, check=True)
    return np.load(o)


cases = [
    ("three rows, pages in any order", [[2, 0, 5], [1, 3, 4], [5, 2, 0]], [9, 12, 3]),
    ("lengths clamped to the table", [[0, 1, 2], [3, 4, 5], [1, 1, 1]], [-4, 40, 0]),
    ("a page shared by two rows", [[4, 4, 4], [4, 0, 0], [0, 4, 4]], [10, 2, 5]),
    ("slots outside the pool", [[-1, 2, 6], [7, 1, 0], [2**40, -2**40, 3]], [12, 9, 12]),
]
for name, table, lengths in cases:
    table = np.array(table, np.int64)
    lengths = np.array(lengths, np.int64)
    pool = rng.standard_normal((PAGES * P, F)).astype(np.float32)
    q = rng.standard_normal((M, F)).astype(np.float32)
    k = rng.standard_normal((PAGES * P, F)).astype(np.float32)
    v = rng.standard_normal((PAGES * P, F)).astype(np.float32)
    count, gather, attend = oracle(table, lengths, pool, q, k, v)
    ok = True
    for how in ("cpu", "cuda", "interpret"):
        c = run("count", [("table", table), ("lengths", lengths)], how)
        g = run("gather", [("table", table), ("lengths", lengths), ("pool", pool)], how)
        a = run("attend", [("q", q), ("table", table), ("lengths", lengths), ("k", k), ("v", v)], how)
        if not np.array_equal(c, count):
            print("%s: count %s, expected %s (%s)" % (name, c, count, how))
            ok = False
        if not np.allclose(g, gather, rtol=1e-5, atol=1e-4):
            print("%s: gather differs by %g (%s)" % (name, np.abs(g - gather).max(), how))
            ok = False
        if not np.allclose(a, attend, rtol=1e-5, atol=1e-5):
            print("%s: attend differs (%s):\n%s\n%s" % (name, how, a, attend))
            ok = False
    print("%s: %s (%d edges)" % (name, "agree" if ok else "DISAGREE", count.sum()))

"""neighbors.py LINNET MODEL OUT: std.graph's relations (knn, knn_graph,
radius, radius_graph) on point clouds made to hit the edge cases (ties,
duplicates, lattices, empty neighbourhoods, k above the candidates, r = 0,
r < 0, NaN coordinates), through the reference interpreter and the CPU
build, each against a numpy brute force of the documented semantics
(docs/language/10-relations-and-reducers.md, §10.5). One line per case."""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools", "difftest"))
from lnast import neighbour_rows as neighbours  # noqa: E402  the generator's oracle of §10.5

exe, model, out = sys.argv[1:4]
K, F = 8, 4
rng = np.random.default_rng(11)


def expose(rows):
    count = np.array([len(r) for r in rows], np.int64)
    hashes = []
    for r in rows:
        h = 7
        for s in r:
            h = (h * 1009 + int(s) + 1) % 1000000007
        hashes.append(h)
    return count, np.array(hashes, np.int64)


def run(args, outs):
    subprocess.run([exe, "run"] + args + sum([["--output", o] for o in outs], []), check=True)


art = os.path.join(out, "art")
D = ["-D", "K=%d" % K, "-D", "F=%d" % F]
subprocess.run([exe, "build", model] + D + ["--target", "cpu", "-o", art], check=True)

cases = []
cases.append(("knn uniform 3-D", "knn_self", [rng.random((120, 3))], None))
dup = rng.integers(0, 4, (60, 3)).astype(np.float32)  # many duplicates
cases.append(("knn duplicates", "knn_self", [dup], None))
lat = np.stack(np.meshgrid(np.arange(9), np.arange(9)), -1).reshape(-1, 2)
cases.append(("knn lattice (ties)", "knn_self", [lat], None))
cases.append(("knn k above the candidates", "knn_self", [rng.random((5, 3))], None))
cases.append(("knn one point", "knn_self", [rng.random((1, 3))], None))
cases.append(("knn 1-D", "knn_self", [rng.random((50, 1))], None))
cases.append(("knn 5-D", "knn_self", [rng.random((60, 5))], None))
nan = rng.random((40, 3))
nan[7, 1] = np.nan
cases.append(("knn NaN coordinate", "knn_self", [nan], None))
cases.append(("knn cross", "knn_cross", [rng.random((30, 3)), rng.random((90, 3))], None))
cases.append(("knn cross, fewer sources", "knn_cross", [rng.random((10, 2)), rng.random((4, 2))], None))
cases.append(("radius", "radius_self", [rng.random((150, 3))], 0.22))
cases.append(("radius empty rows", "radius_self", [rng.random((60, 3)) * 10], 0.5))
cases.append(("radius r = 0 (duplicates)", "radius_self", [dup], 0.0))
cases.append(("radius r < 0", "radius_self", [rng.random((20, 3))], -1.0))
cases.append(("radius lattice boundary", "radius_self", [lat], 1.0))
cases.append(("radius cross", "radius_cross", [rng.random((40, 3)), rng.random((100, 3))], 0.3))

def prepare(d, entry, pts, r):
    """Writes a case's inputs into `d`: its run arguments and the numpy
    brute force's (counts, hashes)."""
    os.makedirs(d, exist_ok=True)
    args = ["--entry", entry]
    pts = [p.astype(np.float32) for p in pts]
    for nm, p in zip(["pos"] if len(pts) == 1 else ["q", "p"], pts):
        np.save(os.path.join(d, nm + ".npy"), p)
        args += ["--input", "%s=%s" % (nm, os.path.join(d, nm + ".npy"))]
    if r is not None:
        np.save(os.path.join(d, "r.npy"), np.float32(r))
        args += ["--input", "r=%s" % os.path.join(d, "r.npy")]
    q, p = (pts[0], pts[0]) if len(pts) == 1 else pts
    return args, expose(neighbours(q, p, K, len(pts) == 1, None if r is None else np.float32(r)))


ok_all = True
for n, (name, entry, pts, r) in enumerate(cases):
    d = os.path.join(out, "c%d" % n)
    args, want = prepare(d, entry, pts, r)
    o = lambda t: [os.path.join(d, "%s%d.npy" % (t, i)) for i in range(2)]
    run([model] + D + ["--interpret"] + args, o("interp"))
    run([art] + args, o("cpu"))
    got = {t: [np.load(f) for f in o(t)] for t in ["interp", "cpu"]}
    ok = {t: all(np.array_equal(a, b) for a, b in zip(want, got[t])) for t in got}
    ok_all &= all(ok.values())
    print("%s: %s (%d edges)" % (name, "agree" if all(ok.values()) else "DIFFER %s" % ok, want[0].sum()))

# Feature aggregations over one relation (mean, EdgeConv's max).
pos, x = rng.random((80, 3)).astype(np.float32), rng.standard_normal((80, F)).astype(np.float32)
d = os.path.join(out, "feat")
os.makedirs(d, exist_ok=True)
np.save(os.path.join(d, "pos.npy"), pos)
np.save(os.path.join(d, "x.npy"), x)
args = ["--entry", "features", "--input", "pos=%s/pos.npy" % d, "--input", "x=%s/x.npy" % d]
o = lambda t: [os.path.join(d, "%s%d.npy" % (t, i)) for i in range(2)]
run([model] + D + ["--interpret"] + args, o("interp"))
run([art] + args, o("cpu"))
rows = neighbours(pos, pos, K, True)
mean = np.stack([x[r].mean(0) for r in rows])
edge = np.stack([(x[r] - x[i]).max(0) for i, r in enumerate(rows)])
ok = all(np.allclose(np.load(a), w, rtol=1e-5, atol=1e-6) for a, w in zip(o("interp"), [mean, edge]))
ok &= all(np.allclose(np.load(a), w, rtol=1e-5, atol=1e-6) for a, w in zip(o("cpu"), [mean, edge]))
ok_all &= ok
print("features (mean, edge max): %s" % ("agree" if ok else "DIFFER"))

# Sizes that take the builder's grid (compiled against numpy only).
for name, entry, pts, r in [("grid knn 6000", "knn_self", [rng.random((6000, 3))], None),
                            ("grid knn clustered", "knn_self",
                             [(rng.standard_normal((5000, 3)) * 0.01 + rng.integers(0, 5, (5000, 1)))], None),
                            ("grid radius 6000", "radius_self", [rng.random((6000, 3))], 0.07),
                            ("grid knn cross", "knn_cross", [rng.random((3000, 3)), rng.random((5000, 3))], None)]:
    d = os.path.join(out, name.replace(" ", "-"))
    args, want = prepare(d, entry, pts, r)
    o = [os.path.join(d, "cpu%d.npy" % i) for i in range(2)]
    run([art] + args, o)
    ok = all(np.array_equal(a, np.load(b)) for a, b in zip(want, o))
    ok_all &= ok
    print("%s: %s" % (name, "agree" if ok else "DIFFER"))
sys.exit(0 if ok_all else 1)

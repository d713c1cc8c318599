#!/usr/bin/python3
"""Checks lib/Target/CPU/RelationBuild.c against a numpy brute force.

    cc -O2 -fPIC -shared -ffp-contract=off -o /tmp/rb.so \
        lib/Target/CPU/RelationBuild.c -lm
    # or in parallel: ... -lm -L/usr/lib/llvm-19/lib \
    #     -Wl,-rpath,/usr/lib/llvm-19/lib -Wl,--no-as-needed -lomp
    /usr/bin/python3 relation_build_check.py /tmp/rb.so

Calls _mlir_ciface_linnet_relation_build through ctypes with hand-built memref
descriptors (contiguous, transposed, reversed and offset views) and compares
row_ptr / col_idx with the reference semantics bit for bit: squared distance
summed axis by axis in float64, NaN ranks as +inf, rows keep the first k
candidates in (distance, source index) order, unused col_idx capacity is 0.
Cases with M*N > 65536 take the library's grid path; in cases with more than
1200 rows a random subset is compared to the reference (kNN row counts are
checked for all rows). One line per case; exits
non-zero on any mismatch.
"""
import ctypes
import math
import sys
import time

import numpy as np


class MemRef2(ctypes.Structure):
    _fields_ = [("allocated", ctypes.POINTER(ctypes.c_double)),
                ("aligned", ctypes.POINTER(ctypes.c_double)),
                ("offset", ctypes.c_int64),
                ("sizes", ctypes.c_int64 * 2),
                ("strides", ctypes.c_int64 * 2)]


class MemRef1(ctypes.Structure):
    _fields_ = [("allocated", ctypes.POINTER(ctypes.c_int64)),
                ("aligned", ctypes.POINTER(ctypes.c_int64)),
                ("offset", ctypes.c_int64),
                ("sizes", ctypes.c_int64 * 1),
                ("strides", ctypes.c_int64 * 1)]


def descriptor(cls, ctype, view, base):
    """Descriptor of `view`, a strided view into the 1-D buffer `base`."""
    item = base.itemsize
    assert base.ndim == 1 and base.flags.c_contiguous
    ptr = base.ctypes.data_as(ctypes.POINTER(ctype))
    d = cls()
    d.allocated = ptr
    d.aligned = ptr
    d.offset = (view.__array_interface__["data"][0] - base.ctypes.data) // item
    for a in range(view.ndim):
        d.sizes[a] = view.shape[a]
        d.strides[a] = view.strides[a] // item
    return d


def layout(pts, how, rng):
    """Returns (view, base): pts (M x D) stored in `base` with layout `how`."""
    m, d = pts.shape
    if how == "contig":
        base = np.ascontiguousarray(pts).reshape(-1)
        return base.reshape(m, d), base
    if how == "transposed":  # column-major: strides (1, M)
        base = np.ascontiguousarray(pts.T).reshape(-1)
        return base.reshape(d, m).T, base
    if how == "reversed":  # negative row stride, odd offset
        base = np.full((m + 3) * d + 1, np.nan)
        buf = base[1:1 + (m + 3) * d].reshape(m + 3, d)
        buf[2:2 + m] = pts[::-1]
        return buf[2:2 + m][::-1], base
    if how == "padded":  # row stride d + 2, offset 5
        base = np.full(5 + m * (d + 2) + 2, np.nan)
        buf = base[5:5 + m * (d + 2)].reshape(m, d + 2)
        buf[:, :d] = pts
        return buf[:, :d], base
    raise ValueError(how)


def run_lib(lib, dst, src, kind, k, excl, r, how="contig", same=False,
            col_stride=1, rng=None):
    m = dst.shape[0]
    dv, db = layout(dst, how, rng)
    dd = descriptor(MemRef2, ctypes.c_double, dv, db)
    if same:
        sd = dd
        sv = dv
    else:
        sv, sb = layout(src, how, rng)
        sd = descriptor(MemRef2, ctypes.c_double, sv, sb)
    if dst.shape[1] == 0:  # no data to point into; any pointer works
        pass
    rp_base = np.full(m + 1 + 3, -5, dtype=np.int64)
    rp_view = rp_base[3:]
    cap = m * k
    col_base = np.full(2 + cap * col_stride + 1, -7, dtype=np.int64)
    col_view = col_base[2:2 + cap * col_stride:col_stride]
    rpd = descriptor(MemRef1, ctypes.c_int64, rp_view, rp_base)
    cd = descriptor(MemRef1, ctypes.c_int64, col_view, col_base)
    t0 = time.perf_counter()
    lib._mlir_ciface_linnet_relation_build(
        ctypes.byref(dd), ctypes.byref(sd), ctypes.byref(rpd),
        ctypes.byref(cd), kind, k, excl, ctypes.c_double(r))
    dt = time.perf_counter() - t0
    assert np.all(rp_base[:3] == -5), "row_ptr written before its view"
    if col_stride > 1:
        gaps = np.ones(col_base.shape, bool)
        gaps[2:2 + cap * col_stride:col_stride] = False
        assert np.all(col_base[gaps] == -7), "col_idx written outside its view"
    else:
        assert col_base[0] == -7 and col_base[1] == -7 and col_base[-1] == -7
    return rp_view.copy(), col_view.copy(), dt


def ref_rows(dst, src, rows, kind, k, excl, r):
    """Reference neighbour lists of the given dst rows."""
    n, d = src.shape
    out = []
    r2 = r * r
    for b0 in range(0, len(rows), 256):
        rb = rows[b0:b0 + 256]
        s = np.zeros((len(rb), n))
        with np.errstate(all="ignore"):  # inf - inf, overflowing squares
            for a in range(d):  # axis by axis, as the semantics prescribe
                t = dst[rb, a][:, None] - src[None, :, a]
                t = t * t
                s = s + t
        key = np.where(np.isnan(s), np.inf, s)
        valid = np.ones(s.shape, bool)
        if excl:
            valid &= rb[:, None] != np.arange(n)[None, :]
        if kind == 1:
            valid &= (s <= r2) if r >= 0 else False
        for x in range(len(rb)):
            cand = np.nonzero(valid[x])[0]
            kk = key[x, cand]
            if len(cand) > k:
                kth = np.partition(kk, k - 1)[k - 1]
                sel = kk <= kth
                cand, kk = cand[sel], kk[sel]
            order = np.lexsort((cand, kk))
            out.append(cand[order][:k])
    return out


def check(lib, name, dst, src, kind, k, excl, r, sample=1200, seed=0, **kw):
    rng = np.random.default_rng(seed)
    t_case = time.perf_counter()
    m, n = dst.shape[0], src.shape[0]
    rp, col, dt = run_lib(lib, dst, src, kind, k, excl, r, rng=rng, **kw)
    errors = []
    if rp[0] != 0 or np.any(np.diff(rp) < 0) or rp[-1] > m * k:
        errors.append("row_ptr not monotone from 0")
    elif np.any(col[rp[-1]:] != 0):
        errors.append("unused capacity not zeroed")
    if not errors:
        counts = np.diff(rp)
        if kind == 0:
            avail = np.full(m, n, dtype=np.int64)
            if excl:
                avail[:min(m, n)] -= 1
            want = np.minimum(avail, k)
            if np.any(counts != want):
                errors.append("kNN counts differ")
        if sample >= m:
            rows = np.arange(m)
        else:
            rows = np.sort(rng.choice(m, sample, replace=False))
        ref = ref_rows(dst, src, rows, kind, k, excl, r)
        for row, want in zip(rows, ref):
            got = col[rp[row]:rp[row + 1]]
            if len(got) != len(want) or np.any(got != want):
                errors.append("row %d: got %s want %s" % (
                    row, got[:20].tolist(), want[:20].tolist()))
                break
        checked = len(rows)
    else:
        checked = 0
    status = "FAIL" if errors else "ok"
    print("%-4s %-40s M=%-5d N=%-5d D=%d k=%-3d rows=%-5d nnz=%-6d "
          "lib %.3fs all %.2fs %s" % (
              status, name, m, n, dst.shape[1], k, checked,
              rp[-1] if len(rp) else 0, dt, time.perf_counter() - t_case,
              "; ".join(errors)))
    sys.stdout.flush()
    return not errors


def blobs(rng, n, d, nblobs, sigma):
    centers = rng.random((nblobs, d))
    lab = rng.integers(0, nblobs, n)
    return centers[lab] + sigma * rng.standard_normal((n, d))


def radius_for(pts, want, rng):
    """A radius with about `want` neighbours per point (from a sample)."""
    sub = pts[rng.choice(len(pts), min(200, len(pts)), replace=False)]
    d2 = ((sub[:, None, :] - pts[None, :, :]) ** 2).sum(-1)
    return float(np.sqrt(np.median(np.sort(d2, axis=1)[:, want])))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: relation_build_check.py LIBRARY.so")
    lib = ctypes.CDLL(sys.argv[1])
    lib._mlir_ciface_linnet_relation_build.restype = None
    lib._mlir_ciface_linnet_relation_build.argtypes = [
        ctypes.c_void_p] * 4 + [ctypes.c_int64] * 3 + [ctypes.c_double]
    rng = np.random.default_rng(1234)
    t0 = time.perf_counter()
    ok = True
    KNN, RAD = 0, 1

    def c(*a, **kw):
        nonlocal ok
        ok &= check(lib, *a, **kw)

    # Small random clouds (brute-force path) and larger ones (grid path).
    for d in (1, 2, 3, 5):
        p = rng.random((200, d))
        c("small rand kNN self", p, p, KNN, 7, 1, 0.0, same=True)
        c("small rand radius", p, p, RAD, 12, 0, 0.3 ** (1 / d) * 0.5)
        p = rng.random((3000, d))
        r = radius_for(p, 10, rng)
        c("rand kNN self", p, p, KNN, 8, 1, 0.0, same=True)
        c("rand kNN self, copied src", p, p.copy(), KNN, 8, 1, 0.0)
        c("rand radius self", p, p, RAD, 16, 1, r, same=True)
        c("rand radius, no exclude", p, p, RAD, 16, 0, r, same=True)
    # Layouts: transposed, reversed (negative stride), padded; strided col.
    p = rng.random((2500, 3))
    q = rng.random((1700, 3))
    for how in ("transposed", "reversed", "padded"):
        c("kNN bipartite " + how, q, p, KNN, 9, 0, 0.0, how=how)
        c("radius self " + how, p, p, RAD, 20, 1, 0.05, how=how, same=True)
    c("kNN strided col_idx", q, p, KNN, 5, 0, 0.0, col_stride=3)
    # Bipartite: different sets, dst partly outside the src box.
    q2 = rng.random((2000, 3)) * 1.6 - 0.3
    c("kNN bipartite dst outside box", q2, p, KNN, 12, 0, 0.0)
    c("kNN bipartite exclude_self (index)", q2, p, KNN, 12, 1, 0.0)
    c("radius bipartite dst outside box", q2, p, RAD, 30, 0, 0.08)
    far = rng.random((500, 3)) + 10.0
    c("kNN dst far away", far, p, KNN, 4, 0, 0.0)
    c("radius dst far away", far, p, RAD, 4, 0, 9.5)
    # Duplicates: many exact ties.
    u = rng.random((60, 3))
    dup = u[rng.integers(0, 60, 6000)]
    c("duplicates kNN", dup, dup, KNN, 10, 1, 0.0, same=True)
    c("duplicates kNN k=150", dup, dup, KNN, 150, 1, 0.0, same=True)
    c("duplicates radius r=0", dup, dup, RAD, 40, 1, 0.0, same=True)
    c("duplicates radius r=0 keep all", dup, dup, RAD, 200, 0, 0.0,
      sample=300, same=True)
    # Lattice: integer points, distances tie exactly.
    g = np.stack(np.meshgrid(*[np.arange(20.0)] * 3, indexing="ij"),
                 -1).reshape(-1, 3)
    c("lattice kNN k=6", g, g, KNN, 6, 1, 0.0, same=True)
    c("lattice kNN k=27", g, g, KNN, 27, 0, 0.0, same=True)
    c("lattice kNN k=33", g, g, KNN, 33, 1, 0.0, same=True)
    c("lattice radius r=1", g, g, RAD, 8, 1, 1.0, same=True)
    c("lattice radius r=sqrt2 (k cuts ties)", g, g, RAD, 10, 1,
      math.sqrt(2.0), same=True)
    c("lattice radius r=1.5 k=30", g, g, RAD, 30, 0, 1.5, same=True)
    g2 = np.stack(np.meshgrid(np.arange(150.0), np.arange(150.0),
                              indexing="ij"), -1).reshape(-1, 2) * 0.1
    c("2-D lattice kNN k=9 (scaled)", g2, g2, KNN, 9, 1, 0.0, same=True,
      sample=3000)
    c("2-D lattice radius", g2, g2, RAD, 12, 1, 0.1, same=True, sample=3000)
    # Empty neighbourhoods, k above the candidate count.
    sp = rng.random((3000, 3))
    c("radius mostly empty rows", sp, sp, RAD, 5, 1, 0.02, same=True)
    c("radius none in range", sp, sp, RAD, 5, 1, 1e-9, same=True)
    small = rng.random((40, 2))
    c("kNN k > N", small, small, KNN, 50, 1, 0.0, same=True)
    c("kNN k > N no exclude", small, small, KNN, 50, 0, 0.0, same=True)
    c("kNN k=1", p, p, KNN, 1, 1, 0.0, same=True)
    c("kNN k=N-1 (grid)", p[:400], p[:400], KNN, 399, 1, 0.0, same=True)
    c("radius k > candidates", sp, sp, RAD, 400, 1, 0.15, sample=500,
      same=True)
    # Special radii.
    c("radius r=0 distinct points", sp, sp, RAD, 3, 0, 0.0, same=True)
    c("radius r<0", sp, sp, RAD, 3, 0, -1.0, same=True)
    c("radius r=nan", sp, sp, RAD, 3, 0, float("nan"), same=True)
    c("radius r=inf", sp[:500], sp[:500], RAD, 7, 1, float("inf"), same=True)
    c("radius r=1e300", sp[:500], sp[:500], RAD, 7, 1, 1e300, same=True)
    # Non-finite coordinates (brute force, NaN ranks last).
    bad = rng.random((600, 3))
    bad[5, 1] = np.nan
    bad[17, 0] = np.inf
    bad[40, 2] = -np.inf
    c("NaN/inf coordinates kNN", bad, bad, KNN, 6, 1, 0.0, same=True)
    c("NaN/inf coordinates kNN k=N", bad[:100], bad[:100], KNN, 100, 0, 0.0)
    c("NaN/inf coordinates radius", bad, bad, RAD, 6, 1, 0.2, same=True)
    c("NaN in dst only, bipartite", bad, p, KNN, 6, 0, 0.0)
    # Empty shapes.
    e3 = np.zeros((0, 3))
    c("M=0", e3, p, KNN, 4, 1, 0.0)
    c("N=0 kNN", p[:10], e3, KNN, 4, 1, 0.0)
    c("N=0 radius", p[:10], e3, RAD, 4, 1, 1.0)
    c("M=N=0", e3, e3, RAD, 4, 1, 1.0)
    z = np.zeros((300, 0))
    c("D=0 kNN (rank by index)", z, z[:250], KNN, 5, 1, 0.0)
    c("D=0 radius", z, z[:250], RAD, 5, 0, 0.0)
    c("D=0 radius r<0", z, z[:250], RAD, 5, 0, -0.5)
    # Degenerate geometry: a constant axis (dst off it), a very thin axis,
    # large offsets, magnitudes where squares underflow or overflow.
    flat = rng.random((4000, 3))
    flat[:, 2] = 0.25
    qf = rng.random((1000, 3))
    c("constant axis, dst off the plane", qf, flat, KNN, 8, 0, 0.0)
    c("constant axis radius", qf, flat, RAD, 8, 0, 0.8)
    thin = rng.random((4000, 3))
    thin[:, 1] *= 1e-12
    c("thin axis kNN", thin, thin, KNN, 8, 1, 0.0, same=True)
    c("all points equal", np.ones((700, 3)), np.ones((700, 3)), KNN, 5, 1,
      0.0)
    off = 1e8 + rng.random((3000, 3)) * 1e-3
    c("large offset kNN", off, off, KNN, 8, 1, 0.0, same=True)
    c("large offset radius", off, off, RAD, 8, 1, 2e-4, same=True)
    tiny = rng.random((3000, 3)) * 1e-160
    c("underflowing squares kNN", tiny, tiny, KNN, 8, 1, 0.0, same=True)
    c("underflowing squares radius", tiny, tiny, RAD, 8, 1, 1e-161,
      same=True)
    huge = (rng.random((3000, 3)) - 0.5) * 1e300
    c("overflowing squares kNN", huge, huge, KNN, 8, 1, 0.0, same=True)
    c("overflowing squares radius", huge, huge, RAD, 8, 1, 1e299, same=True)
    # Clustered data and sizes on the grid path.
    cl = blobs(rng, 20000, 3, 40, 0.01)
    c("clustered kNN k=16", cl, cl, KNN, 16, 1, 0.0, same=True, sample=1500)
    c("clustered radius", cl, cl, RAD, 32, 1, radius_for(cl, 16, rng),
      same=True, sample=1500)
    mixed = np.concatenate([rng.random((12000, 3)),
                            0.5 + 0.002 * rng.standard_normal((6000, 3))])
    mixed = mixed[rng.permutation(len(mixed))]
    c("mixed density kNN k=12", mixed, mixed, KNN, 12, 1, 0.0, same=True)
    c("mixed density radius", mixed, mixed, RAD, 24, 1, 0.01, same=True)
    big = rng.random((20000, 3))
    c("uniform 20k kNN k=16", big, big, KNN, 16, 1, 0.0, same=True,
      sample=1500)
    c("uniform 20k radius", big, big, RAD, 32, 1, radius_for(big, 16, rng),
      same=True, sample=1500)
    qb = rng.random((20000, 3))
    c("uniform 20k bipartite kNN", qb, big, KNN, 16, 0, 0.0, sample=1500)
    b2 = rng.random((20000, 2))
    c("uniform 20k 2-D kNN k=3", b2, b2, KNN, 3, 1, 0.0, same=True,
      sample=1500)
    b5 = rng.random((20000, 5))
    c("uniform 20k 5-D kNN", b5, b5, KNN, 10, 1, 0.0, same=True, sample=800)
    c("uniform 20k 5-D radius", b5, b5, RAD, 10, 1, 0.15, same=True,
      sample=800)
    print("%s in %.1fs" % ("PASS" if ok else "FAIL", time.perf_counter() - t0))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

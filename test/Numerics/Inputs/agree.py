"""Builds a .ln model for the CPU, runs one entry on random inputs and weights,
and holds the outputs against a numpy reference expression (and, where the
reference interpreter is available, against `linnet run --interpret`).

usage: agree.py LINNET MODEL.ln WORKDIR [-D N=V]... --entry E
                [--in NAME=DTYPE:SHAPE[:LO..HI]]... [--weight PATH=DTYPE:SHAPE]...
                [--rel NAME=NSRC,NDST,EDGES] [--repeat K] [--ref EXPR] [--tol T]
                [--results N] [--target cpu|cuda-emulate] [--impl auto|generated|blas]

SHAPE is `4x8` (or `-` for a scalar). Integer inputs take values in [LO, HI).
A relation NAME becomes inputs NAME.row_ptr/NAME.col_idx (a random CSR graph
with some rows empty) and, for the reference, `NAME` = list of (dst, [srcs]).
EXPR is a Python expression over numpy (`np`), the inputs by name, the
weights as `w["path"]`, `erf`, `rel_*` helpers; it gives the result, or a
tuple of results (an entry with several results: one per result, each
written by `linnet run --output`; N defaults to the tuple's length).
`--target cuda-emulate` builds for CUDA and runs its kernels on the CPU.
Floats agree when |got - want| <= tol * (1 + |want|).
Prints one line per result and exits 1 on a disagreement.
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys

import numpy as np

DT = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32,
      "i8": np.int8, "u8": np.uint8, "bool": np.bool_}
ST = {np.float32: "F32", np.float64: "F64", np.int64: "I64", np.int32: "I32",
      np.int8: "I8", np.uint8: "U8", np.bool_: "BOOL"}


def save_safetensors(tensors, path):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        # np.ascontiguousarray would make a 0-d array 1-d; a 0-d weight is shape [].
        a = np.asarray(tensors[name]).copy(order="C")
        raw = a.tobytes()
        header[name] = {"dtype": ST[a.dtype.type], "shape": list(a.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def shape_of(s):
    return () if s == "-" else tuple(int(d) for d in s.split("x"))


def random_array(rng, spec):
    parts = spec.split(":")
    dt, shape = DT[parts[0]], shape_of(parts[1])
    if np.issubdtype(dt, np.floating):
        return rng.standard_normal(shape).astype(dt)
    if dt is np.bool_:
        return rng.integers(0, 2, shape).astype(dt)
    lo, hi = (int(v) for v in parts[2].split("..")) if len(parts) > 2 else (-8, 8)
    return rng.integers(lo, hi, shape).astype(dt)


def random_csr(rng, nsrc, ndst, edges):
    dst = np.sort(rng.integers(0, ndst, edges))
    if ndst > 1:  # keep the last row empty: empty rows are part of the contract
        dst = np.minimum(dst, ndst - 2)
    src = rng.integers(0, nsrc, edges).astype(np.int64)
    row_ptr = np.zeros(ndst + 1, np.int64)
    np.add.at(row_ptr, dst + 1, 1)
    return np.cumsum(row_ptr).astype(np.int64), src


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("linnet")
    ap.add_argument("model")
    ap.add_argument("work")
    ap.add_argument("-D", action="append", default=[])
    ap.add_argument("--entry", required=True)
    ap.add_argument("--in", dest="inputs", action="append", default=[])
    ap.add_argument("--weight", action="append", default=[])
    ap.add_argument("--rel", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--ref")
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--results", type=int)
    ap.add_argument("--target", default="cpu", choices=["cpu", "cuda-emulate"])
    ap.add_argument("--impl", help="linnet build --impl (auto, generated, blas)")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    os.makedirs(a.work, exist_ok=True)
    defs = [x for d in a.D for x in ("-D", d)]

    env = {"np": np, "erf": np.vectorize(math.erf, otypes=[np.float64])}
    args = []
    for spec in a.inputs:
        name, rest = spec.split("=", 1)
        arr = random_array(rng, rest)
        env[name] = arr
        path = os.path.join(a.work, f"in-{name}.npy")
        np.save(path, arr)
        args += ["--input", f"{name}={path}"]
    for spec in a.rel:
        name, rest = spec.split("=", 1)
        nsrc, ndst, edges = (int(v) for v in rest.split(","))
        rp, ci = random_csr(rng, nsrc, ndst, edges)
        env[name] = [(d, ci[rp[d]:rp[d + 1]]) for d in range(ndst)]
        env[name + "_rp"], env[name + "_ci"] = rp, ci
        p1, p2 = (os.path.join(a.work, f"rel-{name}-{k}.npy") for k in ("rp", "ci"))
        np.save(p1, rp)
        np.save(p2, ci)
        args += ["--relation", f"{name}={p1},{p2}"]
    weights = {}
    for spec in a.weight:
        name, rest = spec.split("=", 1)
        weights[name] = random_array(rng, rest)
    env["w"] = weights
    wpath = os.path.join(a.work, "w.safetensors")
    save_safetensors(weights, wpath)

    want = eval(a.ref, env) if a.ref else None
    if want is not None and not isinstance(want, tuple):
        want = (want,)
    nres = a.results or (len(want) if want is not None else 1)

    art = os.path.join(a.work, "artifact")
    target = ["--target", "cuda", "--emulate"] if a.target == "cuda-emulate" else ["--target", "cpu"]
    impl = ["--impl", a.impl] if a.impl else []
    build = subprocess.run([a.linnet, "build", a.model, *target, *impl, *defs, "-o", art],
                           capture_output=True, text=True)
    if build.returncode != 0:
        sys.stdout.write(build.stdout + build.stderr)
        print(f"agree: {a.entry}: build failed (exit {build.returncode})")
        return 1

    def run(tag, extra, target):
        outs = [os.path.join(a.work, f"{tag}-out{i}.npy") for i in range(nres)]
        r = subprocess.run([a.linnet, "run", target, *extra, "--weights", wpath,
                            "--entry", a.entry, *args, "--repeat", str(a.repeat),
                            *[x for o in outs for x in ("--output", o)]],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.stdout.write(r.stdout + r.stderr)
            print(f"agree: {a.entry}: {tag} run failed (exit {r.returncode})")
            return None
        return [np.load(o) for o in outs]

    got = run("compiled", [], art)
    if got is None:
        return 1
    status = 0
    oracles = []
    if want is not None:
        oracles.append(("numpy", want))
    helptext = subprocess.run([a.linnet, "run", "--help"], capture_output=True, text=True).stdout
    if "--interpret" in helptext:
        interp = run("interpreted", ["--interpret", *defs], a.model)
        if interp is None:
            return 1
        oracles.append(("interpreter", tuple(interp)))
    for oname, wants in oracles:
        if len(wants) != len(got):
            print(f"agree: {a.entry}: {len(got)} results, {oname} gives {len(wants)}")
            status = 1
        for i, (g, wnt) in enumerate(zip(got, wants)):
            wnt = np.asarray(wnt)
            if g.shape != wnt.shape:
                print(f"agree: {a.entry}[{i}] vs {oname}: shape {g.shape}, expected {wnt.shape}")
                status = 1
                continue
            if np.issubdtype(g.dtype, np.floating):
                g64, w64 = g.astype(np.float64), wnt.astype(np.float64)
                same = (np.isnan(g64) & np.isnan(w64)) | (g64 == w64)  # NaN and inf agree
                err = np.where(same, 0.0, np.abs(g64 - w64))
                bad = ~same & ~(err <= a.tol * (1 + np.abs(w64)))
                ok = not bad.any()
                print(f"agree: {a.entry}[{i}] vs {oname}: {'ok' if ok else 'MISMATCH'} "
                      f"shape {g.shape} max abs err {float(np.nanmax(err)) if err.size else 0:.2e}")
            else:
                ok = np.array_equal(g, wnt.astype(g.dtype))
                print(f"agree: {a.entry}[{i}] vs {oname}: {'ok' if ok else 'MISMATCH'} "
                      f"shape {g.shape} exact")
            if not ok:
                print("got:", g.ravel()[:16], "\nwant:", wnt.ravel()[:16])
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())

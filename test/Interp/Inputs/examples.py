#!/usr/bin/env python3
"""The interpreter against compiled code on the examples: the same random
weights (linnet init-weights) and inputs through `linnet run` and
`linnet run --interpret`, results compared file to file (f32, rtol 1e-4).

  examples.py LINNET EXAMPLES_DIR TMPDIR [BUILD FLAGS...]

BUILD FLAGS go to the compiled side's `run`/`generate` of each .ln model
(`--target cuda --emulate`: the CUDA target's kernels, run on the CPU).
"""
import os
import sys

import numpy as np

from interp_util import compare, run

linnet, ex, tmp = sys.argv[1:4]
flags = sys.argv[4:]
rs = np.random.RandomState(0)


def both(model, defines, weights, entry, inputs, relations=(), tag=""):
    """Runs an entry compiled and interpreted; returns both results."""
    args = [os.path.join(ex, model)] + defines + ["--weights", weights, "--entry", entry]
    for name, arr in inputs.items():
        path = os.path.join(tmp, "%s-%s%s.npy" % (entry, name, tag))
        np.save(path, arr)
        args += ["--input", "%s=%s" % (name, path)]
    for name, (rp, ci) in relations:
        prp, pci = os.path.join(tmp, name + "-rp.npy"), os.path.join(tmp, name + "-ci.npy")
        np.save(prp, rp)
        np.save(pci, ci)
        args += ["--relation", "%s=%s,%s" % (name, prp, pci)]
    oc, oi = os.path.join(tmp, entry + tag + "-c.npy"), os.path.join(tmp, entry + tag + "-i.npy")
    run(linnet, ["run"] + args + flags + ["--output", oc])
    run(linnet, ["run"] + args + ["--interpret", "--output", oi])
    return np.load(oi), np.load(oc)


# mlp, with and without the optional biases
D = ["-D", "In=5", "-D", "Hidden=16", "-D", "Out=3"]
for tag, extra in (("", ["--with-optional"]), ("-nobias", [])):
    w = os.path.join(tmp, "mlp%s.safetensors" % tag)
    run(linnet, ["init-weights", os.path.join(ex, "mlp.ln")] + D + extra + ["-o", w])
    got, want = both("mlp.ln", D, w, "forward", {"x": rs.randn(7, 5).astype(np.float32)}, tag=tag)
    compare("mlp forward" + tag, got, want)

# gcn on a random graph (some nodes without incoming edges)
D = ["-D", "In=4", "-D", "Hidden=8", "-D", "Out=3"]
w = os.path.join(tmp, "gcn.safetensors")
run(linnet, ["init-weights", os.path.join(ex, "gcn.ln")] + D + ["--with-optional", "-o", w])
N = 40
deg = rs.randint(0, 5, N)
rp = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
ci = rs.randint(0, N, rp[-1]).astype(np.int64)
got, want = both("gcn.ln", D, w, "forward", {"x": rs.randn(N, 4).astype(np.float32),
                                             "weight": rs.rand(rp[-1]).astype(np.float32)},
                 relations=[("g", (rp, ci))])
compare("gcn forward (%d nodes, %d edges)" % (N, rp[-1]), got, want)
got, want = both("gcn.ln", D, w, "weighted_aggregation",
                 {"x": np.array([2, 3], np.float32), "weight": np.array([4, 5, 2], np.float32)},
                 relations=[("g", (np.array([0, 2, 3, 3], np.int64), np.array([0, 1, 1], np.int64)))])
compare("gcn walkthrough %s" % got.tolist(), got, want)

# llama, small: prefill logits, decode at position 0 on a fresh cache, and
# greedy tokens through prefill then decode with the KV cache as state
D = ["-D", "Vocab=64", "-D", "Hidden=32", "-D", "Inter=48", "-D", "Layers=2", "-D", "Heads=4",
     "-D", "KvHeads=2", "-D", "MaxSeq=40"]
w = os.path.join(tmp, "llama.safetensors")
run(linnet, ["init-weights", os.path.join(ex, "llama.ln")] + D + ["-o", w])
prompt = rs.randint(0, 64, 7).astype(np.int64)
got, want = both("llama.ln", D, w, "prefill", {"tokens": prompt})
compare("llama prefill", got, want)
got, want = both("llama.ln", D, w, "decode", {"token": prompt[:1], "pos": np.array(0, np.int64)})
compare("llama decode", got, want)
gen = ["generate", os.path.join(ex, "llama.ln")] + D + ["--weights", w, "--prompt",
                                                         ",".join(map(str, prompt)), "--max-new-tokens", "12"]
tc = run(linnet, gen + flags).stdout.strip()
ti = run(linnet, gen + ["--interpret"]).stdout.strip()
if tc != ti:
    sys.exit("llama generate: compiled %s, interpreted %s" % (tc, ti))
print("llama generate: 12 greedy tokens agree")

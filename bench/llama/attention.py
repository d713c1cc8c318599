"""Decode attention alone (bench/llama/attention.ln): the median time of one
call at positions 8 and POS, with the caches cold (a 256 MB read-only array
summed between calls, as the weights stream between two layers' attention)
and hot (the same call repeated), and the cold call's read rate of the KV
cache bytes it attends to.

usage: PYTHONPATH=build/python OMP_NUM_THREADS=2 \\
       /usr/bin/python3 bench/llama/attention.py [BUILD_DIR] [POS=1500] [KV=f32]
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
pos = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
kv = sys.argv[3] if len(sys.argv) > 3 else "f32"
sys.path.insert(0, os.path.join(build, "python"))
import linnet  # noqa: E402

work = tempfile.mkdtemp()
art = os.path.join(work, "attention")
subprocess.run([os.path.join(build, "bin", "linnet"), "build", os.path.join(root, "bench/llama/attention.ln"),
                "-D", "KV=" + kv, "--target", "cpu-native", "-o", art], check=True, stdout=subprocess.DEVNULL)
m = linnet.Model(art)
m.call("fill", [np.array(0.01, np.float32)])
q = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
big = np.ones(64 << 20, np.float32)


def timed(p, cold, n):
    ts = []
    for _ in range(n):
        if cold:
            big.sum()
        t = time.perf_counter()
        m.call("attend", [q, np.array(p, np.int64)])
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


for p in (8, pos):
    timed(p, False, 10)
    cold, hot = timed(p, True, 40), timed(p, False, 100)
    cache = 8 * 4 * (p + 1) * 64 * (2 if kv in ("f16", "bf16") else 4) * 2
    print(f"pos {p:5d}: cold {cold * 1e3:.3f} ms ({cache / cold / 1e9:.1f} GB/s of {cache / 1e6:.1f} MB of cache), "
          f"hot {hot * 1e3:.3f} ms")

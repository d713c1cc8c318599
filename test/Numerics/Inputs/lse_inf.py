"""lse_inf.py LINNET MODEL OUT: std.math.logsumexp over rows holding +inf
and -inf, compiled (cpu, cuda-emulate) and interpreted, against
torch.logsumexp: a +inf gives +inf, a row of -inf gives -inf."""
import os
import subprocess
import sys

import numpy as np
import torch

exe, model, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
inf = np.inf
x = np.array([[inf, 1.0, 2.0], [-inf, -inf, -inf], [-inf, 0.5, inf], [3.0, -inf, 1.0], [0.0, 0.0, 0.0]])
xf = os.path.join(out, "x.npy")
np.save(xf, x)
want = torch.logsumexp(torch.from_numpy(x), 1).numpy()
args = ["--entry", "lse", "--input", "x=" + xf]
runs = {"interpreter": [exe, "run", model, "-D", "N=3", "--interpret"]}
for target, flags in [("cpu", ["--target", "cpu"]), ("cuda-emulate", ["--target", "cuda", "--emulate"])]:
    art = os.path.join(out, target)
    subprocess.run([exe, "build", model, "-D", "N=3", "-o", art] + flags, check=True)
    runs[target] = [exe, "run", art]
for name, cmd in runs.items():
    got_f = os.path.join(out, name + ".npy")
    subprocess.run(cmd + args + ["--output", got_f], check=True)
    got = np.load(got_f)
    ok = np.allclose(got, want, equal_nan=False) and (np.isinf(got) == np.isinf(want)).all()
    print("%s: %s %s" % (name, "agree" if ok else "DIFFER", got.tolist()))

"""examples/mlp.ln against torch.nn (Linear -> ReLU -> Linear) on the same
weights: builds the artifact with linnet, runs it with `linnet run`, and
checks the max relative error.

usage: mlp_agree.py LINNET EXAMPLES_DIR WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "ref"))
import safetensors_io  # noqa: E402

linnet, examples, work = sys.argv[1:4]
In, Hidden, Out, B = 24, 40, 10, 7
torch.manual_seed(0)
fc1, fc2 = torch.nn.Linear(In, Hidden), torch.nn.Linear(Hidden, Out)
weights = {"fc1.weight": fc1.weight, "fc1.bias": fc1.bias,
           "fc2.weight": fc2.weight, "fc2.bias": fc2.bias}
safetensors_io.save({k: v.detach().contiguous() for k, v in weights.items()},
                    os.path.join(work, "w.safetensors"))
x = torch.randn(B, In)
np.save(os.path.join(work, "x.npy"), x.numpy())

def run(*args):
    subprocess.run([linnet, *args], check=True)

art = os.path.join(work, "mlp")
run("build", os.path.join(examples, "mlp.ln"), "-D", f"In={In}", "-D", f"Hidden={Hidden}",
    "-D", f"Out={Out}", "--target", "cpu", "--weights", os.path.join(work, "w.safetensors"),
    "-o", art)
run("run", art, "--weights", os.path.join(work, "w.safetensors"), "--entry", "forward",
    "--input", "x=" + os.path.join(work, "x.npy"), "--output", os.path.join(work, "y.npy"))
got = torch.from_numpy(np.load(os.path.join(work, "y.npy")))
with torch.no_grad():
    want = fc2(torch.relu(fc1(x)))
rel = ((got - want).abs().max() / want.abs().max()).item()
print(f"mlp: shape {tuple(got.shape)}, max relative error {rel:.3g}")
assert got.shape == want.shape, (got.shape, want.shape)
assert rel <= 1e-5, rel

# Without biases in the weights the build drops them (optional members).
del weights["fc1.bias"], weights["fc2.bias"]
safetensors_io.save({k: v.detach().contiguous() for k, v in weights.items()},
                    os.path.join(work, "w2.safetensors"))
art2 = os.path.join(work, "mlp-nobias")
run("build", os.path.join(examples, "mlp.ln"), "-D", f"In={In}", "-D", f"Hidden={Hidden}",
    "-D", f"Out={Out}", "--target", "cpu", "--weights", os.path.join(work, "w2.safetensors"),
    "-o", art2)
run("run", art2, "--weights", os.path.join(work, "w2.safetensors"), "--entry", "forward",
    "--input", "x=" + os.path.join(work, "x.npy"), "--output", os.path.join(work, "y2.npy"))
got = torch.from_numpy(np.load(os.path.join(work, "y2.npy")))
with torch.no_grad():
    want = torch.relu(x @ fc1.weight.T) @ fc2.weight.T
rel = ((got - want).abs().max() / want.abs().max()).item()
print(f"mlp without biases: max relative error {rel:.3g}")
assert rel <= 1e-5, rel

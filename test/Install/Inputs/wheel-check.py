"""wheel-check.py SITE MODEL WEIGHTS X OUT: with the wheel installed into
SITE (and nothing else on the path), compiles MODEL through the package,
runs `forward` on X and saves the result to OUT; prints whether the
compiler it drove is the one the wheel carries."""
import sys

site, model, weights, x, out = sys.argv[1:6]
sys.path.insert(0, site)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import linnet  # noqa: E402
from linnet import _compiler  # noqa: E402

print("carried compiler:", _compiler.linnet_bin().startswith(site + "/linnet/bin/"))
m = linnet.compile(model, dims={"In": 3, "Hidden": 5, "Out": 2}, weights=weights)
np.save(out, m(torch.from_numpy(np.load(x))).detach().numpy())

"""Inputs and expected results of numerics-policy.test: bf16 a * b + c
rounded per op (as-written) or once (f32-compute), computed with numpy's
float32 and an explicit round-to-nearest-even to bf16."""
import sys
import numpy as np


def bf16(x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


def main():
    cmd, d = sys.argv[1], sys.argv[2]
    if cmd == "inputs":
        rng = np.random.default_rng(7)
        for name in "abc":
            np.save(f"{d}/{name}.npy", bf16(rng.standard_normal(256).astype(np.float32)))
        return
    a, b, c = (np.load(f"{d}/{n}.npy") for n in "abc")
    want = {"as-written": bf16(bf16(a * b) + c), "f32-compute": bf16(a * b + c)}
    got = np.load(sys.argv[4])
    policy = sys.argv[3]
    other = "f32-compute" if policy == "as-written" else "as-written"
    print(policy, "exact:", bool((got == want[policy]).all()),
          "differs from", other + ":", int((got != want[other]).sum()) > 0)


main()

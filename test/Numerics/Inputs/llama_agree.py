"""examples/llama.ln against the PyTorch reference (ref/llama.py, Hugging Face
names and math) on the same random weights: prefill logits within 1e-4
relative, and greedy decoding through the KV cache gives the same tokens.

usage: llama_agree.py LINNET EXAMPLES_DIR WORKDIR CONFIG [NEW_TOKENS]
"""
import os
import subprocess
import sys

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "ref"))
import llama  # noqa: E402
import safetensors_io  # noqa: E402

linnet, examples, work, config = sys.argv[1:5]
new_tokens = int(sys.argv[5]) if len(sys.argv) > 5 else 32
cfg = llama.parse_config(config)
weights = os.path.join(work, "w.safetensors")
safetensors_io.save(llama.init_weights(cfg, 3), weights)

art = os.path.join(work, "llama")
defines = [a for k, v in cfg.items() for a in ("-D", f"{k}={v}")]
subprocess.run([linnet, "build", os.path.join(examples, "llama.ln"), *defines, "--target", "cpu",
                "-o", art], check=True)

# Prefill logits.
prompt = [1, 2, 3, 5, 8, 13, 21]
np.save(os.path.join(work, "tokens.npy"), np.array(prompt, dtype=np.int64))
subprocess.run([linnet, "run", art, "--weights", weights, "--entry", "prefill", "--input",
                "tokens=" + os.path.join(work, "tokens.npy"), "--output",
                os.path.join(work, "logits.npy")], check=True)
got = torch.from_numpy(np.load(os.path.join(work, "logits.npy")))
model = llama.Llama(cfg, safetensors_io.load(weights))
with torch.no_grad():
    want = model.forward(torch.tensor(prompt), 0)
rel = ((got - want).abs().max() / want.abs().max()).item()
print(f"prefill: logits {tuple(got.shape)}, max relative error {rel:.3g}")
assert got.shape == want.shape and rel <= 1e-4, rel

# The last position's logits only (what generate runs).
subprocess.run([linnet, "run", art, "--weights", weights, "--entry", "prefill_last", "--input",
                "tokens=" + os.path.join(work, "tokens.npy"), "--output",
                os.path.join(work, "last.npy")], check=True)
last = torch.from_numpy(np.load(os.path.join(work, "last.npy")))
rel = ((last - want[-1:]).abs().max() / want[-1:].abs().max()).item()
print(f"prefill_last: logits {tuple(last.shape)}, max relative error {rel:.3g}")
assert last.shape == want[-1:].shape and rel <= 1e-4, rel

# Greedy decoding: linnet generate vs the reference's generate.
p = ",".join(map(str, prompt[:3]))
ours = subprocess.run([linnet, "generate", art, "--weights", weights, "--prompt", p,
                       "--max-new-tokens", str(new_tokens)], check=True, capture_output=True,
                      text=True).stdout.split()[-1]
ref = subprocess.run([sys.executable, os.path.join(here, "..", "ref", "llama.py"), "generate",
                      "--config", config, "--weights", weights, "--prompt", p,
                      "--max-new-tokens", str(new_tokens)], check=True, capture_output=True,
                     text=True).stdout.split()[-1]
print("linnet:   ", ours)
print("reference:", ref)
assert ours == ref, "greedy tokens differ"
print(f"decode: {new_tokens} greedy tokens agree")

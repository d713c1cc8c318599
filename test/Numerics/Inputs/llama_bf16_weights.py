"""examples/llama.ln with bf16 weights and f32 activations (-D W=bf16: std.nn's
Linear and Embedding read bf16 weights and widen them exactly), against the
PyTorch reference (ref/llama.py) on the same weight values in f32: prefill
logits within 1e-4 relative, and the same greedy tokens. This is what
llama.cpp computes with a BF16 GGUF: bf16 storage, f32 arithmetic.

usage: llama_bf16_weights.py LINNET EXAMPLES_DIR WORKDIR CONFIG [NEW_TOKENS]
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
new_tokens = int(sys.argv[5]) if len(sys.argv) > 5 else 24
cfg = llama.parse_config(config)
w32 = llama.init_weights(cfg, 5)
# Matrices in bf16 (nearest even), norm vectors f32 (they stay T).
w16 = {k: (v.to(torch.bfloat16) if v.dim() == 2 else v) for k, v in w32.items()}
ref_w = {k: v.to(torch.float32) for k, v in w16.items()}
weights = os.path.join(work, "w-bf16.safetensors")
safetensors_io.save(w16, weights)
ref_weights = os.path.join(work, "w-ref.safetensors")
safetensors_io.save(ref_w, ref_weights)

art = os.path.join(work, "llama-w16")
defines = [a for k, v in cfg.items() for a in ("-D", f"{k}={v}")] + ["-D", "W=bf16"]
subprocess.run([linnet, "build", os.path.join(examples, "llama.ln"), *defines, "--target", "cpu",
                "-o", art], check=True)
prompt = [1, 2, 3, 5, 8, 13, 21]
np.save(os.path.join(work, "tokens.npy"), np.array(prompt, dtype=np.int64))
subprocess.run([linnet, "run", art, "--weights", weights, "--entry", "prefill", "--input",
                "tokens=" + os.path.join(work, "tokens.npy"), "--output",
                os.path.join(work, "logits.npy")], check=True)
got = torch.from_numpy(np.load(os.path.join(work, "logits.npy")))
model = llama.Llama(cfg, ref_w)
with torch.no_grad():
    want = model.forward(torch.tensor(prompt), 0)
rel = ((got - want).abs().max() / want.abs().max()).item()
print(f"bf16 weights, prefill: logits {tuple(got.shape)} {got.dtype}, max relative error {rel:.3g}")
assert got.shape == want.shape and rel <= 1e-4, rel

p = ",".join(map(str, prompt[:3]))
ours = subprocess.run([linnet, "generate", art, "--weights", weights, "--prompt", p,
                       "--max-new-tokens", str(new_tokens)], check=True, capture_output=True,
                      text=True).stdout.split()[-1]
ref = subprocess.run([sys.executable, os.path.join(here, "..", "ref", "llama.py"), "generate",
                      "--config", config, "--weights", ref_weights, "--prompt", p,
                      "--max-new-tokens", str(new_tokens)], check=True, capture_output=True,
                     text=True).stdout.split()[-1]
print(f"bf16 weights, generate {new_tokens} tokens: {'same as PyTorch' if ours == ref else 'DIFFER: ' + ours + ' vs ' + ref}")

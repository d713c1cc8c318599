#!/usr/bin/env python3
"""A PyTorch reference of Hugging Face's LlamaForCausalLM (inference only).

Same parameter names as the Hugging Face checkpoint, same math: RMSNorm
(eps 1e-5), rotary embedding by rotate_half over the two halves of the head
dim (theta 10000), grouped-query attention with a KV cache, SwiGLU MLP.

  llama.py init   --config K=V,... --seed S -o W.safetensors
  llama.py prefill --config ... --weights W --prompt 1,2,3 [-o logits.npy]
  llama.py generate --config ... --weights W --prompt 1,2,3 --max-new-tokens N
"""
import argparse
import math
import sys
import time

import torch

sys.path.insert(0, __import__("os").path.dirname(__file__))
import safetensors_io  # noqa: E402

DEFAULTS = dict(Vocab=32000, Hidden=512, Inter=1376, Layers=8, Heads=8, KvHeads=4, MaxSeq=256)
RMS_EPS = 1e-5
ROPE_THETA = 10000.0


def parse_config(text):
    cfg = dict(DEFAULTS)
    for kv in filter(None, (text or "").split(",")):
        k, v = kv.split("=")
        cfg[k] = int(v)
    return cfg


def init_weights(cfg, seed):
    """Random weights in Hugging Face naming, torch.nn.Linear-style ranges."""
    g = torch.Generator().manual_seed(seed)
    H, I, V = cfg["Hidden"], cfg["Inter"], cfg["Vocab"]
    D = H // cfg["Heads"]
    KV = cfg["KvHeads"] * D

    def lin(out_f, in_f):
        b = 1 / math.sqrt(in_f)
        return (torch.rand(out_f, in_f, generator=g) * 2 - 1) * b

    def norm():
        return 1 + (torch.rand(H, generator=g) * 2 - 1) * 0.1

    w = {"model.embed_tokens.weight": torch.randn(V, H, generator=g),
         "model.norm.weight": norm(), "lm_head.weight": lin(V, H)}
    for l in range(cfg["Layers"]):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = norm()
        w[p + "post_attention_layernorm.weight"] = norm()
        w[p + "self_attn.q_proj.weight"] = lin(H, H)
        w[p + "self_attn.k_proj.weight"] = lin(KV, H)
        w[p + "self_attn.v_proj.weight"] = lin(KV, H)
        w[p + "self_attn.o_proj.weight"] = lin(H, H)
        w[p + "mlp.gate_proj.weight"] = lin(I, H)
        w[p + "mlp.up_proj.weight"] = lin(I, H)
        w[p + "mlp.down_proj.weight"] = lin(H, I)
    return w


def rms_norm(x, w):
    var = x.pow(2).mean(-1, keepdim=True)
    return x * torch.rsqrt(var + RMS_EPS) * w


def rotate_half(x):
    d = x.shape[-1] // 2
    return torch.cat((-x[..., d:], x[..., :d]), dim=-1)


class Llama:
    def __init__(self, cfg, weights):
        self.cfg, self.w = cfg, weights
        H, heads = cfg["Hidden"], cfg["Heads"]
        self.D = H // heads
        inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, self.D, 2, dtype=torch.float32) / self.D))
        pos = torch.arange(cfg["MaxSeq"], dtype=torch.float32)
        freqs = torch.outer(pos, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos, self.sin = emb.cos(), emb.sin()
        self.reset()

    def reset(self):
        c = self.cfg
        shape = (c["Layers"], c["KvHeads"], c["MaxSeq"], self.D)
        self.k_cache, self.v_cache = torch.zeros(shape), torch.zeros(shape)

    @torch.no_grad()
    def forward(self, tokens, start):
        c, w = self.cfg, self.w
        S = tokens.shape[0]
        heads, kvh, D = c["Heads"], c["KvHeads"], self.D
        x = w["model.embed_tokens.weight"][tokens]
        cos, sin = self.cos[start:start + S, None, :], self.sin[start:start + S, None, :]
        for l in range(c["Layers"]):
            p = f"model.layers.{l}."
            h = rms_norm(x, w[p + "input_layernorm.weight"])
            q = (h @ w[p + "self_attn.q_proj.weight"].T).view(S, heads, D)
            k = (h @ w[p + "self_attn.k_proj.weight"].T).view(S, kvh, D)
            v = (h @ w[p + "self_attn.v_proj.weight"].T).view(S, kvh, D)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            self.k_cache[l, :, start:start + S] = k.transpose(0, 1)
            self.v_cache[l, :, start:start + S] = v.transpose(0, 1)
            T = start + S
            keys = self.k_cache[l, :, :T].repeat_interleave(heads // kvh, dim=0)
            vals = self.v_cache[l, :, :T].repeat_interleave(heads // kvh, dim=0)
            scores = torch.einsum("shd,htd->hst", q, keys) / math.sqrt(D)
            mask = torch.arange(T)[None, :] > (start + torch.arange(S))[:, None]
            scores = scores.masked_fill(mask[None], float("-inf"))
            ctx = torch.einsum("hst,htd->shd", scores.softmax(-1), vals).reshape(S, heads * D)
            x = x + ctx @ w[p + "self_attn.o_proj.weight"].T
            h = rms_norm(x, w[p + "post_attention_layernorm.weight"])
            g = h @ w[p + "mlp.gate_proj.weight"].T
            u = h @ w[p + "mlp.up_proj.weight"].T
            x = x + (torch.nn.functional.silu(g) * u) @ w[p + "mlp.down_proj.weight"].T
        x = rms_norm(x, w["model.norm.weight"])
        return x @ w["lm_head.weight"].T


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["init", "prefill", "generate"])
    ap.add_argument("--config", default="")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--weights")
    ap.add_argument("--prompt", default="1,2,3")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    cfg = parse_config(a.config)
    if a.mode == "init":
        safetensors_io.save(init_weights(cfg, a.seed), a.output)
        return
    model = Llama(cfg, safetensors_io.load(a.weights))
    prompt = torch.tensor([int(t) for t in a.prompt.split(",")], dtype=torch.int64)
    logits = model.forward(prompt, 0)
    if a.mode == "prefill":
        if a.output:
            import numpy as np
            np.save(a.output, logits.numpy())
        else:
            print(logits)
        return
    tokens, pos = [int(logits[-1].argmax())], prompt.shape[0]
    t0 = time.perf_counter()
    for _ in range(a.max_new_tokens - 1):
        logits = model.forward(torch.tensor([tokens[-1]]), pos)
        pos += 1
        tokens.append(int(logits[-1].argmax()))
    dt = time.perf_counter() - t0
    print(",".join(map(str, tokens)))
    print(f"{(a.max_new_tokens - 1) / dt:.1f} tokens/s", file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Llama decode at bf16: linnet against llama.cpp on the same bf16 weights.

The shared f32 comparison (../shared/peers/llamacpp/compare.py) writes the
default Llama's random weights and a GGUF of them, all F32. This extends it
to bf16: the same f32 weights rounded to bf16 (nearest even) become a bf16
safetensors file for linnet (--mode weights, the default: examples/llama.ln
-D W=bf16, bf16 matrices and f32 activations, which is what ggml computes
for a BF16 GGUF; --mode all: -D T=bf16 --numerics f32-compute, every tensor
bf16) and a GGUF with BF16 matrices for llama.cpp
(llamacpp_decode, the shared C API driver, persistent threadpool, F32 KV
cache, flash attention off). Rounds alternate the two; each prints its
decode tokens/s; the greedy tokens of both sides are compared.

usage: /usr/bin/python3 bench/llamacpp/bf16.py [--rounds 5] [--threads 2]
       [--new-tokens 128] [--peers ../shared/peers/llamacpp]
       [--work /tmp/linnet-peers/work] [--linnet build/bin/linnet]
Run compare.py once first (it installs nothing: it builds the driver and
the f32 weights this reuses). The machine is shared: compare medians of
rounds run together, never figures of different runs.
"""
import argparse
import json
import os
import re
import statistics
import struct
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GGML_TYPE_BF16 = 30


def run(cmd, env=None, timeout=900):
    p = subprocess.run(["timeout", str(timeout)] + [str(c) for c in cmd], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"command failed ({p.returncode}): {' '.join(map(str, cmd))}\n{p.stderr[-3000:]}")
    return p


def bf16_bits(a):
    u = np.ascontiguousarray(a, dtype="<f4").view(np.uint32).astype(np.uint64)
    return (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF).astype("<u2")


def write_bf16_safetensors(hf, path, vectors_too):
    header, blobs, off = {}, [], 0
    for name in sorted(hf):
        half = vectors_too or hf[name].ndim > 1
        b = bf16_bits(hf[name]).tobytes() if half else np.ascontiguousarray(hf[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "BF16" if half else "F32", "shape": list(hf[name].shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def write_bf16_gguf(wg, hf, path):
    """write_gguf.main's file, its tensors BF16 (general.file_type 32: MOSTLY_BF16)."""
    toks, scores, types = wg.vocab()
    kvs = [
        wg.kv("general.architecture", wg.STR, "llama"),
        wg.kv("general.name", wg.STR, "linnet-examples-llama-random-bf16"),
        wg.kv("general.alignment", wg.U32, wg.ALIGN),
        wg.kv("general.file_type", wg.U32, 32),
        wg.kv("llama.vocab_size", wg.U32, wg.VOCAB),
        wg.kv("llama.context_length", wg.U32, wg.CTX),
        wg.kv("llama.embedding_length", wg.U32, wg.HIDDEN),
        wg.kv("llama.block_count", wg.U32, wg.LAYERS),
        wg.kv("llama.feed_forward_length", wg.U32, wg.INTER),
        wg.kv("llama.attention.head_count", wg.U32, wg.HEADS),
        wg.kv("llama.attention.head_count_kv", wg.U32, wg.KV_HEADS),
        wg.kv("llama.rope.dimension_count", wg.U32, wg.HIDDEN // wg.HEADS),
        wg.kv("llama.rope.freq_base", wg.F32, wg.THETA),
        wg.kv("llama.attention.layer_norm_rms_epsilon", wg.F32, wg.EPS),
        wg.kv("tokenizer.ggml.model", wg.STR, "llama"),
        wg.kv("tokenizer.ggml.tokens", wg.ARR, (wg.STR, toks)),
        wg.kv("tokenizer.ggml.scores", wg.ARR, (wg.F32, scores)),
        wg.kv("tokenizer.ggml.token_type", wg.ARR, (wg.I32, types)),
        wg.kv("tokenizer.ggml.bos_token_id", wg.U32, 1),
        wg.kv("tokenizer.ggml.eos_token_id", wg.U32, 2),
        wg.kv("tokenizer.ggml.unknown_token_id", wg.U32, 0),
        wg.kv("tokenizer.ggml.add_bos_token", wg.BOOL, False),
        wg.kv("tokenizer.ggml.add_eos_token", wg.BOOL, False),
    ]
    # Norm weights stay F32, as llama.cpp's converter keeps 1-D tensors.
    tensors = [(n, a if a.ndim == 1 else bf16_bits(a)) for n, a in
               ((n, np.ascontiguousarray(a, dtype="<f4")) for n, a in wg.gguf_tensors(hf))]
    infos, off = [], 0
    for name, a in tensors:
        off = (off + wg.ALIGN - 1) // wg.ALIGN * wg.ALIGN
        dims = list(reversed(a.shape))
        t = wg.GGML_TYPE_F32 if a.dtype == np.dtype("<f4") else GGML_TYPE_BF16
        infos.append(wg.s(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
                     + struct.pack("<IQ", t, off))
        off += a.nbytes
    with open(path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)))
        for x in kvs:
            f.write(x)
        for x in infos:
            f.write(x)
        f.write(b"\0" * (-f.tell() % wg.ALIGN))
        start = f.tell()
        for _, a in tensors:
            f.write(b"\0" * (-(f.tell() - start) % wg.ALIGN))
            f.write(a.tobytes())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "peers", "llamacpp"))
    ap.add_argument("--peer-dir", default=os.path.join("/tmp", "linnet-peers", "llamacpp"))
    ap.add_argument("--work", default=os.path.join("/tmp", "linnet-peers", "work"))
    ap.add_argument("--linnet", default=os.path.join(ROOT, "build", "bin", "linnet"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--prompt", default="1,450,4996,17354,1701,432,17204,975")
    ap.add_argument("--mode", choices=["weights", "all"], default="weights",
                    help="weights: bf16 matrices, f32 activations (-D W=bf16, llama.cpp's arithmetic); "
                         "all: everything bf16 (-D T=bf16 --numerics f32-compute)")
    a = ap.parse_args()
    sys.path.insert(0, a.peers)
    import write_gguf as wg  # the shared peer's format writer

    wts = os.path.join(a.work, "w-seed0.safetensors")
    drv = os.path.join(a.work, "llamacpp_decode")
    bins = os.path.join(a.peer_dir, "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64")
    if not (os.path.exists(wts) and os.path.exists(drv)):
        raise SystemExit(f"run {a.peers}/compare.py first: it writes {wts} and builds {drv}")
    hf = wg.read_safetensors(wts)
    st16 = os.path.join(a.work, f"w-seed0-bf16-{a.mode}.safetensors")
    gg16 = os.path.join(a.work, "w-seed0-bf16.gguf")
    if not os.path.exists(st16):
        write_bf16_safetensors(hf, st16, a.mode == "all")
    if not os.path.exists(gg16):
        write_bf16_gguf(wg, hf, gg16)
    art = os.path.join(a.work, f"linnet-llama-bf16-{a.mode}")
    flags = ["-D", "W=bf16"] if a.mode == "weights" else ["-D", "T=bf16", "--numerics", "f32-compute"]
    run([a.linnet, "build", os.path.join(ROOT, "examples", "llama.ln"), *flags, "--target", "cpu-native", "-o", art])
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))

    def linnet():
        p = run([a.linnet, "generate", art, "--weights", st16, "--prompt", a.prompt, "--max-new-tokens",
                 a.new_tokens], env)
        m = re.search(r"decode: (\d+) tokens in ([\d.]+) s", p.stderr)
        return int(m[1]) / float(m[2]), [int(x) for x in p.stdout.strip().split(",")]

    def llamacpp():
        out = os.path.join(a.work, "llamacpp-bf16.json")
        run([drv, gg16, "--backends", bins, "--prompt", a.prompt, "--max-new-tokens", a.new_tokens, "--threads",
             a.threads, "--kv", "f32", "--flash-attention", "off", "--json", out], env)
        j = json.load(open(out))
        return j["decode_tok_s"], j["tokens"]

    res = {"linnet": [], "llama.cpp": []}
    toks = {}
    for r in range(a.rounds):
        order = [("linnet", linnet), ("llama.cpp", llamacpp)]
        for name, fn in order[r % 2:] + order[:r % 2]:
            t, toks[name] = fn()
            res[name].append(t)
        print(f"round {r + 1}: linnet {res['linnet'][-1]:.1f}, llama.cpp {res['llama.cpp'][-1]:.1f} tokens/s; "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
    same = toks["linnet"] == toks["llama.cpp"]
    first = next((i for i, (x, y) in enumerate(zip(toks["linnet"], toks["llama.cpp"])) if x != y), None)
    ml, mc = statistics.median(res["linnet"]), statistics.median(res["llama.cpp"])
    print(f"bf16 decode, {a.threads} threads, {a.new_tokens} tokens: linnet median {ml:.1f} (best "
          f"{max(res['linnet']):.1f}), llama.cpp median {mc:.1f} (best {max(res['llama.cpp']):.1f}): "
          f"{ml / mc:.2f}x; tokens {'identical' if same else f'differ from step {first}'}")


if __name__ == "__main__":
    main()

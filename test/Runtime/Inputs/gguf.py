"""Writes GGUF files (v3) for the reader's tests, from the format itself
(no gguf-py): gguf.py write OUT.gguf [--from W.safetensors] [--meta K=V]...
[--names hf-to-gguf] [--permute-rope HEADS,KV_HEADS] [--type q8_0] [--align N]
[--damage WHAT].

Tensors come from a safetensors file (f32, f16 and bf16 kept as they are;
GGUF lists dimensions fastest first, so a [rows, cols] tensor is written
with ne = [cols, rows]). --meta values are ints, floats, true/false or
strings; `--meta NAME=@tokens:N` writes an array of N strings. --damage
writes a broken file: `magic`, `version`, `offset` (a tensor's offset past
the data), `overlap`, `misaligned`, `count` (a huge tensor count),
`truncate` (the file cut inside the header).
"""
import argparse
import json
import struct
import sys

import numpy as np

GGML = {"F32": 0, "F16": 1, "BF16": 30, "q8_0": 8, "q4_0": 2, "q4_K": 12}
U32, I32, F32T, BOOL, STRING, ARRAY, U64, I64 = 4, 5, 6, 7, 8, 9, 10, 11


def s(text):
    b = text.encode()
    return struct.pack("<Q", len(b)) + b


def meta_value(v):
    if v.startswith("@tokens:"):
        n = int(v.split(":")[1])
        return struct.pack("<I", ARRAY) + struct.pack("<IQ", STRING, n) + b"".join(s(f"t{i}") for i in range(n))
    if v in ("true", "false"):
        return struct.pack("<IB", BOOL, v == "true")
    try:
        return struct.pack("<Iq", I64, int(v)) if int(v) < 0 else struct.pack("<IQ", U64, int(v))
    except ValueError:
        pass
    try:
        return struct.pack("<If", F32T, float(v))
    except ValueError:
        return struct.pack("<I", STRING) + s(v)


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = []
    for name, t in sorted(header.items()):
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        out.append((name, t["dtype"], t["shape"], data[b:e]))
    return out


HF_TO_GGUF = [("model.embed_tokens.weight", "token_embd.weight"), ("model.norm.weight", "output_norm.weight"),
              ("lm_head.weight", "output.weight")]
LAYER = {"input_layernorm.weight": "attn_norm.weight", "self_attn.q_proj.weight": "attn_q.weight",
         "self_attn.k_proj.weight": "attn_k.weight", "self_attn.v_proj.weight": "attn_v.weight",
         "self_attn.o_proj.weight": "attn_output.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
         "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
         "mlp.down_proj.weight": "ffn_down.weight"}


def gguf_name(name):
    for a, b in HF_TO_GGUF:
        if name == a:
            return b
    parts = name.split(".")
    if parts[:2] == ["model", "layers"]:
        return f"blk.{parts[2]}." + LAYER[".".join(parts[3:])]
    return name


def quantize(x, kind):
    """ggml's quantize_row_q8_0_ref / quantize_row_q4_0_ref on blocks of 32;
    returns the blocks' bytes and their dequantized values (f16 d * q)."""
    if kind == "q8_0":
        amax = np.abs(x).max(axis=1)
        d = amax / 127.0
        inv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1), 0.0)
        q = np.round(x * inv[:, None])  # numpy rounds half to even; ggml's roundf away: ties are rare
        q = np.clip(q, -127, 127).astype(np.int8)
        dh = d.astype(np.float16)
        blocks = b"".join(dh[i].tobytes() + q[i].tobytes() for i in range(len(x)))
        return blocks, (dh.astype(np.float32)[:, None] * q.astype(np.float32))
    idx = np.abs(x).argmax(axis=1)
    mx = x[np.arange(len(x)), idx]
    d = mx / -8.0
    inv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1), 0.0)
    q = np.minimum(15, (x * inv[:, None] + 8.5).astype(np.int8)).astype(np.uint8)
    dh = d.astype(np.float16)
    packed = (q[:, :16] & 0x0F) | ((q[:, 16:] & 0x0F) << 4)
    blocks = b"".join(dh[i].tobytes() + packed[i].astype(np.uint8).tobytes() for i in range(len(x)))
    return blocks, dh.astype(np.float32)[:, None] * (q.astype(np.float32) - 8.0)


def write_safetensors(path, deq, tensors):
    header, blobs, off = {}, [], 0
    for n, d, sh, b in tensors:
        data = deq[n].astype(np.float32).tobytes() if deq.get(n) is not None else b
        dt = "F32" if deq.get(n) is not None else d
        header[n] = {"dtype": dt, "shape": sh, "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["write"])
    ap.add_argument("out")
    ap.add_argument("--from", dest="src")
    ap.add_argument("--meta", action="append", default=[])
    ap.add_argument("--names", choices=["keep", "hf-to-gguf"], default="keep")
    ap.add_argument("--type", help="write the first tensor with this ggml type id (a quantized one)")
    ap.add_argument("--align", type=int, default=32)
    ap.add_argument("--damage")
    ap.add_argument("--permute-rope", help="HEADS,KV_HEADS: permute attn_q/attn_k rows as llama.cpp's converter does")
    ap.add_argument("--quantize", choices=["q8_0", "q4_0"], help="every 2-D f32 tensor, as ggml's reference "
                    "quantizers do; --dequantized OUT.safetensors writes what they dequantize to")
    ap.add_argument("--dequantized")
    a = ap.parse_args()
    tensors = read_safetensors(a.src) if a.src else [("w", "F32", [2, 3], np.arange(6, dtype=np.float32).tobytes())]
    if a.names == "hf-to-gguf":
        tensors = [(gguf_name(n), d, sh, b) for n, d, sh, b in tensors]
    if a.permute_rope:
        heads, kv_heads = (int(x) for x in a.permute_rope.split(","))

        def permute(data, dt, shape, n_head):  # llama.cpp's LlamaModel.permute, on raw rows
            rows = np.frombuffer(data, np.uint8).reshape(shape[0], -1)
            w = rows.reshape(n_head, 2, shape[0] // n_head // 2, rows.shape[1]).swapaxes(1, 2)
            return np.ascontiguousarray(w.reshape(rows.shape)).tobytes()
        tensors = [(n, d, sh, permute(b, d, sh, heads) if n.endswith("attn_q.weight")
                    else permute(b, d, sh, kv_heads) if n.endswith("attn_k.weight") else b)
                   for n, d, sh, b in tensors]
    if a.quantize:
        deq = {}
        out = []
        for n, d, sh, b in tensors:
            if d == "F32" and len(sh) == 2 and sh[1] % 32 == 0:
                x = np.frombuffer(b, np.float32).reshape(-1, 32)
                b, y = quantize(x, a.quantize)
                deq[n] = y.reshape(sh)
                d = a.quantize
            out.append((n, d, sh, b))
        tensors = out
        if a.dequantized:
            write_safetensors(a.dequantized, {n: deq.get(n) for n, *_ in tensors}, tensors)
    metas = [m.split("=", 1) for m in a.meta]
    if a.align != 32:
        metas.append(("general.alignment", None))
    kv = b""
    for k, v in metas:
        kv += s(k) + (struct.pack("<II", U32, a.align) if v is None else meta_value(v))
    infos, blobs, off = b"", [], 0
    for i, (name, dt, shape, data) in enumerate(tensors):
        ggml = GGML[dt]
        if a.type and i == 0:
            ggml = GGML[a.type]
        ne = list(reversed(shape))
        o = off
        if a.damage == "offset" and i == 0:
            o = 1 << 40
        if a.damage == "overlap" and i == 1:
            o = 0
        if a.damage == "misaligned" and i == 0:
            o = 4
        infos += s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne)
        infos += struct.pack("<IQ", ggml, o)
        pad = (-len(data)) % a.align
        blobs.append(data + b"\0" * pad)
        off += len(data) + pad
    magic = b"GGUX" if a.damage == "magic" else b"GGUF"
    version = 7 if a.damage == "version" else 3
    count = (1 << 40) if a.damage == "count" else len(tensors)
    head = magic + struct.pack("<IQQ", version, count, len(metas)) + kv + infos
    head += b"\0" * ((-len(head)) % a.align)
    out = head + b"".join(blobs)
    if a.damage == "truncate":
        out = out[: len(head) // 2]
    with open(a.out, "wb") as f:
        f.write(out)


main()

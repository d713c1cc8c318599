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

GGML = {"F32": 0, "F16": 1, "BF16": 30, "q8_0": 8, "q4_0": 2, "q4_K": 12, "q5_K": 13, "q6_K": 14, "q2_K": 10}
BLOCK = {"q8_0": 32, "q4_0": 32, "q4_K": 256, "q5_K": 256, "q6_K": 256}
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


def pack_scales_k4(sc, m):
    """8 six-bit scales and mins per block into ggml's 12 bytes (get_scale_min_k4's inverse)."""
    out = np.zeros((len(sc), 12), np.int64)
    for j in range(4):
        out[:, j] = sc[:, j] & 63
        out[:, j + 4] = m[:, j] & 63
    for j in range(4, 8):
        out[:, j + 4] = (sc[:, j] & 0xF) | ((m[:, j] & 0xF) << 4)
        out[:, j - 4] |= (sc[:, j] >> 4) << 6
        out[:, j] |= (m[:, j] >> 4) << 6
    return out.astype(np.uint8)


def unpack_scales_k4(b):
    sc = np.zeros((len(b), 8), np.int64)
    m = np.zeros((len(b), 8), np.int64)
    for j in range(8):
        if j < 4:
            sc[:, j], m[:, j] = b[:, j] & 63, b[:, j + 4] & 63
        else:
            sc[:, j] = (b[:, j + 4] & 0xF) | ((b[:, j - 4] >> 6) << 4)
            m[:, j] = (b[:, j + 4] >> 4) | ((b[:, j] >> 6) << 4)
    return sc, m


def f16(v):
    return np.asarray(v, np.float32).astype(np.float16)


def quantize_k(x, kind):
    """A valid q4_K / q5_K / q6_K encoding of blocks of 256 (min/max per
    sub-block, not llama.cpp's search), and its dequantized values, computed
    from the format as ggml's dequantize_row_* does in f32."""
    f32 = np.float32
    n = len(x)
    if kind in ("q4_K", "q5_K"):
        top = 15 if kind == "q4_K" else 31
        sub = x.reshape(n, 8, 32)
        lo = np.minimum(sub.min(axis=2), 0)
        scale = (sub.max(axis=2) - lo) / top
        d, dmin = f16(scale.max(axis=1) / 63), f16((-lo).max(axis=1) / 63)
        dd, dm = d.astype(f32), dmin.astype(f32)
        sc = np.clip(np.round(scale / np.where(dd > 0, dd, 1)[:, None]), 0, 63).astype(np.int64)
        m = np.clip(np.round(-lo / np.where(dm > 0, dm, 1)[:, None]), 0, 63).astype(np.int64)
        step = (dd[:, None] * sc.astype(f32)).astype(f32)
        q = np.clip(np.round((sub + (dm[:, None] * m.astype(f32))[:, :, None]) / np.where(step > 0, step, 1)[:, :, None]),
                    0, top).astype(np.int64).reshape(n, 256)
        scales = pack_scales_k4(sc, m)
        qs = np.zeros((n, 128), np.uint8)
        qh = np.zeros((n, 32), np.uint8)
        for c in range(4):
            a, b = q[:, 64 * c: 64 * c + 32], q[:, 64 * c + 32: 64 * c + 64]
            qs[:, 32 * c: 32 * c + 32] = (a & 0xF) | ((b & 0xF) << 4)
            qh |= (((a >> 4) & 1) << (2 * c)).astype(np.uint8) | (((b >> 4) & 1) << (2 * c + 1)).astype(np.uint8)
        head = [d[i].tobytes() + dmin[i].tobytes() + scales[i].tobytes() for i in range(n)]
        blocks = b"".join(h + (qh[i].tobytes() if kind == "q5_K" else b"") + qs[i].tobytes() for i, h in enumerate(head))
        return blocks, dequantize_k(blocks, kind, n)
    sub = x.reshape(n, 16, 16)
    scale = np.abs(sub).max(axis=2) / 31
    d = f16(scale.max(axis=1) / 127)
    dd = d.astype(f32)
    sc = np.clip(np.round(scale / np.where(dd > 0, dd, 1)[:, None]), -128, 127).astype(np.int64)
    step = (dd[:, None] * sc.astype(f32)).astype(f32)
    q = (np.clip(np.round(sub / np.where(step > 0, step, 1)[:, :, None]), -32, 31) + 32).astype(np.int64).reshape(n, 256)
    ql = np.zeros((n, 128), np.uint8)
    qh = np.zeros((n, 64), np.uint8)
    for h in range(2):
        q1, q2, q3, q4 = (q[:, 128 * h + 32 * k: 128 * h + 32 * k + 32] for k in range(4))
        ql[:, 64 * h: 64 * h + 32] = (q1 & 0xF) | ((q3 & 0xF) << 4)
        ql[:, 64 * h + 32: 64 * h + 64] = (q2 & 0xF) | ((q4 & 0xF) << 4)
        qh[:, 32 * h: 32 * h + 32] = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6)
    blocks = b"".join(ql[i].tobytes() + qh[i].tobytes() + sc[i].astype(np.int8).tobytes() + d[i].tobytes()
                      for i in range(n))
    return blocks, dequantize_k(blocks, kind, n)


def dequantize_k(blocks, kind, n):
    """ggml's dequantize_row_q4_K / q5_K / q6_K, read from the bytes, in f32."""
    f32 = np.float32
    size = {"q4_K": 144, "q5_K": 176, "q6_K": 210}[kind]
    b = np.frombuffer(blocks, np.uint8).reshape(n, size)
    y = np.zeros((n, 256), f32)
    if kind in ("q4_K", "q5_K"):
        d = b[:, 0:2].copy().view(np.float16).astype(f32)[:, 0]
        dmin = b[:, 2:4].copy().view(np.float16).astype(f32)[:, 0]
        sc, m = unpack_scales_k4(b[:, 4:16])
        qh = b[:, 16:48].astype(np.int64)
        qs = (b[:, 16:144] if kind == "q4_K" else b[:, 48:176]).astype(np.int64)
        for c in range(4):
            lo, hi = qs[:, 32 * c: 32 * c + 32] & 0xF, qs[:, 32 * c: 32 * c + 32] >> 4
            if kind == "q5_K":
                lo = lo + ((qh >> (2 * c)) & 1) * 16
                hi = hi + ((qh >> (2 * c + 1)) & 1) * 16
            for k, q in ((2 * c, lo), (2 * c + 1, hi)):
                dk = (d * sc[:, k].astype(f32)).astype(f32)
                mk = (dmin * m[:, k].astype(f32)).astype(f32)
                y[:, 32 * k: 32 * k + 32] = (dk[:, None] * q.astype(f32)).astype(f32) - mk[:, None]
        return y
    ql, qh = b[:, 0:128].astype(np.int64), b[:, 128:192].astype(np.int64)
    sc = b[:, 192:208].copy().view(np.int8).astype(f32)
    d = b[:, 208:210].copy().view(np.float16).astype(f32)[:, 0]
    for h in range(2):
        L, H = ql[:, 64 * h: 64 * h + 64], qh[:, 32 * h: 32 * h + 32]
        qs = [(L[:, 0:32] & 0xF) | (((H >> 0) & 3) << 4), (L[:, 32:64] & 0xF) | (((H >> 2) & 3) << 4),
              (L[:, 0:32] >> 4) | (((H >> 4) & 3) << 4), (L[:, 32:64] >> 4) | (((H >> 6) & 3) << 4)]
        for k, q in enumerate(qs):
            for half in range(2):
                sub = 8 * h + 2 * k + half
                dk = (d * sc[:, sub]).astype(f32)
                cols = slice(128 * h + 32 * k + 16 * half, 128 * h + 32 * k + 16 * half + 16)
                y[:, cols] = dk[:, None] * (q[:, 16 * half: 16 * half + 16] - 32).astype(f32)
    return y


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
    ap.add_argument("--quantize", choices=["q8_0", "q4_0", "q4_K", "q5_K", "q6_K"], help="every 2-D f32 tensor "
                    "whose rows are whole blocks (q8_0, q4_0: as ggml's reference quantizers do; k-quants: a valid "
                    "encoding); --dequantized OUT.safetensors writes what they dequantize to")
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
            if d == "F32" and len(sh) == 2 and sh[1] % BLOCK[a.quantize] == 0:
                x = np.frombuffer(b, np.float32).reshape(-1, BLOCK[a.quantize])
                b, y = quantize(x, a.quantize) if BLOCK[a.quantize] == 32 else quantize_k(x, a.quantize)
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


if __name__ == "__main__":
    main()

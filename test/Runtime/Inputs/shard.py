"""Splits a safetensors file into Hugging Face shards and an index
(model-0000K-of-0000N.safetensors, model.safetensors.index.json), or writes
a damaged index, for sharded-safetensors.test.

  shard.py SRC.safetensors DIR N [DAMAGE]

DAMAGE: missing-shard, unlisted, wrong-shard, missing-tensor, escape,
not-string, no-map.
"""
import json
import os
import struct
import sys


def load(path):
    """name -> (dtype, shape, bytes): the file's tensors, as they are stored."""
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    return {k: (v["dtype"], v["shape"], body[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items() if k != "__metadata__"}


def save(tensors, path):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
damage = sys.argv[4] if len(sys.argv) > 4 else ""
tensors = load(src)
names = sorted(tensors)
os.makedirs(out, exist_ok=True)
weight_map, total = {}, 0
for k in range(n):
    file = "model-%05d-of-%05d.safetensors" % (k + 1, n)
    part = {m: tensors[m] for m in names[k::n]}
    if damage == "unlisted" and k == 0:
        part = dict(part, extra=tensors[names[0]])
    save(part, os.path.join(out, file))
    for m in part:
        if m != "extra":
            weight_map[m] = file
    total += sum(len(t[2]) for t in part.values())
if damage == "missing-shard":
    os.remove(os.path.join(out, weight_map[names[0]]))
if damage == "wrong-shard":
    weight_map[names[0]] = weight_map[names[1]]
if damage == "missing-tensor":
    weight_map["model.absent.weight"] = weight_map[names[0]]
if damage == "escape":
    weight_map[names[0]] = "../" + weight_map[names[0]]
if damage == "not-string":
    weight_map[names[0]] = 3
index = {"metadata": {"total_size": total}, "weight_map": weight_map}
if damage == "no-map":
    index = {"metadata": {}}
with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
    json.dump(index, f, indent=2)

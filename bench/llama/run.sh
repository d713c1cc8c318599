#!/usr/bin/env bash
# Llama decode on CPU: linnet (examples/llama.ln, default config: Hidden 512,
# Layers 8, Heads 8, KvHeads 4, Inter 1376, Vocab 32000, MaxSeq 256, f32)
# against the PyTorch eager reference (test/Numerics/ref/llama.py) on the
# same weights, both with 2 threads, alternating REPEATS times in the same
# run (the machine is shared: report best and median). Also reports
# `linnet build` time and peak RSS, `linnet generate` peak RSS against the
# budget (weight bytes + KV cache + 64 MiB), and decode as a fraction of the
# bandwidth bound (bytes of weights read per token / bandwidth measured here
# by streaming 1 GiB of random f32 through OpenBLAS sgemv and numpy max,
# best of both).
#
# usage: bench/llama/run.sh [BUILD_DIR] [NEW_TOKENS] [REPEATS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
n=${2:-64}
repeats=${3:-5}
linnet=$build/bin/linnet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=2

echo "== linnet build examples/llama.ln --target cpu-native"
/usr/bin/time -v "$linnet" build "$root/examples/llama.ln" --target cpu-native -o "$work/llama" \
    2> "$work/time.txt" || { cat "$work/time.txt"; exit 1; }
grep -E "Elapsed \(wall|Maximum resident" "$work/time.txt"

echo "== weights (PyTorch reference init, Hugging Face names)"
/usr/bin/python3 "$root/test/Numerics/ref/llama.py" init --seed 0 -o "$work/w.safetensors"
ls -l "$work/w.safetensors" | awk '{printf "%.1f MB of weights\n", $5 / 1e6}'

: > "$work/linnet.txt"
: > "$work/torch.txt"
for r in $(seq "$repeats"); do
  /usr/bin/time -v "$linnet" generate "$work/llama" --weights "$work/w.safetensors" \
      --prompt 1,2,3 --max-new-tokens "$n" > "$work/gen.out" 2> "$work/gen.txt"
  grep -E "tokens/s" "$work/gen.txt" | sed -E 's/.* ([0-9.]+) tokens\/s/\1/' >> "$work/linnet.txt"
  grep -E "Maximum resident" "$work/gen.txt" | awk '{print $NF}' >> "$work/rss.txt"
  /usr/bin/python3 "$root/test/Numerics/ref/llama.py" generate --weights "$work/w.safetensors" \
      --prompt 1,2,3 --max-new-tokens "$n" --threads 2 > "$work/torch.out" 2> "$work/torch.err"
  sed -E -n 's/^([0-9.]+) tokens\/s/\1/p' "$work/torch.err" >> "$work/torch.txt"
  cmp -s "$work/gen.out" "$work/torch.out" || echo "warning: run $r: tokens differ"
  echo "run $r: linnet $(tail -1 "$work/linnet.txt") tokens/s, PyTorch $(tail -1 "$work/torch.txt") tokens/s"
done

echo "== bandwidth and summary"
OPENBLAS_NUM_THREADS=2 OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX} /usr/bin/python3 - \
    "$work/w.safetensors" "$work/linnet.txt" "$work/torch.txt" "$work/rss.txt" "$n" <<'PY'
import json, statistics, struct, sys, time
import numpy as np
wpath, lpath, tpath, rpath, n = sys.argv[1:6]
# Bytes of weights read per decode token: every tensor except the embedding
# table, of which one row is read.
with open(wpath, "rb") as f:
    hlen = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(hlen))
per_token = total = 0
for name, t in header.items():
    if name == "__metadata__":
        continue
    size = t["data_offsets"][1] - t["data_offsets"][0]
    total += size
    per_token += size // t["shape"][0] if name == "model.embed_tokens.weight" else size
# Bandwidth: the best of 7 passes over 1 GiB of random f32 (far past the
# caches; constant data is not used: identical pages may be merged by the
# host), read by OpenBLAS sgemv (y = W x) and by numpy's max.
W = np.random.default_rng(0).random(((1 << 28) // 512, 512), dtype=np.float32)
x = np.ones(512, dtype=np.float32)
best = float("inf")
for fn in (lambda: W @ x, lambda: W.max()):
    fn()
    for _ in range(7):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
bw = W.nbytes / best
del W
lin = [float(v) for v in open(lpath).read().split()]
tor = [float(v) for v in open(tpath).read().split()]
rss = [int(v) for v in open(rpath).read().split()]
kv = 8 * 2 * 4 * 256 * 64 * 4
budget = (total + kv) / 1024 + 64 * 1024
bound = bw / per_token
med = statistics.median
print(f"weights read per token: {per_token / 1e6:.1f} MB; bandwidth {bw / 1e9:.1f} GB/s; "
      f"bound {bound:.0f} tokens/s")
print(f"linnet  tokens/s: best {max(lin):.1f}, median {med(lin):.1f}  ({lin})")
print(f"PyTorch tokens/s: best {max(tor):.1f}, median {med(tor):.1f}  ({tor})")
print(f"ratio: best/best {max(lin) / max(tor):.2f}x, median/median {med(lin) / med(tor):.2f}x")
print(f"bandwidth-bound fraction: best {max(lin) / bound:.0%}, median {med(lin) / bound:.0%}")
print(f"linnet generate peak RSS: max {max(rss)} KiB; budget (weights {total} B + KV cache "
      f"{kv} B + 64 MiB) {budget:.0f} KiB: {'within' if max(rss) <= budget else 'OVER'}")
PY

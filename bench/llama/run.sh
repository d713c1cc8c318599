#!/usr/bin/env bash
# Llama decode on CPU: linnet (examples/llama.ln, default config: Hidden 512,
# Layers 8, Heads 8, KvHeads 4, Inter 1376, Vocab 32000, MaxSeq 256, f32)
# against the PyTorch eager reference (test/Numerics/ref/llama.py) on the
# same weights, both with 2 threads. Also reports `linnet build` time and
# peak RSS (/usr/bin/time -v).
#
# usage: bench/llama/run.sh [BUILD_DIR] [NEW_TOKENS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
n=${2:-64}
linnet=$build/bin/linnet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=2

echo "== linnet build examples/llama.ln --target cpu"
/usr/bin/time -v "$linnet" build "$root/examples/llama.ln" --target cpu -o "$work/llama" \
    2> "$work/time.txt"
grep -E "Elapsed \(wall|Maximum resident" "$work/time.txt"

echo "== weights (PyTorch reference init, Hugging Face names)"
/usr/bin/python3 "$root/test/Numerics/ref/llama.py" init --seed 0 -o "$work/w.safetensors"
ls -l "$work/w.safetensors" | awk '{printf "%.1f MB of weights\n", $5 / 1e6}'

echo "== linnet generate ($n new tokens)"
/usr/bin/time -v "$linnet" generate "$work/llama" --weights "$work/w.safetensors" \
    --prompt 1,2,3 --max-new-tokens "$n" 2> "$work/gen.txt" | tail -c 200
grep -E "tokens/s|Maximum resident" "$work/gen.txt"

echo "== PyTorch eager reference, 2 threads ($n new tokens)"
/usr/bin/python3 "$root/test/Numerics/ref/llama.py" generate --weights "$work/w.safetensors" \
    --prompt 1,2,3 --max-new-tokens "$n" --threads 2 | tail -c 200

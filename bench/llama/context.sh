#!/usr/bin/env bash
# Decode speed against context length (the serving issue's figure: decode
# after a 1,500-token prompt >= 85% of its speed after an 8-token one).
# Builds the default Llama with MaxSeq 2048 (--target cpu-native), writes
# random weights (linnet init-weights), then alternates REPEATS times
# `linnet generate --max-new-tokens N` after a prompt of 8 tokens and after
# one of each LENGTH, 2 threads, and prints the median decode tokens/s of
# each, the ratio to the 8-token figure, and the prefill time of each
# prompt. The KV cache read per token at 1,500 is ~25 MB (8 layers, 4 KV
# heads of 64, K and V), against 158 MB of weights.
#
# KV=f16 builds the cache in f16 (-D KV=f16).
#
# usage: [KV=f16] bench/llama/context.sh [BUILD_DIR] [N=64] [REPEATS=3] [LENGTHS=128,512,1500]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
n=${2:-64}
repeats=${3:-3}
lengths=${4:-128,512,1500}
linnet=$build/bin/linnet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=2

"$linnet" build "$root/examples/llama.ln" -D MaxSeq=2048 -D KV="${KV:-f32}" --target cpu-native -o "$work/llama" > /dev/null
"$linnet" init-weights "$root/examples/llama.ln" -D MaxSeq=2048 -D KV="${KV:-f32}" -o "$work/w.safetensors" > /dev/null
prompt() { /usr/bin/python3 -c "import sys; print(','.join(str((i * 7919 + 11) % 32000) for i in range($1)))"; }
all="8,$lengths"
for r in $(seq "$repeats"); do
  for len in ${all//,/ }; do
    "$linnet" generate "$work/llama" --weights "$work/w.safetensors" --prompt "$(prompt "$len")" \
        --max-new-tokens "$n" 2>&1 >/dev/null | grep "tokens/s" |
      sed -E "s/^prefill: [0-9]+ tokens in ([0-9.]+) s; decode: .* ([0-9.]+) tokens\/s/$len \1 \2/" >> "$work/runs.txt"
  done
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
base=$(awk '$1 == 8 {print $3}' "$work/runs.txt" | median)
printf "%-8s %-12s %-14s %s\n" context "prefill (s)" "decode tok/s" "of context 8"
for len in ${all//,/ }; do
  pre=$(awk -v l="$len" '$1 == l {print $2}' "$work/runs.txt" | median)
  dec=$(awk -v l="$len" '$1 == l {print $3}' "$work/runs.txt" | median)
  awk -v l="$len" -v p="$pre" -v d="$dec" -v b="$base" 'BEGIN {printf "%-8d %-12.3f %-14.1f %.0f%%\n", l, p, d, 100 * d / b}'
done
echo "target: decode at context 1500 >= 85% of context 8 (median of $repeats runs, $n new tokens, 2 threads)"

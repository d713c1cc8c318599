#!/usr/bin/env bash
# Batched decode (the serving issue's figure: decode throughput at 8
# concurrent sequences >= 4x batch-1 tokens/s, the same tokens per
# sequence). Builds the default Llama with -D Slots=N (--target
# cpu-native), writes random weights, then REPEATS times: `linnet generate
# --prompts` over N prompts of 8.. tokens (continuous batching through
# prefill_slot and decode_batch), and `linnet generate --prompt` of the
# first prompt alone (batch 1 through decode); prints the median decode
# tokens/s of each, their ratio, and whether every sequence's tokens equal
# its batch-1 tokens. 2 threads. KV=paged runs the batch over the paged
# KV cache (prefill_paged, decode_paged: one pool of pages), KV=slots (the
# default) over the cache slots.
#
# usage: [KV=slots|paged] bench/llama/batched.sh [BUILD_DIR] [N=8] [NEW=64] [REPEATS=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
slots=${2:-8}
new=${3:-64}
repeats=${4:-3}
kv=${KV:-slots}
linnet=$build/bin/linnet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=2

"$linnet" build "$root/examples/llama.ln" -D Slots="$slots" --target cpu-native -o "$work/llama" > /dev/null
"$linnet" init-weights "$root/examples/llama.ln" -o "$work/w.safetensors" > /dev/null
/usr/bin/python3 -c "
for i in range($slots): print(','.join(str((i * 7919 + k * 31 + 11) % 32000) for k in range(8 + i)))" > "$work/prompts.txt"
for r in $(seq "$repeats"); do
  "$linnet" generate "$work/llama" --weights "$work/w.safetensors" --prompts "$work/prompts.txt" \
      --kv-cache "$kv" --max-new-tokens "$new" 2>&1 >"$work/batched.txt" | sed -E 's/.* ([0-9.]+) tokens\/s$/\1/' >> "$work/batched-tps.txt"
  "$linnet" generate "$work/llama" --weights "$work/w.safetensors" --prompt "$(head -1 "$work/prompts.txt")" \
      --max-new-tokens "$new" 2>&1 >/dev/null | sed -E 's/.* ([0-9.]+) tokens\/s$/\1/' >> "$work/single-tps.txt"
done
same=yes
while read -r p; do
  "$linnet" generate "$work/llama" --weights "$work/w.safetensors" --prompt "$p" --max-new-tokens "$new" \
      2>/dev/null >> "$work/single.txt"
done < "$work/prompts.txt"
cmp -s "$work/batched.txt" "$work/single.txt" || same=no
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
b=$(median < "$work/batched-tps.txt")
s=$(median < "$work/single-tps.txt")
printf "batch-1 decode:           %s tokens/s\n" "$s"
printf "%s sequences (%s):     %s tokens/s (%.2fx batch 1)\n" "$slots" "$kv" "$b" "$(echo "$b / $s" | bc -l)"
printf "same tokens per sequence: %s\n" "$same"
echo "target: >= 4x batch-1 tokens/s at 8 sequences (median of $repeats runs, $new new tokens each, 2 threads)"

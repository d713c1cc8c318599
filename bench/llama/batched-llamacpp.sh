#!/usr/bin/env bash
# Batched decode, linnet against llama.cpp on the same weights and prompts
# (the serving issue's figure: linnet's batched decode >= llama.cpp's).
#
# The weights are ../shared/peers/llamacpp's (PyTorch reference init, seed 0,
# the default Llama's config: safetensors for linnet, the same tensors as an
# F32 GGUF for llama.cpp). linnet: the default Llama built with -D Slots=N
# (--target cpu-native), `linnet generate --prompts` (its default paged KV
# cache: prefill_paged, then decode_paged over every row; KV=slots:
# prefill_slot and decode_batch). llama.cpp: llamacpp_batched.cpp, the same
# continuous batching through its C API (one sequence id a slot in one
# llama_batch; F32 KV cache, flash attention off, persistent threadpool, as
# the batch-1 comparison). Each side runs REPEATS times, alternating; prints
# the median decode tokens/s of each, their ratio, and whether the two give
# the same tokens for every prompt. 2 threads each.
#
# Needs what ../shared/peers/llamacpp needs (node-llama-cpp under $PEERS,
# default ${TMPDIR:-/tmp}/linnet-peers; g++, git, torch); weights, GGUF and
# the driver are made once under $PEERS/work and reused.
#
# usage: [KV=paged|slots] bench/llama/batched-llamacpp.sh [BUILD_DIR] [N=8] [NEW=64] [REPEATS=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
slots=${2:-8}
new=${3:-64}
repeats=${4:-3}
linnet=$build/bin/linnet
source "$root/bench/llama/llamacpp-peer.sh"

"$linnet" build "$root/examples/llama.ln" -D Slots="$slots" --target cpu-native -o "$work/llama" > /dev/null
/usr/bin/python3 -c "
for i in range($slots): print(','.join(str((i * 7919 + k * 31 + 11) % 32000) for k in range(8 + i)))" > "$work/prompts.txt"
tps() { sed -nE 's/.* ([0-9.]+) tokens\/s$/\1/p'; }
for r in $(seq "$repeats"); do
  OMP_NUM_THREADS=2 "$linnet" generate "$work/llama" --weights "$wts" --prompts "$work/prompts.txt" \
      --kv-cache "${KV:-paged}" --max-new-tokens "$new" 2>"$work/l.err" >"$work/linnet.txt"
  tps < "$work/l.err" >> "$work/linnet-tps.txt"
  "$drv" "$gguf" --backends "$bins" --prompts "$work/prompts.txt" --slots "$slots" --max-new-tokens "$new" \
      --threads 2 2>"$work/c.err" >"$work/llamacpp.txt"
  tps < "$work/c.err" >> "$work/llamacpp-tps.txt"
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
l=$(median < "$work/linnet-tps.txt")
c=$(median < "$work/llamacpp-tps.txt")
same=$(paste -d' ' "$work/linnet.txt" "$work/llamacpp.txt" | awk '$1 == $2 {n++} END {print n + 0}')
printf "%s sequences, %s new tokens each, 2 threads (median of %s runs)\n" "$slots" "$new" "$repeats"
printf "linnet batched decode:    %s tokens/s (runs: %s)\n" "$l" "$(paste -sd' ' "$work/linnet-tps.txt")"
printf "llama.cpp batched decode: %s tokens/s (runs: %s)\n" "$c" "$(paste -sd' ' "$work/llamacpp-tps.txt")"
printf "linnet / llama.cpp:       %.2fx\n" "$(echo "$l / $c" | bc -l)"
printf "same tokens:              %s of %s sequences\n" "$same" "$slots"
echo "target: linnet >= llama.cpp (same weights, same sequences)"

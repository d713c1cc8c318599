#!/usr/bin/env bash
# The read bandwidth of this machine at a model's weight size, and the decode
# bound it implies (bench/bandwidth/README.md).
#
# usage: bench/bandwidth/run.sh [THREADS=2] [PASSES=11]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
threads=${1:-2}
passes=${2:-11}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O3 -march=native -ffast-math -fopenmp "$here/read.c" -o "$work/read"
# The default Llama of examples/llama.ln: every weight but the embedding
# table, plus one embedding row, is read per decoded token.
per_token_f32=158400000
for what in "default Llama f32 weights:223900000" "default Llama bf16 weights:111950000" "1 GiB:1073741824"; do
  name=${what%%:*}
  bytes=${what##*:}
  line=$("$work/read" "$bytes" "$threads" "$passes")
  echo "$name: $line"
  [[ $bytes == 223900000 ]] && best=$(sed -E 's/.*best ([0-9.]+) GB\/s.*/\1/' <<< "$line")
done
awk -v bw="$best" -v b="$per_token_f32" 'BEGIN {
  printf "decode bound of the default Llama (%d threads): f32 %.0f tokens/s (%.1f MB a token), bf16 %.0f tokens/s, at %.1f GB/s\n",
    '"$threads"', bw * 1e9 / b, b / 1e6, bw * 1e9 / (b / 2), bw }'

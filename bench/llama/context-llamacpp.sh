#!/usr/bin/env bash
# Decode and prefill against context length, linnet beside llama.cpp on the
# same weights and prompts (the serving issue's figures: decode at context
# 1,500 >= 85% of its speed at context 8, and prefill of 1,500 tokens >=
# llama.cpp's).
#
# The weights are ../shared/peers/llamacpp's (llamacpp-peer.sh: safetensors
# for linnet, the same tensors as an F32 GGUF for llama.cpp). linnet: the
# default Llama built with -D MaxSeq=2048 (--target cpu-native), `linnet
# generate --prompt`. llama.cpp: llamacpp_batched.cpp with one slot of 2,048
# positions (its C API: the prompt in one llama_decode with the last row's
# logits, then one token a call; F32 KV cache, flash attention off). For each
# prompt length, REPEATS alternating runs of NEW new tokens, 2 threads each;
# prints the median prefill seconds and decode tokens/s of each side, decode
# as a fraction of its context-8 figure, the ratios, and how many of the
# tokens the two sides agree on.
#
# KV=f16 keeps both sides' KV caches in f16 (linnet: -D KV=f16; llama.cpp:
# type_k = type_v = F16, its own default); f32 by default.
#
# usage: [KV=f16] bench/llama/context-llamacpp.sh [BUILD_DIR] [NEW=64] [REPEATS=3] [LENGTHS=512,1500]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
new=${2:-64}
repeats=${3:-3}
lengths=8,${4:-512,1500}
kv=${KV:-f32}
linnet=$build/bin/linnet
source "$root/bench/llama/llamacpp-peer.sh"

"$linnet" build "$root/examples/llama.ln" -D MaxSeq=2048 -D KV="$kv" --target cpu-native -o "$work/llama" > /dev/null
prompt() { /usr/bin/python3 -c "print(','.join(str((i * 7919 + 11) % 32000) for i in range($1)))"; }
# "prefill: P tokens in S s; decode: ... T tokens/s" -> "S T"
summary() { sed -nE 's/.*prefill: [0-9]+ tokens in ([0-9.]+) s; decode: .* ([0-9.]+) tokens\/s$/\1 \2/p'; }
for r in $(seq "$repeats"); do
  for len in ${lengths//,/ }; do
    prompt "$len" > "$work/p$len.txt"
    OMP_NUM_THREADS=2 "$linnet" generate "$work/llama" --weights "$wts" --prompt "$(cat "$work/p$len.txt")" \
        --max-new-tokens "$new" 2>"$work/l.err" >"$work/l$len.txt"
    echo "$len $(summary < "$work/l.err")" >> "$work/linnet.txt"
    "$drv" "$gguf" --backends "$bins" --prompts "$work/p$len.txt" --slots 1 --ctx-per-seq 2048 --kv-type "$kv" \
        --max-new-tokens "$new" --threads 2 2>"$work/c.err" >"$work/c$len.txt"
    echo "$len $(summary < "$work/c.err")" >> "$work/llamacpp.txt"
  done
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
col() { awk -v l="$2" -v c="$3" '$1 == l {print $c}' "$work/$1.txt" | median; }
lbase=$(col linnet 8 3) cbase=$(col llamacpp 8 3)
printf "%-8s %-22s %-28s %-28s %s\n" context "prefill s (l / c)" "linnet decode (of ctx 8)" "llama.cpp decode (of ctx 8)" "same tokens"
for len in ${lengths//,/ }; do
  lp=$(col linnet "$len" 2) cp=$(col llamacpp "$len" 2) ld=$(col linnet "$len" 3) cd=$(col llamacpp "$len" 3)
  same=$(paste -d, <(tr , '\n' < "$work/l$len.txt") <(tr , '\n' < "$work/c$len.txt") | awk -F, '$1 == $2 {n++} END {print n + 0}')
  awk -v l="$len" -v lp="$lp" -v cp="$cp" -v ld="$ld" -v cd="$cd" -v lb="$lbase" -v cb="$cbase" -v s="$same" -v n="$new" \
    'BEGIN {printf "%-8d %5.3f / %5.3f (%.2fx)  %6.1f tok/s (%3.0f%%)         %6.1f tok/s (%3.0f%%)         %d of %d\n",
            l, lp, cp, cp / lp, ld, 100 * ld / lb, cd, 100 * cd / cb, s, n}'
done
echo "decode linnet / llama.cpp at the longest context: $(echo "$(col linnet "${lengths##*,}" 3) / $(col llamacpp "${lengths##*,}" 3)" | bc -l | cut -c1-4)x"
echo "KV cache: $kv on both sides"
echo "targets: linnet decode at 1500 >= 85% of its context-8 figure; prefill of 1500 >= llama.cpp's (median of $repeats runs, $new new tokens, 2 threads)"

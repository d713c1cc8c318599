#!/usr/bin/env bash
# Decode at batch 1 with f32, bf16, q8_0 and q4_0 weights (and the k-quants
# q4_K, q5_K, q6_K when TYPES names them), linnet against llama.cpp
# on one GGUF file per type (the weights issue's figure: >= 1.2x llama.cpp
# at each, and the fraction of the read-bandwidth bound).
#
# The weights are ../shared/peers/llamacpp's (PyTorch reference init, seed 0,
# the default Llama's config, as an F32 GGUF with llama.cpp's names and q/k
# rows permuted). q8_0 and q4_0 are that file quantized by `linnet quantize`
# (ggml's reference quantizers, byte for byte: bench/quantize/ggml-identity.sh),
# so both sides read the same blocks. A k-quant's blocks of 256 do not divide
# the down projections' rows (Inter = 1376): those are q8_0 on both sides
# (`--tensor-type '*.ffn_down.weight=q8_0'`, -D WDown=q8_0), as llama.cpp's
# own quantizer falls back to another type for them. linnet: examples/llama.ln
# built with -D W=TYPE (--target cpu-native), `linnet generate` through
# examples/llama.gguf.binding.json. llama.cpp: llamacpp_batched.cpp with one
# slot (its C API; F32 KV cache, flash attention off, persistent threadpool).
# Each side runs REPEATS times, alternating; prints the median decode
# tokens/s, the ratio, the weight bytes read per token and the GB/s that
# implies, and whether the two sides' greedy tokens are the same.
#
# PRODUCTS=int8 builds the quantized types with --block-products int8 (x
# quantized to q8_0 and integer block sums, as llama.cpp computes them).
#
# usage: [PRODUCTS=exact|int8] bench/llama/quantized-llamacpp.sh [BUILD_DIR] [TYPES="f32 bf16 q8_0 q4_0"] [NEW=128] [REPEATS=5]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
types=${2:-f32 bf16 q8_0 q4_0}
new=${3:-128}
repeats=${4:-5}
linnet=$build/bin/linnet
source "$root/bench/llama/llamacpp-peer.sh"

prompt=1,2,3,4,5,6,7,8
echo "$prompt" > "$work/prompt.txt"
tps() { sed -nE 's/.* ([0-9.]+) tokens\/s$/\1/p'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# Bytes read per decoded token: every matrix but the embedding table (one
# row of it), 31.5M f32 values in blocks of 32, plus the f32 norms.
matrix_values=39583744 norm_values=8704
down_values=5636096 # the 8 down projections, 512 x 1376 each
for t in $types; do
  g=$gguf
  kquant=$([[ $t == q?_K ]] && echo 1 || true)
  qargs=()
  [[ -n $kquant ]] && qargs=(--tensor-type '*.ffn_down.weight=q8_0')
  if [[ $t != f32 ]]; then
    g=$pwork/w-seed0-$t.gguf
    [[ -f "$g" && "$g" -nt "$gguf" ]] || "$linnet" quantize "$gguf" -o "$g" --type "$t" "${qargs[@]}" > /dev/null
  fi
  "$linnet" build "$root/examples/llama.ln" $([[ $t != f32 ]] && echo "-D W=$t") \
      $([[ -n $kquant ]] && echo "-D WDown=q8_0") \
      $([[ $t == q* ]] && echo "--block-products ${PRODUCTS:-exact}") --target cpu-native \
      -o "$work/llama-$t" > /dev/null
  : > "$work/l-$t.tps"; : > "$work/c-$t.tps"
  for r in $(seq "$repeats"); do
    OMP_NUM_THREADS=2 "$linnet" generate "$work/llama-$t" --weights "$g" \
        --binding "$root/examples/llama.gguf.binding.json" --prompt "$prompt" --max-new-tokens "$new" \
        2>"$work/l.err" >"$work/linnet-$t.txt"
    tps < "$work/l.err" >> "$work/l-$t.tps"
    "$drv" "$g" --backends "$bins" --prompts "$work/prompt.txt" --slots 1 --max-new-tokens "$new" \
        --threads 2 2>"$work/c.err" >"$work/llamacpp-$t.txt"
    tps < "$work/c.err" >> "$work/c-$t.tps"
  done
  l=$(median < "$work/l-$t.tps")
  c=$(median < "$work/c-$t.tps")
  bytes=$(awk -v t="$t" -v m="$matrix_values" -v n="$norm_values" -v down="$down_values" 'BEGIN {
    per = (t == "q8_0") ? 34 / 32 : (t == "q4_0") ? 18 / 32 : (t == "bf16") ? 2 : 4
    if (t == "q4_K") per = 144 / 256; if (t == "q5_K") per = 176 / 256; if (t == "q6_K") per = 210 / 256
    if (t ~ /_K$/) print int((m - down) * per + down * 34 / 32 + n * 4); else print int(m * per + n * 4) }')
  same=$(awk -F, 'NR == FNR {for (i = 1; i <= NF; i++) a[i] = $i; n = NF; next}
                  {for (i = 1; i <= NF && i <= n; i++) if ($i != a[i]) {print i - 1; exit} print "all"}' \
         "$work/linnet-$t.txt" "$work/llamacpp-$t.txt")
  printf "%-5s linnet %7.1f tokens/s (runs: %s)\n" "$t" "$l" "$(paste -sd' ' "$work/l-$t.tps")"
  printf "%-5s llama.cpp %4.1f tokens/s (runs: %s)\n" "$t" "$c" "$(paste -sd' ' "$work/c-$t.tps")"
  printf "%-5s linnet / llama.cpp %.2fx; %.1f MB a token: linnet reads %.1f GB/s, llama.cpp %.1f GB/s; " \
    "$t" "$(echo "$l / $c" | bc -l)" "$(echo "$bytes / 1000000" | bc -l)" \
    "$(echo "$l * $bytes / 1000000000" | bc -l)" "$(echo "$c * $bytes / 1000000000" | bc -l)"
  if [[ $same == all ]]; then echo "same greedy tokens"; else echo "greedy tokens agree for $same tokens"; fi
  # Prefill of 128 tokens, the last row's logits (llama.cpp's usual), warm:
  # linnet (wall(--repeat 11) - wall(--repeat 1)) / 10, llama.cpp its
  # llama_decode of the prompt (llamacpp_decode --prefill-bench).
  if [[ -x "$pwork/llamacpp_decode" ]]; then
    ptoks=$(/usr/bin/python3 -c "print(','.join(str((i * 97) % 32000) for i in range(1, 129)))")
    /usr/bin/python3 -c "import numpy as np; np.save('$work/p128.npy', np.array([$ptoks], dtype=np.int64))"
    : > "$work/lp-$t"; : > "$work/cp-$t"
    for r in $(seq "$repeats"); do
      for k in 1 11; do
        s0=$(date +%s.%N)
        OMP_NUM_THREADS=2 "$linnet" run "$work/llama-$t" --weights "$g" \
            --binding "$root/examples/llama.gguf.binding.json" --entry prefill_last \
            --input tokens="$work/p128.npy" --repeat "$k" > /dev/null
        eval "w$k=\$(echo \"\$(date +%s.%N) - $s0\" | bc -l)"
      done
      echo "128 / (($w11 - $w1) / 10)" | bc -l >> "$work/lp-$t"
      "$pwork/llamacpp_decode" "$g" --backends "$bins" --prompt "$ptoks" --threads 2 --kv f32 \
          --flash-attention off --prefill-bench 1 --json "$work/c.json" > /dev/null 2>&1
      /usr/bin/python3 -c "import json; print(128 / (json.load(open('$work/c.json'))['prefill_ms'][0] / 1e3))" \
          >> "$work/cp-$t"
    done
    lp=$(median < "$work/lp-$t"); cp=$(median < "$work/cp-$t")
    printf "%-5s prefill 128, last row: linnet %.0f tokens/s, llama.cpp %.0f, %.2fx\n" "$t" "$lp" "$cp" \
      "$(echo "$lp / $cp" | bc -l)"
  fi
done
echo "target: linnet >= 1.2x llama.cpp at each type (2 threads, median of $repeats runs each)"

#!/usr/bin/env bash
# `linnet quantize` against ggml's own quantizer: every tensor linnet writes
# as q8_0, q4_0, q4_K, q5_K or q6_K must be byte-identical to what
# ggml_quantize_chunk (node-llama-cpp's prebuilt libggml-base, the library
# llama.cpp's llama-quantize calls) writes from the same f32 rows. Weights:
# the default Llama's random weights (init-weights), or WEIGHTS.
#
# Needs node-llama-cpp under $PEERS (default ${TMPDIR:-/tmp}/linnet-peers),
# as ../shared/peers/llamacpp/README.md installs it, and gcc.
#
# usage: bench/quantize/ggml-identity.sh [BUILD_DIR] [WEIGHTS.safetensors]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
linnet=$build/bin/linnet
peers=${PEERS:-${TMPDIR:-/tmp}/linnet-peers}
bins=$peers/llamacpp/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
nlc=$peers/llamacpp/node_modules/node-llama-cpp
hdr=$peers/work/llama.cpp-headers
[[ -d "$bins" ]] || { echo "node-llama-cpp not found under $peers/llamacpp (../shared/peers/llamacpp/README.md)" >&2; exit 1; }
if [[ ! -f "$hdr/ggml/include/ggml.h" ]]; then
  rm -rf "$hdr" && mkdir -p "$(dirname "$hdr")"
  git clone -q -n "$nlc/llama/gitRelease.bundle" "$hdr"
  git -C "$hdr" checkout -q HEAD -- include ggml/include
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O1 -I "$hdr/ggml/include" "$root/bench/quantize/ggml_quantize.c" -L "$bins" -l:libggml-base.so \
    "-Wl,-rpath,$bins" -o "$work/ggml_quantize"
weights=${2:-}
if [[ -z "$weights" ]]; then
  weights=$work/w.safetensors
  "$linnet" init-weights "$root/examples/llama.ln" -o "$weights" > /dev/null
fi
for t in q8_0 q4_0 q4_K q5_K q6_K; do
  "$linnet" quantize "$weights" -o "$work/$t.gguf" --type "$t" > /dev/null
done
/usr/bin/python3 "$root/bench/quantize/compare_ggml.py" "$weights" "$work" "$work/ggml_quantize"

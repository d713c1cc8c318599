# Sourced by the llama.cpp comparisons (batched-llamacpp.sh,
# quantized-llamacpp.sh), with `root` set: checks that node-llama-cpp is
# installed under $PEERS, makes the peer's weights (safetensors $wts, the
# same tensors as an F32 GGUF $gguf) once under $pwork, and compiles
# llamacpp_batched.cpp against the bundled llama.cpp headers into $drv (and
# the peer's llamacpp_decode.cpp into $pwork/llamacpp_decode).
# Also gives a scratch directory $work, removed on exit.
peer_src=${PEER_SRC:-$root/../shared/peers/llamacpp}
peers=${PEERS:-${TMPDIR:-/tmp}/linnet-peers}
pwork=$peers/work
bins=$peers/llamacpp/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
nlc=$peers/llamacpp/node_modules/node-llama-cpp
if [[ ! -d "$bins" ]]; then
  echo "node-llama-cpp not found under $peers/llamacpp: run" >&2
  echo "  mkdir -p $peers/llamacpp && cd $peers/llamacpp && npm i -E node-llama-cpp@3.21.1" >&2
  exit 1
fi
mkdir -p "$pwork"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

wts=$pwork/w-seed0.safetensors gguf=$pwork/w-seed0.gguf
[[ -f "$wts" ]] || /usr/bin/python3 "$peer_src/make_weights.py" "$wts" --seed 0
[[ -f "$gguf" && "$gguf" -nt "$wts" ]] || /usr/bin/python3 "$peer_src/write_gguf.py" "$wts" "$gguf"
hdr=$pwork/llama.cpp-headers
if [[ ! -f "$hdr/include/llama.h" ]]; then
  rm -rf "$hdr"
  git clone -q -n "$nlc/llama/gitRelease.bundle" "$hdr"
  git -C "$hdr" checkout -q HEAD -- include ggml/include
fi
drv=$pwork/llamacpp_batched
src=$root/bench/llama/llamacpp_batched.cpp
if [[ ! -x "$drv" || "$src" -nt "$drv" ]]; then
  g++ -O2 -std=c++17 -I "$hdr/include" -I "$hdr/ggml/include" "$src" -L "$bins" -l:libllama.v0.4.0.so \
      -l:libggml.v0.4.0.so -l:libggml-base.so "-Wl,-rpath,$bins" -o "$drv"
fi
# The peer's own C API driver (prefill timing, --prefill-bench), which
# quantized-llamacpp.sh compares prefill against: built here as the peer's
# compare.py builds it.
dec=$pwork/llamacpp_decode
if [[ ! -x "$dec" || "$peer_src/llamacpp_decode.cpp" -nt "$dec" ]]; then
  g++ -O2 -std=c++17 -I "$hdr/include" -I "$hdr/ggml/include" "$peer_src/llamacpp_decode.cpp" -L "$bins" \
      -l:libllama.v0.4.0.so -l:libggml.v0.4.0.so -l:libggml-base.so "-Wl,-rpath,$bins" -o "$dec"
fi

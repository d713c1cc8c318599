#!/usr/bin/env bash
# What the run-time checks (docs/runtime-abi.md, "Run-time checks") cost on
# Llama decode: examples/llama.ln (default config) built twice, with
# `--runtime-checks on` (the default) and `off`, then `linnet generate` on
# the same weights alternating REPEATS times (the machine is shared: reports
# best and median decode tok/s of each, and the on/off ratio of the bests).
# Also counts the checks each build compiled (runtime.json `checks`).
#
# usage: bench/llama/checks.sh [BUILD_DIR] [NEW_TOKENS=32] [REPEATS=5]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
tokens=${2:-32}
repeats=${3:-5}
linnet=$build/bin/linnet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=2

for c in on off; do
  "$linnet" build "$root/examples/llama.ln" --target cpu-native --runtime-checks "$c" -o "$work/$c" > /dev/null
  /usr/bin/python3 -c 'import json, sys; n = len(json.load(open(sys.argv[1])).get("checks", [])); print(f"checks {sys.argv[2]}: {n} compiled")' \
      "$work/$c/runtime.json" "$c"
done
"$linnet" init-weights "$root/examples/llama.ln" -o "$work/w.safetensors" > /dev/null

: > "$work/on.txt"
: > "$work/off.txt"
for r in $(seq "$repeats"); do
  for c in on off; do
    "$linnet" generate "$work/$c" --weights "$work/w.safetensors" --prompt 1,2,3,4,5,6,7,8 \
        --max-new-tokens "$tokens" 2> "$work/log" > "$work/$c.out"
    grep -oE '[0-9.]+ tokens/s' "$work/log" | tail -1 | cut -d' ' -f1 >> "$work/$c.txt"
  done
done
cmp -s "$work/on.out" "$work/off.out" || { echo "the tokens differ between on and off"; exit 1; }
/usr/bin/python3 - "$work" <<'PY'
import statistics, sys
w = sys.argv[1]
r = {c: [float(x) for x in open(f"{w}/{c}.txt") if x.strip()] for c in ("on", "off")}
for c in ("on", "off"):
    print(f"decode tok/s, checks {c:3}: best {max(r[c]):8.1f}  median {statistics.median(r[c]):8.1f}")
print(f"checks on / off (best): {max(r['on']) / max(r['off']):.3f}")
PY

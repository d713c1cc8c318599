#!/usr/bin/env bash
# Llama decode by weight dtype and numerics policy, on this CPU: the default
# config of examples/llama.ln at f32, and at bf16 (-D T=bf16) built under each
# numerics policy (docs/language/08: as-written rounds every bf16 op,
# f32-compute computes in f32 and rounds where values are kept). Each
# artifact decodes the same greedy continuation of its own weights
# (`linnet init-weights --seed 0` in the model's dtype), alternating REPEATS
# times (the machine is shared: best and median). Also prints the bytes of
# weights read per token and, with a bandwidth figure (GB/s, e.g. from
# bench/bandwidth/run.sh) as BW, decode as a fraction of that bound.
#
# usage: bench/llama/numerics.sh [BUILD_DIR] [NEW_TOKENS=64] [REPEATS=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
n=${2:-64}
repeats=${3:-3}
linnet=$build/bin/linnet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

variants=("f32:-D T=f32:as-written" "bf16:-D T=bf16:as-written" "bf16:-D T=bf16:f32-compute")
for v in "${variants[@]}"; do
  IFS=: read -r dt def pol <<< "$v"
  name="$dt-$pol"
  # shellcheck disable=SC2086
  "$linnet" build "$root/examples/llama.ln" $def --numerics "$pol" --target cpu-native -o "$work/$name" >/dev/null
  [[ -f "$work/w-$dt.safetensors" ]] ||
    "$linnet" init-weights "$root/examples/llama.ln" $def --seed 0 -o "$work/w-$dt.safetensors" >/dev/null
  : > "$work/$name.txt"
done

for r in $(seq "$repeats"); do
  line="run $r:"
  for v in "${variants[@]}"; do
    IFS=: read -r dt def pol <<< "$v"
    name="$dt-$pol"
    "$linnet" generate "$work/$name" --weights "$work/w-$dt.safetensors" --prompt 1,2,3 \
        --max-new-tokens "$n" > "$work/$name.out" 2> "$work/$name.err"
    t=$(sed -E -n 's/.* ([0-9.]+) tokens\/s.*/\1/p' "$work/$name.err" | tail -1)
    echo "$t" >> "$work/$name.txt"
    line="$line $name $t"
  done
  echo "$line tokens/s"
done

/usr/bin/python3 - "$work" "${BW:-0}" "${variants[@]}" <<'PY'
import json, statistics, struct, sys
work, bw, variants = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
def per_token(path):
    # Every weight but the embedding table, of which one row is read.
    with open(path, "rb") as f:
        header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
    total = 0
    for name, t in header.items():
        if name == "__metadata__":
            continue
        nbytes = t["data_offsets"][1] - t["data_offsets"][0]
        total += nbytes // t["shape"][0] if "embed" in name else nbytes
    return total
print(f"{'variant':24} {'best':>8} {'median':>8}  bytes/token" + ("   % of bound (best)" if bw else ""))
for v in variants:
    dt, _, pol = v.split(":")
    name = f"{dt}-{pol}"
    xs = [float(x) for x in open(f"{work}/{name}.txt").read().split()]
    b = per_token(f"{work}/w-{dt}.safetensors")
    row = f"{name:24} {max(xs):8.1f} {statistics.median(xs):8.1f}  {b / 1e6:.1f} MB"
    if bw:
        row += f"   {100 * max(xs) * b / (bw * 1e9):.0f}%"
    print(row)
PY

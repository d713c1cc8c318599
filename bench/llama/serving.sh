#!/usr/bin/env bash
# The serving simulation against a measured run (the serving issue, point
# 5): the default Llama built with -D Slots=8 (cpu-native, 2 threads).
#
#  1. Phase costs measured by `linnet profile` (the plain artifact, whole
#     calls): prefill_slot at 8, 16 and 32 tokens; decode_batch (one step
#     of all 8 slots) with every slot at context 8, 48 and 96. Written as
#     linnet.phase-costs/1.
#  2. For each scenario, `linnet generate --prompts --kv-cache slots` (the
#     engine the simulation models) measured, and
#     `linnet simulate-serving` from the costs with the same prompts
#     (list:...) and new tokens: prefill, decode and total time, decode
#     tokens/s, each simulated against measured.
#
# Scenarios: N prompts of 8.. tokens over the 8 slots, all waiting at the
# start (8: one batch; 16 and 24: a prompt takes the slot of a sequence
# that ends, continuous batching).
#
# usage: bench/llama/serving.sh [BUILD_DIR] [NEW=64]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
new=${2:-64}
linnet=$build/bin/linnet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=2
py=/usr/bin/python3

"$linnet" build "$root/examples/llama.ln" -D Slots=8 --target cpu-native -o "$work/llama" > /dev/null
"$linnet" init-weights "$root/examples/llama.ln" -D Slots=8 -o "$work/w.safetensors" > /dev/null
$py -c "
import numpy as np
d = '$work/'
for s in (8, 16, 32): np.save(d + f'p{s}.npy', (np.arange(s) * 31 + 11) % 32000)
np.save(d + 'slot.npy', np.array(3))
np.save(d + 't8.npy', np.arange(8) * 7 + 1)
for c in (8, 48, 96): np.save(d + f'c{c}.npy', np.full(8, c))"
measure() { # OUT-NAME ENTRY ITERATIONS INPUTS...
  local name=$1 entry=$2 iters=$3; shift 3
  "$linnet" profile "$work/llama" --weights "$work/w.safetensors" --entry "$entry" "$@" --iterations "$iters" \
      --warmup 2 -o "$work/m-$name" > /dev/null 2>&1
  $py -c "import json; print(json.load(open('$work/m-$name/report.json'))['validation']['phases'][0]['measured_ns'])"
}
p8=$(measure p8 prefill_slot 10 --input tokens="$work/p8.npy" --input slot="$work/slot.npy")
p16=$(measure p16 prefill_slot 10 --input tokens="$work/p16.npy" --input slot="$work/slot.npy")
p32=$(measure p32 prefill_slot 10 --input tokens="$work/p32.npy" --input slot="$work/slot.npy")
d8=$(measure d8 decode_batch 40 --input tokens="$work/t8.npy" --input pos="$work/c8.npy")
d48=$(measure d48 decode_batch 40 --input tokens="$work/t8.npy" --input pos="$work/c48.npy")
d96=$(measure d96 decode_batch 40 --input tokens="$work/t8.npy" --input pos="$work/c96.npy")
cat > "$work/costs.json" <<JSON
{"schema": "linnet.phase-costs/1",
 "source": "measured by linnet profile (examples/llama.ln -D Slots=8, cpu-native, 2 threads)",
 "prefill": {"entry": "prefill_slot", "points": [[8, $p8], [16, $p16], [32, $p32]]},
 "decode": {"entry": "decode_batch", "slots": 8, "points": [[8, $d8], [48, $d48], [96, $d96]]}}
JSON
printf "phase costs: prefill_slot %.1f / %.1f / %.1f ms at 8 / 16 / 32 tokens; decode_batch step %.1f / %.1f / %.1f ms at context 8 / 48 / 96\n" \
  "$($py -c "print($p8/1e6)")" "$($py -c "print($p16/1e6)")" "$($py -c "print($p32/1e6)")" \
  "$($py -c "print($d8/1e6)")" "$($py -c "print($d48/1e6)")" "$($py -c "print($d96/1e6)")"

printf "%-10s %-9s %22s %22s %22s %24s\n" "prompts" "" "prefill s" "decode s" "total s" "decode tokens/s"
for n in 8 16 24; do
  $py -c "
for i in range($n): print(','.join(str((i * 7919 + k * 31 + 11) % 32000) for k in range(8 + i % 8)))" > "$work/prompts.txt"
  lens=$($py -c "print(','.join(str(8 + i % 8) for i in range($n)))")
  "$linnet" generate "$work/llama" --weights "$work/w.safetensors" --prompts "$work/prompts.txt" \
      --kv-cache slots --max-new-tokens "$new" 2>"$work/gen.err" > /dev/null
  "$linnet" simulate-serving --costs "$work/costs.json" --requests "$n" --prompt-tokens "list:$lens" \
      --new-tokens "fixed:$new" -o "$work/sim.json" > /dev/null
  $py - "$work/gen.err" "$work/sim.json" "$n" <<'PY'
import json, re, sys
m = re.search(r"prefill: (\d+) tokens in ([\d.]+) s; decode: (\d+) tokens in (\d+) steps, ([\d.]+) s", open(sys.argv[1]).read())
s = json.load(open(sys.argv[2]))
mp, md, mt = float(m[2]), float(m[5]), int(m[3])
sp, sd = s["prefill_s"], s["decode_s"]
cell = lambda a, b: f"{b:7.3f} vs {a:7.3f} ({b / a:4.2f}x)"
print(f"{sys.argv[3]:<10} {'sim/meas':<9} {cell(mp, sp):>22} {cell(md, sd):>22} {cell(mp + md, sp + sd):>22} "
      f"{cell(mt / md, s['decode_tokens'] / sd):>24}  steps {s['decode_steps']} vs {m[4]}")
PY
done
echo "target: the simulation within 25% of the measured run (0.75x to 1.25x)"

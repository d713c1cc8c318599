#!/usr/bin/env bash
# Phase plans by length (the serving issue, point 2): the default Llama's
# prefill of S tokens and decode at position P, as `linnet build --emit
# phases --at ... --implementations-from ARTIFACT` predicts one call (each
# task bound to what the artifact's code runs it with), against `linnet
# profile`'s measured call (that artifact, timed by whole calls), 2 threads.
#
# Predictions: with the target's default evaluation evidence, then with
# evidence calibrated by `linnet profile --calibrate` on the --profile
# artifact's decode at position CAL, then on that and its prefill of CAL and
# CAL2 tokens (each run costed by the plan at its extents: --plan; the fit
# gives each implementation with commands enough its own efficiencies);
# runs apart from the measured ones.
#
# usage: bench/profile/phases.sh [BUILD_DIR] [CAL=16] [CAL2=128]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
cal=${2:-16}
cal2=${3:-128}
linnet=$build/bin/linnet
model=$root/examples/llama.ln
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=2
D=(-D MaxSeq=2048)
T=(--target cpu-native)

/usr/bin/python3 -c "
import numpy as np
d = '$work/'
for s in (16, 128, 512): np.save(d + f'tok{s}.npy', (np.arange(s) * 37 % 32000).astype(np.int64))
np.save(d + 'tok1.npy', np.array([42], np.int64))
for p in (16, 128, 1000, $cal): np.save(d + f'pos{p}.npy', np.array(p, np.int64))"
"$linnet" init-weights "$model" "${D[@]}" -o "$work/w.safetensors" > /dev/null
"$linnet" build "$model" "${D[@]}" "${T[@]}" -o "$work/plain" > /dev/null
"$linnet" build "$model" "${D[@]}" "${T[@]}" --profile -o "$work/prof" > /dev/null
# Calibration: the --profile artifact's decode at position CAL and prefill
# of CAL tokens, each costed with the plan at its extents.
"$linnet" build "$model" "${D[@]}" "${T[@]}" --emit portable --at pos="$cal" -o "$work/plan-d.json"  # tasks, not bindings
for s in "$cal" "$cal2"; do
  "$linnet" build "$model" "${D[@]}" "${T[@]}" --emit portable --at S="$s" -o "$work/plan-p$s.json"
  /usr/bin/python3 -c "import numpy as np; np.save('$work/cal-tok$s.npy', (np.arange($s) * 37 % 32000).astype(np.int64))"
  "$linnet" profile "$work/prof" --weights "$work/w.safetensors" --entry prefill --input tokens="$work/cal-tok$s.npy" \
      --iterations 3 --warmup 1 --plan "$work/plan-p$s.json" -o "$work/cal-p$s" > /dev/null 2>&1
done
"$linnet" profile "$work/prof" --weights "$work/w.safetensors" --entry decode --input token="$work/tok1.npy" \
    --input pos="$work/pos$cal.npy" --iterations 20 --warmup 3 --plan "$work/plan-d.json" -o "$work/cal-d" \
    --calibrate "$work/ev-decode.json" > /dev/null
"$linnet" profile "$work/prof" --weights "$work/w.safetensors" --entry decode --input token="$work/tok1.npy" \
    --input pos="$work/pos$cal.npy" --iterations 20 --warmup 3 --plan "$work/plan-d.json" -o "$work/cal-d2" \
    --calibrate "$work/ev-both.json" --calibrate-with "$work/cal-p$cal" --calibrate-with "$work/cal-p$cal2" > /dev/null

measure() { # ENTRY ITERATIONS INPUTS... -> measured ms of one call
  local entry=$1 iters=$2; shift 2
  "$linnet" profile "$work/plain" --weights "$work/w.safetensors" --entry "$entry" "$@" --iterations "$iters" \
      --warmup 1 -o "$work/m" > /dev/null 2>&1
  /usr/bin/python3 -c "import json; print(json.load(open('$work/m/report.json'))['validation']['phases'][0]['measured_ns'] / 1e6)"
}
predict() { # ENTRY AT [EVIDENCE...] -> predicted ms
  local entry=$1 at=$2; shift 2
  "$linnet" build "$model" "${D[@]}" "${T[@]}" --emit phases --at "$at" --implementations-from "$work/plain" "$@" -o - |
    /usr/bin/python3 -c "import json, sys; print(next(p['makespan_ns'] for p in json.load(sys.stdin)['phases'] if p['entry'] == '$entry') / 1e6)"
}
printf "%-16s %11s %21s %21s %21s\n" "phase" "measured" "default evidence" "calibrated: decode" "+ prefill 16, 128"
row() { # LABEL ENTRY AT MEASURED
  local p0 p1 p2
  p0=$(predict "$2" "$3")
  p1=$(predict "$2" "$3" --evidence-policy "$work/ev-decode.json")
  p2=$(predict "$2" "$3" --evidence-policy "$work/ev-both.json")
  /usr/bin/python3 -c "
m = $4
cells = ''.join(f'{p:11.2f} ms ({p / m:4.2f}x)' for p in ($p0, $p1, $p2))
print(f'{\"$1\":<16} {m:8.2f} ms {cells}')"
}
for s in 16 128 512; do
  row "prefill S=$s" prefill "S=$s" "$(measure prefill 3 --input tokens="$work/tok$s.npy")"
done
for p in 16 128 1000; do
  row "decode P=$p" decode "pos=$p" "$(measure decode 20 --input token="$work/tok1.npy" --input pos="$work/pos$p.npy")"
done
echo "target: calibrated predictions within 25% of measured (0.75x to 1.25x)"

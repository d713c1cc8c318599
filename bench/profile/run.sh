#!/usr/bin/env bash
# What `linnet profile` measures and predicts for examples/llama.ln (default
# config: 8 layers, Hidden 512, Vocab 32000, f32) on this machine:
#
#  1. profile overhead: median decode call of the plain artifact (timed by
#     whole calls) against the --profile artifact (every command timed);
#  2. prediction: the decode phase's predicted time with the default
#     evaluation evidence, then with evidence calibrated from a profile at
#     pos 0, each against the measured decode at pos POS (not the
#     calibration run);
#  3. build time of the plain and the --profile artifact, and the time of
#     the gf pass stage (what a second pipeline run used to add).
#
# usage: bench/profile/run.sh [BUILD_DIR] [ITERATIONS=50] [POS=128]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
iters=${2:-50}
pos=${3:-128}
linnet=$build/bin/linnet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3

$py -c "import numpy as np; d='$work/'; np.save(d+'tok.npy', np.array([5])); \
        np.save(d+'pos0.npy', np.array(0)); np.save(d+'pos.npy', np.array($pos))"
"$linnet" init-weights "$root/examples/llama.ln" --seed 0 -o "$work/w.safetensors" > /dev/null
build_s() { /usr/bin/time -f "%e" -o "$work/t" "$linnet" build "$root/examples/llama.ln" --target cpu-native "$@" > /dev/null; cat "$work/t"; }
plain_s=$(build_s -o "$work/plain")
prof_s=$(build_s --profile -o "$work/prof")
gf_ms=$("$linnet" build "$root/examples/llama.ln" --target cpu-native -o "$work/timed" --timing 2>&1 |
        awk '/gf passes to Task IR/ {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/) {print $i * 1000; exit}}')

run() { # ARTIFACT OUT POSFILE [more flags]
  local art=$1 out=$2 p=$3; shift 3
  "$linnet" profile "$art" --weights "$work/w.safetensors" --entry decode --input token="$work/tok.npy" \
      --input pos="$p" --iterations "$iters" --warmup 5 -o "$out" "$@" 2>/dev/null
}
run "$work/plain" "$work/p-plain" "$work/pos.npy" > /dev/null
run "$work/prof" "$work/p-cal" "$work/pos0.npy" --calibrate "$work/evidence.json" > /dev/null
run "$work/prof" "$work/p-default" "$work/pos.npy" > /dev/null
run "$work/prof" "$work/p-calibrated" "$work/pos.npy" --evidence-policy "$work/evidence.json" > /dev/null

$py - "$work" "$plain_s" "$prof_s" "$gf_ms" "$pos" <<'PY'
import json, sys
w, plain_s, prof_s, gf_ms, pos = sys.argv[1:]
def phase(d):
    v = json.load(open(f"{w}/{d}/report.json"))["validation"]["phases"]
    return next(p for p in v if p["entry"] == "decode")
plain, default, cal = phase("p-plain"), phase("p-default"), phase("p-calibrated")
ev = json.load(open(f"{w}/evidence.json"))["evaluation"]
print(f"decode at pos {pos}, median of the timed calls:")
print(f"  plain artifact     {plain['measured_ns']/1e6:8.3f} ms per call")
print(f"  --profile artifact {default['measured_ns']/1e6:8.3f} ms per call "
      f"({(default['measured_ns']/plain['measured_ns']-1)*100:+.1f}% overhead), "
      f"{default['attributed_ns']/default['measured_ns']*100:.1f}% inside timed commands")
for name, p in (("default evidence   ", default), ("calibrated (pos 0) ", cal)):
    print(f"  predicted, {name} {p['predicted_ns']/1e6:8.3f} ms vs measured {p['measured_ns']/1e6:.3f} ms: "
          f"{(p['predicted_ns']/p['measured_ns']-1)*100:+.1f}%")
print(f"  calibrated evidence: compute {ev['compute_efficiency']:.4f}, memory {ev['memory_efficiency']:.4f} "
      f"of the target's peaks, {ev['launch_overhead_ns']:.0f} ns per command")
print(f"build: plain {plain_s} s, --profile {prof_s} s; the gf pass stage (run once) {float(gf_ms):.0f} ms")
PY

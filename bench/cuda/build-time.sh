#!/usr/bin/env bash
# Build time of the default Llama (examples/llama.ln) for the CUDA target
# against the CPU target, on this machine (the CUDA issue's figure: cuda <
# 2x cpu). Each build is timed N times (default 3), the median printed.
#
#   bench/cuda/build-time.sh [LINNET] [N]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
linnet=${1:-$root/build/bin/linnet}
n=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A secs
for target in cpu cuda; do
  for i in $(seq "$n"); do
    s=$(date +%s.%N)
    "$linnet" build "$root/examples/llama.ln" --target "$target" -o "$tmp/$target-$i" >/dev/null
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f\n", e - s}'
  done > "$tmp/$target.times"
  secs[$target]=$(median < "$tmp/$target.times")
  echo "llama build --target $target: ${secs[$target]} s (median of $n)"
done
ratio=$(awk -v a="${secs[cuda]}" -v b="${secs[cpu]}" 'BEGIN {printf "%.2f", a / b}')
echo "cuda/cpu: ${ratio}x (target < 2x)"

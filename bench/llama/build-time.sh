#!/usr/bin/env bash
# `linnet build examples/llama.ln --target cpu` time for Layers = 2, 8, 32
# (other sizes default: Hidden 512, Inter 1376, Heads 8, KvHeads 4, Vocab
# 32000, MaxSeq 256, f32) against the target: roughly flat in depth, and
# 32 layers under 10 s. Each size is built REPEATS times; prints the best
# and median wall time, and the best user + system CPU time (the machine is
# shared: CPU time is the steadier figure when other processes compete).
#
# usage: bench/llama/build-time.sh [BUILD_DIR] [REPEATS=3] [LAYERS="2 8 32"]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
repeats=${2:-3}
layers=${3:-"2 8 32"}
linnet=$build/bin/linnet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
target=10

printf "%-7s %10s %10s %10s  %s\n" layers "best s" "median s" "cpu s" "target: < ${target} s at 32 layers"
status=0
for l in $layers; do
  : > "$work/times"
  for r in $(seq "$repeats"); do
    rm -rf "$work/art"
    /usr/bin/time -f "%e %U %S" -o "$work/t" \
        "$linnet" build "$root/examples/llama.ln" --target cpu -D "Layers=$l" -o "$work/art" \
        > "$work/out" 2>&1 || { cat "$work/out"; exit 1; }
    cat "$work/t" >> "$work/times"
  done
  read -r best median cpu < <(/usr/bin/python3 -c '
import statistics, sys
rows = [[float(x) for x in line.split()] for line in open(sys.argv[1]) if line.strip()]
wall = [r[0] for r in rows]
print(f"{min(wall):.2f} {statistics.median(wall):.2f} {min(r[1] + r[2] for r in rows):.2f}")
' "$work/times")
  verdict=""
  if [ "$l" = 32 ]; then
    verdict=$(/usr/bin/python3 -c "import sys; print('ok' if float(sys.argv[1]) < $target else 'OVER')" "$best")
    [ "$verdict" = ok ] || status=1
  fi
  printf "%-7s %10s %10s %10s  %s\n" "$l" "$best" "$median" "$cpu" "$verdict"
done
exit $status

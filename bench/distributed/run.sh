#!/usr/bin/env bash
# GCN aggregation (bench/distributed/agg.ln, F = 64) on an R-MAT graph with
# 2^SCALE nodes and EDGES edges, on each rank count of RANKS
# (linnet run --ranks N: mpirun, oversubscribed past the cores): time per
# layer (the slowest rank, REPEAT calls), bytes each rank sends per layer
# against the halo lower bound (the distinct remote rows its edges read, x
# the row size), and the interior/exchange overlap; every run's result
# is checked against the one-rank run. Then 64 ranks simulated: the
# planning products' SimulationTrace of one rank's layer, with this graph's
# sizes and exact halo, and the costs measured per command on the largest
# rank count that fits the cores (bench/distributed/simulate.py).
#
# A RANKS entry N:T runs N ranks of T OpenMP threads each (default: the
# cores divided by N, at least 1): "1:1 1 2 4" adds a one-thread baseline.
#
# usage: bench/distributed/run.sh [BUILD_DIR] [SCALE=20] [EDGES=16777216] [REPEAT=5] [RANKS="1:1 1 2 4"]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
scale=${2:-20}
edges=${3:-16777216}
repeat=${4:-5}
ranks=${5:-"1:1 1 2 4"}
linnet=$build/bin/linnet
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cores=$(nproc)

$py "$root/bench/distributed/rmat.py" "$work" "$scale" "$edges" 64 1
runs=""
for spec in $ranks; do
  n=${spec%%:*}
  threads=$(( cores / n > 0 ? cores / n : 1 ))
  [[ $spec == *:* ]] && threads=${spec#*:}
  id=${n}x$threads
  runs="$runs $id"
  [[ -d $work/agg$n ]] || "$linnet" build "$root/bench/distributed/agg.ln" --ranks "$n" -o "$work/agg$n" > /dev/null
  OMP_NUM_THREADS=$threads "$linnet" run "$work/agg$n" --ranks "$n" --entry layer --repeat "$repeat" \
      --relation g="$work/row_ptr.npy,$work/col_idx.npy" --input x="$work/x.npy" --input weight="$work/weight.npy" \
      --output "$work/y$id.npy" --dist-stats 2> "$work/stats$id.txt"
done
$py - "$work" "$repeat" "$runs" <<'PY'
import re, sys
import numpy as np
w, repeat, runs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
rp, ci = np.load(f"{w}/row_ptr.npy"), np.load(f"{w}/col_idx.npy")
n, e = len(rp) - 1, len(ci)
row_bytes = 64 * 4
ref = np.load(f"{w}/y{runs[0]}.npy")

def halo(parts):
    """Distinct remote sources each contiguous part reads (its ghosts)."""
    bounds = [p * (n // parts) + min(p, n % parts) for p in range(parts + 1)]
    out = []
    for p in range(parts):
        lo, hi = bounds[p], bounds[p + 1]
        cols = np.unique(ci[rp[lo]:rp[hi]])
        out.append(int(((cols < lo) | (cols >= hi)).sum()))
    return bounds, out

print(f"R-MAT {n} nodes, {e} edges, F = 64 f32; {repeat} calls per run")
print(f"{'ranks':>5} {'threads':>7} {'s/layer':>8} {'vs first':>8} {'MB sent/rank/layer':>19} {'lower bound MB':>14} "
      f"{'interior s':>10} {'wait s':>7} {'boundary s':>10}")
base = None
for run in runs:
    r, threads = (int(x) for x in run.split("x"))
    text = open(f"{w}/stats{run}.txt").read()
    rows = re.findall(r"rank (\d+): ([\d.]+) s for \d+ call\(s\); sent (\d+) bytes; kernels ([\d.]+) s: interior "
                      r"([\d.]+) s while the exchange was in flight, then waited ([\d.]+) s, boundary ([\d.]+) s", text)
    if len(rows) != r:
        sys.exit(f"{r} ranks: expected {r} stats lines:\n{text}")
    got = np.load(f"{w}/y{run}.npy")
    if not np.array_equal(ref, got):
        sys.exit(f"{run}: the result differs from {runs[0]}")
    per_layer = max(float(x[1]) for x in rows) / repeat
    sent = [int(x[2]) / repeat / 1e6 for x in rows]
    _, ghosts = halo(r)
    bound = [g * row_bytes / 1e6 for g in ghosts]
    interior = max(float(x[4]) for x in rows) / repeat
    wait = max(float(x[5]) for x in rows) / repeat
    boundary = max(float(x[6]) for x in rows) / repeat
    base = base or per_layer
    print(f"{r:>5} {threads:>7} {per_layer:>8.3f} {base / per_layer:>7.2f}x {np.mean(sent):>19.1f} {np.mean(bound):>14.1f} "
          f"{interior:>10.3f} {wait:>7.3f} {boundary:>10.3f}")

PY

# Calibrate on the largest run with a core per rank, then simulate.
cal=""
for id in $runs; do
  n=${id%x*}; t=${id#*x}
  (( n > 1 && n * t <= cores )) && cal=$id
done
if [[ -n $cal ]]; then
  $py "$root/bench/distributed/simulate.py" "$linnet" "$build/bin/linnet-opt" "$work" "$work/stats$cal.txt" \
      "${cal%x*}" "$repeat" 1 2 4 8 16 32 64
fi

#!/usr/bin/env bash
# Parser throughput: lex + parse 10 MB of generated linnet source with
# `linnet check --syntax-only`, best of 5 runs. Target (issue 2): under 1 s.
# Usage: bench/parse/run.sh [MEGABYTES]   (build first: scripts/build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mb=${1:-10}
src=$(mktemp --suffix=.ln)
trap 'rm -f "$src"' EXIT
/usr/bin/python3 "$root/bench/parse/gen.py" "$mb" "$src"
/usr/bin/python3 - "$root/build/bin/linnet" "$src" <<'PY'
import os, subprocess, sys, time
linnet, src = sys.argv[1], sys.argv[2]
size = os.path.getsize(src)
times = []
for _ in range(5):
    t0 = time.perf_counter()
    subprocess.run([linnet, "check", "--syntax-only", src], check=True, stdout=subprocess.DEVNULL)
    times.append(time.perf_counter() - t0)
best = min(times)
print(f"parse {size / 1e6:.1f} MB: best {best:.3f} s of 5 (median {sorted(times)[2]:.3f} s), "
      f"{size / 1e6 / best:.1f} MB/s; target < 1 s: {'PASS' if best < 1.0 else 'FAIL'}")
PY

#!/bin/sh
# Times linnet-opt's four pipelines (Domain, Iter, Kernel, Task) over a
# generated module with 1,000 gf.apply ops; the budget is 1 s per pipeline.
#   bench/mlir/run.sh [--applies N] [--repeat R] [--opt path/to/linnet-opt]
exec /usr/bin/python3 "$(dirname "$0")/bench.py" "$@"

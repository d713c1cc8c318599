#!/usr/bin/env python3
"""Time linnet-opt's four pipelines on a module with many gf.apply ops.

Generates a module with N functions, each the distributed-plan fixture's
computation (a CSR relation with placement metadata and one gf.apply), so
every stage does its full work N times: lowering, schedule derivation and
task planning with halo. Prints the best and median wall time of each
pipeline (process start, parse, passes, verification and printing included).
Python 3 standard library only.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PIPELINES = [
    ("domain (parse+verify+print)", []),
    ("iter", ["-gf-lower-domain-to-iter"]),
    ("kernel", ["-gf-lower-domain-to-iter", "-gf-lower-iter-to-kernel",
                "-gf-select-kernel-schedule"]),
    ("task", ["-gf-lower-domain-to-iter", "-gf-lower-iter-to-kernel",
              "-gf-select-kernel-schedule", "-gf-plan-distributed-tasks"]),
]

REDUCER = '''"gf.reducer"() <{sym_name = "sum", kind = "algebraic", associative = true, commutative = true, message_types = [f32], state_types = [f32], result_types = [f32]}> ({
  %z = arith.constant 0.0 : f32
  "gf.reducer_yield"(%z) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%a: f32, %b: f32):
  %s = arith.addf %a, %b : f32
  "gf.reducer_yield"(%s) : (f32) -> ()
}, {
^bb0(%s: f32):
  "gf.reducer_yield"(%s) : (f32) -> ()
}) : () -> ()
'''

FUNC = '''func.func @f{i}(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {{
  %r = "gf.relation"(%rp, %ci) <{{relation_id = "g{i}", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = {n}, num_dst = {n}, degree_min = 4, degree_max = {dmax}, mesh_shape = array<i64: 2, 4>, mesh_axis = 1, partition_balance = "edges", halo_depth = -1}}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x, %w) <{{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}}> ({{
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }}) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}}
'''


def generate(n):
    # Vary sizes and degree bounds so schedules differ between functions.
    parts = [REDUCER]
    for i in range(n):
        parts.append(FUNC.format(i=i, n=1024 * (1 + i % 4), dmax=16 << (i % 4)))
    return "\n".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--opt", default=os.path.join(ROOT, "build", "bin", "linnet-opt"))
    parser.add_argument("--applies", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not os.path.exists(args.opt):
        sys.exit(f"bench: {args.opt} not found; build the linnet-opt target first")

    with tempfile.TemporaryDirectory() as tmp:
        module = os.path.join(tmp, "applies.mlir")
        with open(module, "w") as f:
            f.write(generate(args.applies))
        print(f"linnet-opt, {args.applies} gf.apply ops "
              f"({os.path.getsize(module) // 1024} KiB input), "
              f"best/median of {args.repeat} runs, wall time")
        worst = 0.0
        for name, passes in PIPELINES:
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                subprocess.run([args.opt, module, *passes, "-o", os.devnull],
                               check=True)
                times.append(time.perf_counter() - start)
            worst = max(worst, min(times))
            print(f"  {name:30s} {min(times) * 1000:8.1f} ms  "
                  f"{statistics.median(times) * 1000:8.1f} ms")
        verdict = "PASS" if worst < 1.0 else "FAIL"
        print(f"slowest pipeline (best run): {worst * 1000:.1f} ms "
              f"-> {verdict} (budget 1000 ms)")
        return 0 if worst < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Predicts GCN aggregation at many ranks with the planning products'
SimulationTrace, its costs calibrated on a measured distributed run.

usage: simulate.py LINNET LINNET_OPT WORK STATS CAL_RANKS REPEAT RANKS...

WORK holds the graph (row_ptr.npy, col_idx.npy; F = 64 f32 rows); STATS is
the `linnet run --ranks CAL_RANKS --repeat REPEAT --dist-stats` output of
bench/distributed/agg.ln, whose per-command lines give the measured seconds
of each plan command (cmd.layer.k0.*) per call, averaged over the ranks.

For each rank count P this writes the aggregation as Domain IR with the
graph's sizes (N entities, E/P edges per part as the degree bounds, a mesh
of P parts), runs the task pipeline (linnet-opt -linnet-gf-to-tasks), sets
the halo to the exact ghost count of the largest contiguous part of this
graph (the plan alone only bounds it), and builds the SimulationTrace
(linnet build --emit trace) with a target whose interconnect and an
evidence file whose efficiencies reproduce the measured commands at
CAL_RANKS:
  - memory efficiency: the kernels' and the halo copies' measured seconds
    against their roofline memory time (summed over the four compute/copy
    commands);
  - communication: the exchange's measured seconds against its bytes.
The trace's makespan is one rank's time per layer: its halo pack, the
exchange overlapping the interior rows, unpack, boundary rows.
"""
import json
import re
import subprocess
import sys
import tempfile

import numpy as np

linnet, linnet_opt, work, stats_file = sys.argv[1:5]
cal_ranks, repeat = int(sys.argv[5]), int(sys.argv[6])
rank_counts = [int(r) for r in sys.argv[7:]]
ROW = 64 * 4
root = subprocess.run(["git", "-C", sys.path[0], "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                      check=True).stdout.strip()

rp, ci = np.load(f"{work}/row_ptr.npy"), np.load(f"{work}/col_idx.npy")
n, e = len(rp) - 1, len(ci)


def largest_part(parts):
    """Rows, edges and exact ghosts of the part with the most edges."""
    bounds = [p * (n // parts) + min(p, n % parts) for p in range(parts + 1)]
    best = None
    for p in range(parts):
        lo, hi = bounds[p], bounds[p + 1]
        cols = np.unique(ci[rp[lo]:rp[hi]])
        ghosts = int(((cols < lo) | (cols >= hi)).sum())
        cand = (int(rp[hi] - rp[lo]), hi - lo, ghosts)
        best = max(best or cand, cand)
    edges, rows, ghosts = best
    return rows, edges, ghosts


def domain_ir(parts, rows, edges):
    deg_lo, deg_hi = edges // rows, -(-edges // rows)
    return f'''"gf.reducer"() <{{associative = true, commutative = true, kind = "algebraic", message_types = [tensor<64xf32>], result_types = [tensor<64xf32>], state_types = [tensor<64xf32>], sym_name = "sum_f32x64"}}> ({{
  %cst = arith.constant dense<0.000000e+00> : tensor<64xf32>
  "gf.reducer_yield"(%cst) : (tensor<64xf32>) -> ()
}}, {{
^bb0(%a: tensor<64xf32>):
  "gf.reducer_yield"(%a) : (tensor<64xf32>) -> ()
}}, {{
^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
  %s = arith.addf %a, %b : tensor<64xf32>
  "gf.reducer_yield"(%s) : (tensor<64xf32>) -> ()
}}, {{
^bb0(%a: tensor<64xf32>):
  "gf.reducer_yield"(%a) : (tensor<64xf32>) -> ()
}}) : () -> ()
func.func @layer(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?x64xf32>, %w: tensor<?xf32>) -> tensor<?x64xf32> {{
  %g = "gf.relation"(%rp, %ci) <{{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = {n}, num_dst = {n}, degree_min = {deg_lo}, degree_max = {deg_hi}, mesh_shape = array<i64: {parts}>, mesh_axis = 0}}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %y = "gf.apply"(%g, %x, %w) <{{deterministic = false, effects = ["read", "read"], input_names = ["src0", "edge1"], input_roles = ["src", "edge"], input_segment_sizes = array<i64: 2>, reducers = [@sum_f32x64], region_kinds = array<i64: 0>, snapshot_versions = array<i64: 0, 0>}}> ({{
  ^bb0(%xv: tensor<64xf32>, %wv: f32):
    %splat = tensor.splat %wv : tensor<64xf32>
    %m = arith.mulf %xv, %splat : tensor<64xf32>
    "gf.yield"(%m) : (tensor<64xf32>) -> ()
  }}) : (!gf.relation, tensor<?x64xf32>, tensor<?xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}}
'''


def task_ir(tmp, parts):
    rows, edges, ghosts = largest_part(parts)
    src = f"{tmp}/agg{parts}.mlir"
    open(src, "w").write(domain_ir(parts, rows, edges))
    tasks = subprocess.run([linnet_opt, src, "-linnet-gf-to-tasks"], capture_output=True, text=True, check=True).stdout
    # The exact halo of this graph's largest part, where the plan has bounds.
    exact = ghosts * ROW
    tasks = re.sub(r"ghost_entities = -?\d+ : i64", f"ghost_entities = {ghosts} : i64", tasks)
    tasks = re.sub(r'capacity_bytes = \d+ : i64, device = "ghost"', f'capacity_bytes = {exact} : i64, device = "ghost"',
                   tasks)
    tasks = re.sub(r'(gf_task.halo_(?:pack|exchange)"\([^)]*\) <\{)bytes = \d+ : i64', rf"\g<1>bytes = {exact} : i64",
                   tasks)
    out = f"{tmp}/tasks{parts}.mlir"
    open(out, "w").write(tasks)
    return out, rows, edges, ghosts


def products(tmp, tasks, target, evidence, what):
    path = f"{tmp}/{what}.{abs(hash((tasks, target, evidence)))}.json"
    cmd = [linnet, "build", tasks, "--target", target, "--emit", what, "-o", path]
    if evidence:
        cmd += ["--evidence-policy", evidence]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.load(open(path))


# Measured seconds per call of each command, averaged over the ranks.
measured = {}
for cmd, runs, mean in re.findall(r"command (\S+): (\d+) run\(s\) on rank 0, ([\d.]+) s mean", open(stats_file).read()):
    measured[cmd] = float(mean) / max(1, int(runs))
kinds = {k: f"cmd.layer.k0.{k}" for k in ("halo-pack.src0", "halo-exchange.src0", "halo-unpack.src0", "interior",
                                          "boundary")}
missing = [c for c in kinds.values() if c not in measured]
if missing:
    sys.exit(f"{stats_file}: no measured time for {', '.join(missing)}")

with tempfile.TemporaryDirectory() as tmp:
    target = json.load(open(f"{root}/docs/targets/x86-64-avx2.json"))
    tasks_cal, *_ = task_ir(tmp, cal_ranks)
    portable = products(tmp, tasks_cal, "cpu", None, "portable")
    facts = {t["id"].replace("task.", "cmd.", 1): t for t in portable["tasks"]}

    def q(v):
        return float(v["upper"] if isinstance(v, dict) else v)

    # Memory side of each compute/copy command at full bandwidth: fit one
    # efficiency (seconds measured = seconds at full bandwidth / eff).
    bw = target["device"]["memory_bandwidth_bytes_per_s"]
    xs, ys = [], []
    for k in ("halo-pack.src0", "halo-unpack.src0", "interior", "boundary"):
        f = facts[kinds[k]]["facts"]
        xs.append((q(f["read_bytes"]) + q(f["write_bytes"])) / bw)
        ys.append(measured[kinds[k]])
    xs, ys = np.array(xs), np.array(ys)
    # The ratio of the sums: the four commands' simulated seconds add up to
    # the measured ones (the copies are slower per byte than the kernels:
    # unpack also places the owned rows beside the ghosts, which the plan's
    # facts do not count).
    mem_eff = float(min(1.0, xs.sum() / ys.sum()))
    # The exchange: its bytes over the target's link, as measured.
    ex = facts[kinds["halo-exchange.src0"]]["facts"]
    link = target["interconnect"]
    comm_eff = float(min(1.0, q(ex["message_bytes"]) / link["bandwidth_bytes_per_s"] /
                     max(measured[kinds["halo-exchange.src0"]] - link["latency_ns"] * 1e-9, 1e-9)))
    evidence = json.load(open(f"{root}/docs/targets/policies/evidence-default.json"))
    for side in ("planning", "evaluation"):
        evidence[side].update({"memory_efficiency": mem_eff, "communication_efficiency": comm_eff,
                               "revision": f"{side}-evidence/bench-distributed-{cal_ranks}-ranks",
                               "source": f"bench/distributed/simulate.py: fitted to the commands measured on "
                                         f"{cal_ranks} ranks"})
    evidence["id"] = f"bench-distributed-{cal_ranks}"
    ev_path = f"{tmp}/evidence.json"
    json.dump(evidence, open(ev_path, "w"))

    print(f"SimulationTrace of one rank's layer (linnet build --emit trace), calibrated on {cal_ranks} ranks: "
          f"memory efficiency {mem_eff:.3f} of {bw / 1e9:.1f} GB/s, exchange {comm_eff * link['bandwidth_bytes_per_s'] / 1e9:.2f} GB/s")
    print(f"{'ranks':>5} {'rows/part':>9} {'edges (largest part)':>20} {'ghost rows':>10} {'halo MB':>8} "
          f"{'predicted s/layer':>17}")
    first, sim = None, {}
    for parts in sorted(set(rank_counts + [cal_ranks])):
        tasks, rows, edges, ghosts = task_ir(tmp, parts)
        trace = products(tmp, tasks, "cpu", ev_path, "trace")
        t = trace["end_ns"] * 1e-9
        first = first or t
        note = " (calibration run)" if parts == cal_ranks else ""
        print(f"{parts:>5} {rows:>9} {edges:>20} {ghosts:>10} {ghosts * ROW / 1e6:>8.1f} {t:>17.4f}{note}")
        if parts == cal_ranks:
            begin = {}
            for ev in trace["events"]:
                if ev["kind"] == "begin":
                    begin[ev["command"]] = ev["time_ns"]
                elif ev["kind"] == "end":
                    sim[ev["command"]] = (ev["time_ns"] - begin[ev["command"]]) * 1e-9
    print(f"per command at {cal_ranks} ranks, simulated / measured s:",
          ", ".join(f"{k.split('.')[0]} {sim.get(c, 0):.4f} / {measured[c]:.4f}" for k, c in kinds.items()))

// The distributed-plan fixture: one weighted-neighbor aggregation,
//   out[d] = sum over edges e = (s -> d) of x[s] * weight[e],
// over a 1,024-entity CSR relation with degrees 4..16 whose destinations are
// placed on axis 1 of a 2x4 mesh. Hand-authored Domain IR; each RUN line is
// one stage of docs/ir-by-example.md and must print exactly the listing in
// Inputs/ (byte for byte: `diff` fails on any difference).
//
//
// Each stage's output is a valid input that round-trips unchanged:
//
// And each stage passes the phase verifier for that stage:

// The sum algebra: identity 0, lift = id, combine = +, finalize = id.
"gf.reducer"() <{sym_name = "sum", kind = "algebraic",
                 associative = true, commutative = true,
                 message_types = [f32], state_types = [f32],
                 result_types = [f32]}> ({
  %zero = arith.constant 0.0 : f32
  "gf.reducer_yield"(%zero) : (f32) -> ()
}, {
^bb0(%message: f32):
  "gf.reducer_yield"(%message) : (f32) -> ()
}, {
^bb0(%lhs: f32, %rhs: f32):
  %sum = arith.addf %lhs, %rhs : f32
  "gf.reducer_yield"(%sum) : (f32) -> ()
}, {
^bb0(%state: f32):
  "gf.reducer_yield"(%state) : (f32) -> ()
}) : () -> ()

func.func @distributed(%row_ptr: tensor<?xi64>, %col_idx: tensor<?xi64>,
                       %x: tensor<?xf32>, %weight: tensor<?xf32>)
    -> tensor<?xf32> {
  // Topology and facts; mesh_shape/mesh_axis are the placement metadata.
  %relation = "gf.relation"(%row_ptr, %col_idx) <{
      relation_id = "mesh", version = 3, realization = "materialized",
      origin = "external", lifecycle = "frozen",
      num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16,
      mesh_shape = array<i64: 2, 4>, mesh_axis = 1,
      partition_balance = "edges", halo_depth = -1
  }> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation

  // One message per edge: x[src] * weight[edge], summed per destination.
  %out = "gf.apply"(%relation, %x, %weight) <{
      reducers = [@sum], region_kinds = array<i64: 0>,
      input_segment_sizes = array<i64: 2>,
      snapshot_versions = array<i64: 3, 3>,
      effects = ["read", "read"], deterministic = false,
      input_roles = ["src", "edge"], input_names = ["x", "weight"]
  }> ({
  ^bb0(%source: f32, %edge: f32):
    %message = arith.mulf %source, %edge : f32
    "gf.yield"(%message) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %out : tensor<?xf32>
}

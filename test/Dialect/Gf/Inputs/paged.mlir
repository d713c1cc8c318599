// A paged KV cache's read as a relation: row d (a sequence) has lengths[d]
// entries, the j-th in slot table[d, j / 4] * 4 + j % 4 of a pool of pages
// of 4 slots; out[d] = sum over the row of x[slot] * (1 + slot).
"gf.reducer"() <{sym_name = "sum", kind = "algebraic", associative = true, commutative = true, message_types = [f32], state_types = [f32], result_types = [f32]}> ({
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

func.func @paged(%table: tensor<?x3xi32>, %lengths: tensor<?xi64>, %x: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%table, %lengths) <{relation_id = "kv", version = 0, realization = "paged", origin = "external", lifecycle = "mutable", num_src = -1, num_dst = -1, page_size = 4}> : (tensor<?x3xi32>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "src"], input_names = ["x", "w"]}> ({
  ^bb0(%xv: f32, %wv: f32):
    %m = arith.mulf %xv, %wv : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

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

// A relation with no destinations: the apply's result is empty.
// (tensor's own canonicalization then makes the zero size static.)
func.func @empty_relation(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"() <{relation_id = "none", version = 0, realization = "dense", origin = "derived", lifecycle = "frozen", num_src = 8, num_dst = 0}> : () -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// An unused apply that only reads is dead; one that writes is kept.
func.func @dead_apply(%x: tensor<?xf32>) {
  %r = "gf.relation"() <{relation_id = "all", version = 0, realization = "dense", origin = "derived", lifecycle = "frozen", num_src = 8, num_dst = 8}> : () -> !gf.relation
  %kept = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read-write"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  %dead = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return
}

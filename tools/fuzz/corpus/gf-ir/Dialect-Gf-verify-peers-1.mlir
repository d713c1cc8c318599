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
func.func @traverse_before_relation(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %t = "gf_iter.traverse"(%r, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["edge"], input_names = ["w"], coordinate_hierarchy = "compressed-row", ordering = "destination-major"}> ({
  ^bb0(%we: f32):
    "gf_iter.yield"(%we) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  // expected-error @below {{requires attribute 'realization'}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, origin = "external", lifecycle = "frozen", num_src = 100, num_dst = 100}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return %t : tensor<?xf32>
}

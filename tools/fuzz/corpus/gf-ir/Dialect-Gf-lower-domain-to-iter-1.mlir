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
// A relation passed in as an argument has no visible realization.
func.func @opaque(%r: !gf.relation, %x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'gf.apply' op cannot choose a coordinate hierarchy: its relation is not defined by a gf.relation in this function}}
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

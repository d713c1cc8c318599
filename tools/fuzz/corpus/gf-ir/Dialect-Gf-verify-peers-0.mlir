// A verifier that reads another op (its peer) must not assume that op is
// verified: ops are verified in block order and a use may precede its
// definition, so the peer below still lacks an attribute when the op using it
// is verified. Each case used to dereference null in linnet-opt (SIGSEGV);
// now the peer's own verifier reports it.

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
func.func @apply_before_relation(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %a = "gf.apply"(%r, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = true, input_roles = ["src"], input_names = ["w"]}> ({
  ^bb0(%we: f32):
    "gf.yield"(%we) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  // expected-error @below {{requires attribute 'num_src'}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_dst = 100}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return %a : tensor<?xf32>
}

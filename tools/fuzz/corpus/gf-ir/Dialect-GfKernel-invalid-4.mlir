// Segments cannot name more inputs than operands.
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
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'gf_kernel.launch' op input_segment_sizes name 5 field inputs but the op has only 4 operands}}
  %o = "gf_kernel.launch"(%rp, %ci, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 5>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], traversal = "csr-row", num_rows = 1024, degree_min = 4, degree_max = 16}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_kernel.yield"(%m) : (f32) -> ()
  }) : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// RUN: linnet-opt %s -split-input-file -verify-diagnostics
//
// Verifier diagnostics of gf_kernel.launch.

// A schedule is all or nothing.
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
  // expected-error @+1 {{'gf_kernel.launch' op has a partial schedule: 'block_rows' is set but 'schedule_kind' is not}}
  %o = "gf_kernel.launch"(%rp, %ci, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], traversal = "csr-row", num_rows = 1024, degree_min = 4, degree_max = 16, block_rows = 16}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_kernel.yield"(%m) : (f32) -> ()
  }) : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Tile sizes are positive.
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
  // expected-error @+1 {{'gf_kernel.launch' op has non-positive num_warps = 0}}
  %o = "gf_kernel.launch"(%rp, %ci, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], traversal = "csr-row", num_rows = 1024, degree_min = 4, degree_max = 16, schedule_kind = "bounded-ragged-row-neighbor", block_rows = 16, block_neighbors = 16, num_warps = 0, pipeline_stages = 1, execution_roles = ["workgroup.destination-rows"], instruction_contracts = ["masked-memory"], schedule_handoffs = ["reduce.subgroup"], schedule_resources = ["input.global.read"], target_contract = "provider-neutral-v1"}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_kernel.yield"(%m) : (f32) -> ()
  }) : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Traversals are a closed set.
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
  // expected-error @+1 {{'gf_kernel.launch' op has unknown traversal 'spiral'; expected csr-row, dense-row, triangular-row, radius-cell or knn-row}}
  %o = "gf_kernel.launch"(%rp, %ci, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], traversal = "spiral", num_rows = 1024, degree_min = 4, degree_max = 16}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_kernel.yield"(%m) : (f32) -> ()
  }) : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// The strings are the IR spelling, not the C++ enumerators' names.
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
  // expected-error @+1 {{'gf_kernel.launch' op has unknown traversal 'CsrRow'; expected csr-row, dense-row, triangular-row, radius-cell or knn-row}}
  %o = "gf_kernel.launch"(%rp, %ci, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], traversal = "CsrRow", num_rows = 1024, degree_min = 4, degree_max = 16}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_kernel.yield"(%m) : (f32) -> ()
  }) : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// A CSR traversal reads row_ptr and col_idx first.
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
  // expected-error @+1 {{'gf_kernel.launch' op with traversal 'csr-row' reads 2 topology buffer(s) before its field inputs, got 1}}
  %o = "gf_kernel.launch"(%rp, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], traversal = "csr-row", num_rows = 1024, degree_min = 4, degree_max = 16}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_kernel.yield"(%m) : (f32) -> ()
  }) : (tensor<?xi64>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

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

// -----

// Degree bounds are ordered.
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
  // expected-error @+1 {{'gf_kernel.launch' op has degree_min = 20 greater than degree_max = 16}}
  %o = "gf_kernel.launch"(%rp, %ci, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], traversal = "csr-row", num_rows = 1024, degree_min = 20, degree_max = 16}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_kernel.yield"(%m) : (f32) -> ()
  }) : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Reducers resolve at the Kernel stage too.
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
  // expected-error @+1 {{'gf_kernel.launch' op uses unknown reducer @max}}
  %o = "gf_kernel.launch"(%rp, %ci, %x, %w) <{reducers = [@max], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], traversal = "csr-row", num_rows = 1024, degree_min = 4, degree_max = 16}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_kernel.yield"(%m) : (f32) -> ()
  }) : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

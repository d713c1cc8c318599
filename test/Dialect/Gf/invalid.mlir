// RUN: linnet-opt %s -split-input-file -verify-diagnostics
//
// Verifier diagnostics of the gf (Domain) dialect: gf.reducer, gf.relation,
// gf.apply and the terminators. Generated cases share one reducer @sum and
// one 1,024-entity CSR relation at version 3.

// A reducer symbol must exist.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op uses unknown reducer @nope}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@nope], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// A reducer symbol must name a gf.reducer.
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
func.func private @g()
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op reducer @g names a 'func.func', not a gf.reducer}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@g], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Messages must have the reducer's message types.
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
"gf.reducer"() <{sym_name = "sum64", kind = "algebraic", associative = true, commutative = true, message_types = [f64], state_types = [f64], result_types = [f64]}> ({
  %z = arith.constant 0.0 : f64
  "gf.reducer_yield"(%z) : (f64) -> ()
}, {
^bb0(%m: f64):
  "gf.reducer_yield"(%m) : (f64) -> ()
}, {
^bb0(%a: f64, %b: f64):
  %s = arith.addf %a, %b : f64
  "gf.reducer_yield"(%s) : (f64) -> ()
}, {
^bb0(%s: f64):
  "gf.reducer_yield"(%s) : (f64) -> ()
}) : () -> ()
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op message #0 has type 'f32' but reducer @sum64 expects 'f64'}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum64], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Results hold the reducer's result type.
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
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf16> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op result #0 holds 'f16' per destination but reducer @sum produces 'f32'}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf16>
  return %o : tensor<?xf16>
}

// -----

// The edge region takes one argument per input of its segment.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op region #0 takes 1 argument(s) but input_segment_sizes gives it 2 input(s)}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32):
    "gf.yield"(%s) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Segments must cover the inputs exactly.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op input_segment_sizes sum to 1 but the op has 2 field input(s)}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Region arguments are the inputs' element types.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op region #0 argument #1 has type 'f16' but input #1 ('weight') provides 'f32'}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f16):
    "gf.yield"(%s) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Roles are src, dst or edge.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op input #1 ('weight') has role 'node'; expected one of src, dst, edge}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "node"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// input_names needs one entry per input.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op has 2 field input(s) but input_names has 1 entry; input_roles, input_names, effects and snapshot_versions need one entry per input}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// effects needs one entry per input.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op has 2 field input(s) but effects has 3 entries}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// snapshot_versions needs one entry per input.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op has 2 field input(s) but snapshot_versions has 1 entry}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// input_roles needs one entry per input.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op has 2 field input(s) but input_roles has 1 entry}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Inputs are read at the relation's version.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op input #1 ('weight') reads snapshot version 2 but relation 'mesh' is at version 3}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 2>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Effects are read, write or read-write.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op input #0 ('x') has effect 'mutate'; expected read, write or read-write}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["mutate", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Input names are unique.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op input name 'x' is used twice}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "x"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Only edge regions (kind 0) exist.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op region #0 has kind 1; only kind 0 (edge) is supported}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 1>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// One region_kinds entry per region.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op has 1 region(s) but region_kinds has 2 entries}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0, 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// The edge region yields one message per reducer message type.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op region #0 yields 2 message(s) but its reducers expect 1 (f32)}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    "gf.yield"(%s, %e) : (f32, f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Static src lengths must match num_src.
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
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<10xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op input #0 ('x') has 10 entries but role 'src' needs num_src = 1024}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<10xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Static result lengths must match num_dst.
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
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<5xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op result #0 has 5 entries but relation 'mesh' has num_dst = 1024}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<5xf32>
  return %o : tensor<5xf32>
}

// -----

// The edge region ends in gf.yield.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op region #0 must end in 'gf.yield'}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    func.return
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Inputs are indexed by entity.
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
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<f32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.apply' op input #0 ('x') must be a tensor indexed by entity (rank >= 1)}}
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<f32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Degree bounds are ordered.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has degree_min = 17 greater than degree_max = 16}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized", degree_min = 17, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

// Mesh extents are positive.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has non-positive mesh_shape[1] = 0}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized", mesh_shape = array<i64: 2, 0>, mesh_axis = 0}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

// The mesh axis is in range.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has mesh_axis = 2 out of range for a mesh of rank 2}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized", mesh_shape = array<i64: 2, 4>, mesh_axis = 2}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

// A negative mesh axis is out of range too.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has mesh_axis = -1 out of range for a mesh of rank 2}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized", mesh_shape = array<i64: 2, 4>, mesh_axis = -1}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

// Placement needs both the mesh and the axis.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op takes mesh_shape and mesh_axis together}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized", mesh_shape = array<i64: 2, 4>}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

// Realizations are a closed set.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has unknown realization 'sparse'; expected materialized, dense, triangular, radius, knn or paged}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "sparse"}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

// The strings are the IR spelling, not the C++ enumerators' names.
func.func @f() {
  // expected-error @+1 {{'gf.relation' op has unknown realization 'Dense'; expected materialized, dense, triangular, radius, knn or paged}}
  %r = "gf.relation"() <{relation_id = "d", version = 0, origin = "derived", lifecycle = "frozen", num_src = 64, num_dst = 32, realization = "Dense"}> : () -> !gf.relation
  return
}

// -----

// A materialized relation takes row_ptr and col_idx.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op with realization 'materialized' takes 2 topology operand(s), got 1}}
  %r = "gf.relation"(%rp) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized"}> : (tensor<?xi64>) -> !gf.relation
  return
}

// -----

// A dense relation has no topology buffers.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op with realization 'dense' takes 0 topology operand(s), got 2}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "dense"}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

// A radius relation needs its radius.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op takes its radius as a 'radius' attribute or a 0-d float operand, exactly one of them}}
  %r = "gf.relation"(%pos) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "radius"}> : (tensor<?x3xf32>) -> !gf.relation
  return
}

// -----

// ... and not twice.
func.func @f(%pos: tensor<?x3xf32>, %r0: tensor<f64>) {
  // expected-error @+1 {{'gf.relation' op takes its radius as a 'radius' attribute or a 0-d float operand, exactly one of them}}
  %r = "gf.relation"(%pos, %r0) <{relation_id = "ball", version = 0, origin = "derived", lifecycle = "frozen", num_src = -1, num_dst = -1, realization = "radius", radius = 0.5 : f64}> : (tensor<?x3xf32>, tensor<f64>) -> !gf.relation
  return
}

// -----

// A radius of 0 relates duplicates; a negative one is refused as an attribute.
func.func @f(%pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op needs a non-negative radius}}
  %r = "gf.relation"(%pos) <{relation_id = "ball", version = 0, origin = "derived", lifecycle = "frozen", num_src = -1, num_dst = -1, realization = "radius", radius = -1.0 : f64}> : (tensor<?x3xf32>) -> !gf.relation
  return
}

// -----

// A kNN relation needs k.
func.func @f(%pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op with realization 'knn' needs k: a 'k' attribute or a 0-d integer operand}}
  %r = "gf.relation"(%pos) <{relation_id = "knn", version = 0, origin = "derived", lifecycle = "frozen", num_src = -1, num_dst = -1, realization = "knn"}> : (tensor<?x3xf32>) -> !gf.relation
  return
}

// -----

// Positions come first, as [points, axes] floats.
func.func @f(%pos: tensor<?xf32>) {
  // expected-error @+1 {{'gf.relation' op with realization 'knn' takes float positions [points, axes], then a 0-d integer k when not attributes; got 'tensor<?xf32>'}}
  %r = "gf.relation"(%pos) <{relation_id = "knn", version = 0, origin = "derived", lifecycle = "frozen", num_src = -1, num_dst = -1, realization = "knn", k = 4}> : (tensor<?xf32>) -> !gf.relation
  return
}

// -----

// Destination and source positions have one axis count.
func.func @f(%a: tensor<?x3xf32>, %b: tensor<?x2xf32>) {
  // expected-error @+1 {{'gf.relation' op has destination positions of 3 axes and source positions of 2}}
  %r = "gf.relation"(%a, %b) <{relation_id = "knn", version = 0, origin = "derived", lifecycle = "frozen", num_src = -1, num_dst = -1, realization = "knn", k = 4}> : (tensor<?x3xf32>, tensor<?x2xf32>) -> !gf.relation
  return
}

// -----

// The positions agree with the entity counts.
func.func @f(%a: tensor<10x3xf32>, %b: tensor<12x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has 12 source positions but num_src = 10}}
  %r = "gf.relation"(%a, %b) <{relation_id = "knn", version = 0, origin = "derived", lifecycle = "frozen", num_src = 10, num_dst = 10, realization = "knn", k = 4}> : (tensor<10x3xf32>, tensor<12x3xf32>) -> !gf.relation
  return
}

// -----

// A row of a kNN relation has at most k sources.
func.func @f(%pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has at most k = 4 neighbors per destination; degree_max = 8 disagrees}}
  %r = "gf.relation"(%pos) <{relation_id = "knn", version = 0, origin = "derived", lifecycle = "frozen", num_src = -1, num_dst = -1, realization = "knn", k = 4, degree_max = 8}> : (tensor<?x3xf32>) -> !gf.relation
  return
}

// -----

// Self pairs exist only between a point set and itself.
func.func @f(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op excludes (i, i) pairs but relates 10 destinations to 12 sources}}
  %r = "gf.relation"(%a, %b) <{relation_id = "knn", version = 0, origin = "derived", lifecycle = "frozen", num_src = 12, num_dst = 10, realization = "knn", k = 4, exclude_self}> : (tensor<?x3xf32>, tensor<?x3xf32>) -> !gf.relation
  return
}

// -----

// exclude_self belongs to relations built from coordinates.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>) {
  // expected-error @+1 {{'gf.relation' op takes 'exclude_self' only when realization = "knn" or "radius"}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "csr", version = 0, origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1, realization = "materialized", exclude_self}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

// gf.edges reads i64 compressed rows.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>) {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "csr", version = 0, origin = "external", lifecycle = "frozen", num_src = -1, num_dst = 4, realization = "materialized"}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf.edges' op row_ptr has 4 entries but the relation has 4 destinations}}
  %e:2 = "gf.edges"(%r) : (!gf.relation) -> (tensor<4xi64>, tensor<?xi64>)
  return
}

// -----

func.func @f(%r: !gf.relation) {
  // expected-error @+1 {{'gf.edges' op col_idx must be a 1-D tensor of i64, got 'tensor<?xi32>'}}
  %e:2 = "gf.edges"(%r) : (!gf.relation) -> (tensor<?xi64>, tensor<?xi32>)
  return
}

// -----

// A halo depth of 0 is meaningless.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has halo_depth = 0; expected a positive depth or -1 (automatic)}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized", mesh_shape = array<i64: 4>, mesh_axis = 0, halo_depth = 0}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

// Partitioning facts need a mesh.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has partition_balance or halo_depth but no mesh_shape/mesh_axis to partition over}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized", partition_balance = "edges"}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

// row_ptr has num_dst + 1 entries.
func.func @f(%rp: tensor<10xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op row_ptr has 10 entries but num_dst + 1 = 1025}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized"}> : (tensor<10xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

// A triangular relation is square.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op is triangular and needs num_src == num_dst, got 8 and 4}}
  %r = "gf.relation"() <{relation_id = "causal", version = 0, origin = "derived", lifecycle = "frozen", num_src = 8, num_dst = 4, realization = "triangular"}> : () -> !gf.relation
  return
}

// -----

// Lifecycle is frozen or mutable.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has lifecycle 'melted'; expected 'frozen' or 'mutable'}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "melted", num_src = 1024, num_dst = 1024, realization = "materialized"}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

// An algebraic reducer is associative.
// expected-error @+1 {{'gf.reducer' op of kind 'algebraic' must be associative; declare kind = "ordered" for an order-dependent reducer}}
"gf.reducer"() <{sym_name = "r", kind = "algebraic", associative = false, commutative = true, message_types = [f32], state_types = [f32], result_types = [f32]}> ({
  %z = arith.constant 0.0 : f32
  "gf.reducer_yield"(%z) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%a: f32, %b: f32):
  "gf.reducer_yield"(%a) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}) : () -> ()

// -----

// combine takes two states.
// expected-error @+1 {{'gf.reducer' op combine region takes (f32) but expected (f32, f32)}}
"gf.reducer"() <{sym_name = "r", kind = "algebraic", associative = true, commutative = true, message_types = [f32], state_types = [f32], result_types = [f32]}> ({
  %z = arith.constant 0.0 : f32
  "gf.reducer_yield"(%z) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}) : () -> ()

// -----

// finalize yields the result types.
// expected-error @+1 {{'gf.reducer' op finalize region yields (f32) but expected (i32)}}
"gf.reducer"() <{sym_name = "r", kind = "algebraic", associative = true, commutative = true, message_types = [f32], state_types = [f32], result_types = [i32]}> ({
  %z = arith.constant 0.0 : f32
  "gf.reducer_yield"(%z) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%a: f32, %b: f32):
  "gf.reducer_yield"(%a) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}) : () -> ()

// -----

// Reducer kinds are algebraic or ordered.
// expected-error @+1 {{'gf.reducer' op has kind 'magic'; expected 'algebraic' or 'ordered'}}
"gf.reducer"() <{sym_name = "r", kind = "magic", associative = true, commutative = true, message_types = [f32], state_types = [f32], result_types = [f32]}> ({
  %z = arith.constant 0.0 : f32
  "gf.reducer_yield"(%z) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%a: f32, %b: f32):
  "gf.reducer_yield"(%a) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}) : () -> ()

// -----

// identity takes no arguments.
// expected-error @+1 {{'gf.reducer' op identity region takes (f32) but expected ()}}
"gf.reducer"() <{sym_name = "r", kind = "algebraic", associative = true, commutative = true, message_types = [f32], state_types = [f32], result_types = [f32]}> ({
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%a: f32, %b: f32):
  "gf.reducer_yield"(%a) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}) : () -> ()

// -----

// gf.yield only terminates gf.apply regions.
func.func @f(%v: f32) {
  // expected-error @+1 {{'gf.yield' op expects parent op 'gf.apply'}}
  "gf.yield"(%v) : (f32) -> ()
}

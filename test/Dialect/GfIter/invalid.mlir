// RUN: linnet-opt %s -split-input-file -verify-diagnostics
//
// Verifier diagnostics of gf_iter.traverse.

// The hierarchy must enumerate the relation's realization.
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
  // expected-error @+1 {{'gf_iter.traverse' op enumerates a 'materialized' relation with coordinate_hierarchy 'ranked-pairs'; expected 'compressed-row'}}
  %o = "gf_iter.traverse"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], coordinate_hierarchy = "ranked-pairs", ordering = "destination-major"}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_iter.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Hierarchies are a closed set.
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
  // expected-error @+1 {{'gf_iter.traverse' op has unknown coordinate_hierarchy 'zigzag'; expected compressed-row, cartesian-product, generated-neighborhood or ranked-pairs}}
  %o = "gf_iter.traverse"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], coordinate_hierarchy = "zigzag", ordering = "destination-major"}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_iter.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf_iter.traverse' op has unknown coordinate_hierarchy 'CompressedRow'; expected compressed-row, cartesian-product, generated-neighborhood or ranked-pairs}}
  %o = "gf_iter.traverse"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], coordinate_hierarchy = "CompressedRow", ordering = "destination-major"}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_iter.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Only destination-major ordering is supported.
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
  // expected-error @+1 {{'gf_iter.traverse' op has ordering 'source-major'; only 'destination-major' is supported}}
  %o = "gf_iter.traverse"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], coordinate_hierarchy = "compressed-row", ordering = "source-major"}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_iter.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Paged relations have no Iter form.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "paged", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf_iter.traverse' op cannot traverse a 'paged' relation: it has no Iter form}}
  %o = "gf_iter.traverse"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], coordinate_hierarchy = "compressed-row", ordering = "destination-major"}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_iter.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// The message signature is checked at every stage.
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
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 4, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf_iter.traverse' op input #0 ('x') reads snapshot version 3 but relation 'mesh' is at version 4}}
  %o = "gf_iter.traverse"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], coordinate_hierarchy = "compressed-row", ordering = "destination-major"}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf_iter.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Traverse regions end in gf_iter.yield.
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
  // expected-error @+1 {{'gf_iter.traverse' op region #0 must end in 'gf_iter.yield'}}
  %o = "gf_iter.traverse"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 3, 3>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"], coordinate_hierarchy = "compressed-row", ordering = "destination-major"}> ({
  ^bb0(%s: f32, %e: f32):
    %m = arith.mulf %s, %e : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Shared input of the pass tests: one gf.apply per relation kind and per
// set of relation facts the schedule derivation distinguishes.

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

"gf.reducer"() <{sym_name = "last", kind = "ordered", associative = false, commutative = false, message_types = [f32], state_types = [f32], result_types = [f32]}> ({
  %z = arith.constant 0.0 : f32
  "gf.reducer_yield"(%z) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%a: f32, %b: f32):
  "gf.reducer_yield"(%b) : (f32) -> ()
}, {
^bb0(%s: f32):
  "gf.reducer_yield"(%s) : (f32) -> ()
}) : () -> ()

// The fixture's facts: CSR, 1,024 rows, ragged degrees 4..16.
func.func @csr(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>, %pages: tensor<?x16xi64>, %x: tensor<?xf32>, %weight: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x, %weight) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%v0: f32, %v1: f32):
    %m = arith.mulf %v0, %v1 : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Every row has exactly 8 neighbors.
func.func @csr_uniform(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>, %pages: tensor<?x16xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 8, degree_max = 8}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v0: f32):
    "gf.yield"(%v0) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Rows of up to 100 neighbors: longer than one subgroup.
func.func @csr_heavy(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>, %pages: tensor<?x16xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 100}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v0: f32):
    "gf.yield"(%v0) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// A tiny relation: 6 rows of 2..3 neighbors.
func.func @csr_small(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>, %pages: tensor<?x16xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 6, num_dst = 6, degree_min = 2, degree_max = 3}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v0: f32):
    "gf.yield"(%v0) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Nothing known but the row count.
func.func @csr_unknown(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>, %pages: tensor<?x16xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = 1000}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v0: f32):
    "gf.yield"(%v0) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// An order-dependent reducer cannot reduce across lanes.
func.func @csr_ordered(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>, %pages: tensor<?x16xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@last], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v0: f32):
    "gf.yield"(%v0) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Every source for every destination (a matmul-like contraction).
func.func @dense(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>, %pages: tensor<?x16xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"() <{relation_id = "d", version = 0, realization = "dense", origin = "external", lifecycle = "frozen", num_src = 64, num_dst = 32}> : () -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v0: f32):
    "gf.yield"(%v0) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Causal: row i sees sources 0..i.
func.func @triangular(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>, %pages: tensor<?x16xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"() <{relation_id = "causal", version = 0, realization = "triangular", origin = "external", lifecycle = "frozen", num_src = 128, num_dst = 128}> : () -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v0: f32):
    "gf.yield"(%v0) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Neighbors within a radius of each point.
func.func @radius(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>, %pages: tensor<?x16xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%pos) <{relation_id = "ball", version = 0, realization = "radius", origin = "external", lifecycle = "frozen", num_src = 4096, num_dst = 4096, degree_max = 32, radius = 0.25 : f64}> : (tensor<?x3xf32>) -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v0: f32):
    "gf.yield"(%v0) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// The 8 nearest sources of each point.
func.func @knn(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>, %pages: tensor<?x16xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%pos) <{relation_id = "knn", version = 0, realization = "knn", origin = "external", lifecycle = "frozen", num_src = 4096, num_dst = 4096, k = 8}> : (tensor<?x3xf32>) -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v0: f32):
    "gf.yield"(%v0) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Paged edges (a KV cache): no Iter form yet.
func.func @paged(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>, %pages: tensor<?x16xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%pages) <{relation_id = "kv", version = 0, realization = "paged", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = 16}> : (tensor<?x16xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v0: f32):
    "gf.yield"(%v0) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

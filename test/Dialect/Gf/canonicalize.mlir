// Folders and canonicalization patterns of the gf dialects.
// RUN: linnet-opt %s -canonicalize -split-input-file | FileCheck %s

// Joining one event is that event.
// CHECK-LABEL: func.func @join_one(
// CHECK-SAME: %[[E:.*]]: !gf_storage.event
// CHECK-NOT: gf_storage.join
// CHECK: return %[[E]]
func.func @join_one(%e: !gf_storage.event) -> !gf_storage.event {
  %j = "gf_storage.join"(%e) <{snapshot_version = 0}> : (!gf_storage.event) -> !gf_storage.event
  return %j : !gf_storage.event
}

// -----

// Repeated events are joined once; a join used only by another join of the
// same snapshot is flattened into it.
// CHECK-LABEL: func.func @join_flatten(
// CHECK-SAME: %[[A:.*]]: !gf_storage.event, %[[B:.*]]: !gf_storage.event, %[[C:.*]]: !gf_storage.event
// CHECK-NEXT: %[[J:.*]] = "gf_storage.join"(%[[A]], %[[B]], %[[C]]) <{snapshot_version = 1 : i64}>
// CHECK-NEXT: return %[[J]]
func.func @join_flatten(%a: !gf_storage.event, %b: !gf_storage.event, %c: !gf_storage.event) -> !gf_storage.event {
  %inner = "gf_storage.join"(%a, %b, %a) <{snapshot_version = 1}> : (!gf_storage.event, !gf_storage.event, !gf_storage.event) -> !gf_storage.event
  %outer = "gf_storage.join"(%inner, %c, %b) <{snapshot_version = 1}> : (!gf_storage.event, !gf_storage.event, !gf_storage.event) -> !gf_storage.event
  return %outer : !gf_storage.event
}

// -----

// Joins of different snapshots are kept apart.
// CHECK-LABEL: func.func @join_versions(
// CHECK: "gf_storage.join"(%{{.*}}, %{{.*}}) <{snapshot_version = 1 : i64}>
// CHECK: "gf_storage.join"(%{{.*}}, %{{.*}}) <{snapshot_version = 2 : i64}>
func.func @join_versions(%a: !gf_storage.event, %b: !gf_storage.event, %c: !gf_storage.event) -> !gf_storage.event {
  %inner = "gf_storage.join"(%a, %b) <{snapshot_version = 1}> : (!gf_storage.event, !gf_storage.event) -> !gf_storage.event
  %outer = "gf_storage.join"(%inner, %c) <{snapshot_version = 2}> : (!gf_storage.event, !gf_storage.event) -> !gf_storage.event
  return %outer : !gf_storage.event
}

// -----

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
// CHECK-LABEL: func.func @empty_relation(
// CHECK-NOT: "gf.apply"
// (tensor's own canonicalization then makes the zero size static.)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<0xf32>
// CHECK: %[[C:.*]] = tensor.cast %[[E]] : tensor<0xf32> to tensor<?xf32>
// CHECK: return %[[C]]
func.func @empty_relation(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"() <{relation_id = "none", version = 0, realization = "dense", origin = "derived", lifecycle = "frozen", num_src = 8, num_dst = 0}> : () -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// An unused apply that only reads is dead; one that writes is kept.
// CHECK-LABEL: func.func @dead_apply(
// CHECK: "gf.apply"
// CHECK-SAME: effects = ["read-write"]
// CHECK-NOT: "gf.apply"
// CHECK: return
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

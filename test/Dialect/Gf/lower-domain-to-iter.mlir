// -gf-lower-domain-to-iter picks the coordinate hierarchy from the relation's
// realization (materialized -> compressed-row, dense/triangular ->
// cartesian-product, radius -> generated-neighborhood, knn -> ranked-pairs)
// and leaves applies over paged relations in Domain IR.
//
// RUN: linnet-opt %S/Inputs/relation-kinds.mlir -gf-lower-domain-to-iter | FileCheck %s
// RUN: linnet-opt %s -split-input-file -verify-diagnostics -gf-lower-domain-to-iter

// CHECK-LABEL: func.func @csr(
// CHECK-NOT: "gf.apply"
// CHECK: %[[R:.*]] = "gf.relation"
// CHECK: "gf_iter.traverse"(%[[R]], %arg4, %arg5) <{coordinate_hierarchy = "compressed-row", deterministic = false, effects = ["read", "read"], input_names = ["x", "weight"], input_roles = ["src", "edge"], input_segment_sizes = array<i64: 2>, ordering = "destination-major", reducers = [@sum], region_kinds = array<i64: 0>, snapshot_versions = array<i64: 0, 0>}> ({
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT:   %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:   "gf_iter.yield"(%[[M]]) : (f32) -> ()
// CHECK-NEXT: }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>

// CHECK-LABEL: func.func @dense(
// CHECK: "gf_iter.traverse"{{.*}}coordinate_hierarchy = "cartesian-product"{{.*}}ordering = "destination-major"
// CHECK-LABEL: func.func @triangular(
// CHECK: "gf_iter.traverse"{{.*}}coordinate_hierarchy = "cartesian-product"
// CHECK-LABEL: func.func @radius(
// CHECK: "gf_iter.traverse"{{.*}}coordinate_hierarchy = "generated-neighborhood"
// CHECK-LABEL: func.func @knn(
// CHECK: "gf_iter.traverse"{{.*}}coordinate_hierarchy = "ranked-pairs"

// Paged relations stay in Domain IR.
// CHECK-LABEL: func.func @paged(
// CHECK-NOT: gf_iter
// CHECK: "gf.apply"
// CHECK: "gf.yield"

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
// A relation passed in as an argument has no visible realization.
func.func @opaque(%r: !gf.relation, %x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'gf.apply' op cannot choose a coordinate hierarchy: its relation is not defined by a gf.relation in this function}}
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

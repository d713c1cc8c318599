// -gf-lower-iter-to-kernel binds each traversal to its relation's topology
// buffers (operands: topology first, then the field inputs), names the loop
// structure and copies the facts the schedule needs. No schedule yet.
//
// RUN: linnet-opt %S/Inputs/relation-kinds.mlir -gf-lower-domain-to-iter \
// RUN:   -gf-lower-iter-to-kernel | FileCheck %s
// RUN: linnet-opt %S/Inputs/relation-kinds.mlir -gf-lower-domain-to-iter \
// RUN:   -gf-lower-iter-to-kernel -gf-verify-phase=stage=kernel -o /dev/null

// CHECK-LABEL: func.func @csr(
// CHECK-NOT: gf_iter
// The relation stays: task planning reads its placement later.
// CHECK: "gf.relation"(%arg0, %arg1)
// CHECK: "gf_kernel.launch"(%arg0, %arg1, %arg4, %arg5) <{degree_max = 16 : i64, degree_min = 4 : i64, deterministic = false, effects = ["read", "read"], input_names = ["x", "weight"], input_roles = ["src", "edge"], input_segment_sizes = array<i64: 2>, num_rows = 1024 : i64, reducers = [@sum], region_kinds = array<i64: 0>, snapshot_versions = array<i64: 0, 0>, traversal = "csr-row"}> ({
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT:   %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:   "gf_kernel.yield"(%[[M]]) : (f32) -> ()
// CHECK-NEXT: }) : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>

// Unknown degree bounds stay unknown.
// CHECK-LABEL: func.func @csr_unknown(
// CHECK: "gf_kernel.launch"(%arg0, %arg1, %arg4) <{deterministic = false,
// CHECK-SAME: num_rows = 1000 : i64,
// CHECK-SAME: traversal = "csr-row"}>

// Dense relations read no topology; every row has num_src neighbors.
// CHECK-LABEL: func.func @dense(
// CHECK: "gf_kernel.launch"(%arg4) <{degree_max = 64 : i64, degree_min = 64 : i64,
// CHECK-SAME: num_rows = 32 : i64
// CHECK-SAME: traversal = "dense-row"}>

// Triangular row i has i + 1 neighbors: 1..num_src.
// CHECK-LABEL: func.func @triangular(
// CHECK: "gf_kernel.launch"(%arg4) <{degree_max = 128 : i64, degree_min = 1 : i64,
// CHECK-SAME: traversal = "triangular-row"}>

// CHECK-LABEL: func.func @radius(
// CHECK: "gf_kernel.launch"(%arg2, %arg4) <{degree_max = 32 : i64, deterministic
// CHECK-SAME: traversal = "radius-cell"}>

// kNN rows have exactly k neighbors.
// CHECK-LABEL: func.func @knn(
// CHECK: "gf_kernel.launch"(%arg2, %arg4) <{degree_max = 8 : i64, degree_min = 8 : i64,
// CHECK-SAME: traversal = "knn-row"}>

// CHECK-LABEL: func.func @paged(
// CHECK: "gf.apply"

// -gf-build-relations builds a radius or kNN relation's compressed rows
// once, by a call of the target's builder, and replaces the relation with a
// materialized one over them; every gf.edges reads the same rows.
//
// RUN: linnet-opt %s -split-input-file -gf-build-relations -verify-diagnostics | FileCheck %s

// A radius graph over f32 positions: widened to f64, k and exclude_self as
// constants, the run-time radius read from its 0-d tensor.
// CHECK-LABEL: func.func private @linnet_relation_build(memref<?x?xf64>, memref<?x?xf64>, memref<?xi64>, memref<?xi64>, i64, i64, i64, f64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @graph(
// CHECK-SAME: %[[POS:.*]]: tensor<100x3xf32>, %[[R:.*]]: tensor<f32>)
// CHECK: %[[WIDE:.*]] = linalg.generic {{.*}} ins(%[[POS]] : tensor<100x3xf32>)
// CHECK:   arith.extf %{{.*}} : f32 to f64
// CHECK-DAG: %[[K:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[RX:.*]] = tensor.extract %[[R]][] : tensor<f32>
// CHECK-DAG: %[[RV:.*]] = arith.extf %[[RX]] : f32 to f64
// CHECK-DAG: %[[RP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<101xi64>
// CHECK-DAG: %[[CI:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1600xi64>
// CHECK: %[[PM:.*]] = bufferization.to_memref %[[WIDE]] read_only : memref<100x3xf64>
// CHECK: %[[P:.*]] = memref.cast %[[PM]] : memref<100x3xf64> to memref<?x?xf64>
// CHECK-DAG: %[[RPC:.*]] = memref.cast %[[RP]] : memref<101xi64> to memref<?xi64>
// CHECK-DAG: %[[CIC:.*]] = memref.cast %[[CI]] : memref<1600xi64> to memref<?xi64>
// CHECK-DAG: %[[KIND:.*]] = arith.constant 1 : i64
// CHECK: call @linnet_relation_build(%[[P]], %[[P]], %[[RPC]], %[[CIC]], %[[KIND]], %[[K]], %{{.*}}, %[[RV]])
// CHECK: %[[RPT:.*]] = bufferization.to_tensor %[[RP]] restrict writable : memref<101xi64>
// CHECK: %[[CIT:.*]] = bufferization.to_tensor %[[CI]] restrict writable : memref<1600xi64>
// CHECK: "gf.relation"(%[[RPT]], %[[CIT]]) <{degree_max = 16 : i64, {{.*}}origin = "derived", realization = "materialized", relation_id = "radius"
// Both readers share the one build; each gets the type it declared.
// CHECK: %[[CAST:.*]] = tensor.cast %[[CIT]] : tensor<1600xi64> to tensor<?xi64>
// CHECK: return %[[RPT]], %[[CAST]], %[[RPT]]
// CHECK-NOT: gf.edges
func.func @graph(%pos: tensor<100x3xf32>, %r0: tensor<f32>) -> (tensor<101xi64>, tensor<?xi64>, tensor<101xi64>) {
  %r = "gf.relation"(%pos, %r0) <{relation_id = "radius", version = 0, realization = "radius", origin = "derived", lifecycle = "frozen", num_src = 100, num_dst = 100, k = 16, exclude_self}> : (tensor<100x3xf32>, tensor<f32>) -> !gf.relation
  %rp, %ci = "gf.edges"(%r) : (!gf.relation) -> (tensor<101xi64>, tensor<?xi64>)
  %rp2, %ci2 = "gf.edges"(%r) : (!gf.relation) -> (tensor<101xi64>, tensor<1600xi64>)
  return %rp, %ci, %rp2 : tensor<101xi64>, tensor<?xi64>, tensor<101xi64>
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

// kNN between two f64 point sets with a run-time k (clamped at 0): no
// conversion; a gf.apply over the relation reads the materialized one.
// CHECK-LABEL: func.func @knn(
// CHECK-SAME: %[[A:[^:]*]]: tensor<?x2xf64>, %[[B:[^:]*]]: tensor<?x2xf64>, %[[KT:[^:]*]]: tensor<i32>
// CHECK-NOT: linalg.generic
// CHECK: %[[M:.*]] = tensor.dim %[[A]]
// CHECK: %[[KX:.*]] = tensor.extract %[[KT]][] : tensor<i32>
// CHECK: %[[KW:.*]] = arith.extsi %[[KX]] : i32 to i64
// CHECK: %[[K:.*]] = arith.maxsi %[[KW]], %{{.*}} : i64
// CHECK: %[[KI:.*]] = arith.index_cast %[[K]] : i64 to index
// CHECK: %[[CAP:.*]] = arith.muli %[[M]], %[[KI]] : index
// CHECK: memref.alloc(%[[CAP]]) {alignment = 64 : i64} : memref<?xi64>
// CHECK: call @linnet_relation_build(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[K]], %{{.*}}, %{{.*}})
// CHECK: %[[REL:.*]] = "gf.relation"(%{{.*}}, %{{.*}}) <{lifecycle = "frozen", num_dst = -1 : i64, num_src = -1 : i64, origin = "derived", realization = "materialized", relation_id = "knn"
// CHECK: "gf.apply"(%[[REL]], %{{.*}})
func.func @knn(%a: tensor<?x2xf64>, %b: tensor<?x2xf64>, %k: tensor<i32>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%a, %b, %k) <{relation_id = "knn", version = 0, realization = "knn", origin = "derived", lifecycle = "frozen", num_src = -1, num_dst = -1}> : (tensor<?x2xf64>, tensor<?x2xf64>, tensor<i32>) -> !gf.relation
  %y = "gf.apply"(%r, %x) <{deterministic = false, effects = ["read"], input_segment_sizes = array<i64: 1>, input_roles = ["src"], input_names = ["x"], reducers = [@sum], region_kinds = array<i64: 0>, snapshot_versions = array<i64: 0>}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// A radius relation with no bound relates up to every source; a static
// radius is a constant.
// CHECK-LABEL: func.func @unbounded(
// CHECK-DAG: %[[R:.*]] = arith.constant 2.500000e-01 : f64
// CHECK-DAG: %[[K:.*]] = arith.constant 8 : i64
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<64xi64>
// CHECK: call @linnet_relation_build(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[K]], %{{.*}}, %[[R]])
// CHECK: "gf.relation"{{.*}}degree_max = 8 : i64
func.func @unbounded(%a: tensor<8x3xf64>) -> tensor<?xi64> {
  %r = "gf.relation"(%a) <{relation_id = "ball", version = 0, realization = "radius", origin = "derived", lifecycle = "frozen", num_src = 8, num_dst = 8, radius = 0.25 : f64}> : (tensor<8x3xf64>) -> !gf.relation
  %rp, %ci = "gf.edges"(%r) : (!gf.relation) -> (tensor<9xi64>, tensor<?xi64>)
  return %ci : tensor<?xi64>
}

// -----

// The edges of a materialized relation are its operands.
// CHECK-LABEL: func.func @csr(
// CHECK-SAME: %[[RP:[^:]*]]: tensor<?xi64>, %[[CI:[^:]*]]: tensor<?xi64>
// CHECK-NEXT: "gf.relation"
// CHECK-NEXT: return %[[RP]], %[[CI]]
func.func @csr(%rp: tensor<?xi64>, %ci: tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>) {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "csr", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %a, %b = "gf.edges"(%r) : (!gf.relation) -> (tensor<?xi64>, tensor<?xi64>)
  return %a, %b : tensor<?xi64>, tensor<?xi64>
}

// -----

// A dense relation has no compressed rows to read.
func.func @dense() -> tensor<?xi64> {
  %r = "gf.relation"() <{relation_id = "all", version = 0, realization = "dense", origin = "external", lifecycle = "frozen", num_src = 4, num_dst = 4}> : () -> !gf.relation
  // expected-error @+1 {{'gf.edges' op reads the edges of a 'dense' relation, which has no i64 compressed rows to read}}
  %a, %b = "gf.edges"(%r) : (!gf.relation) -> (tensor<5xi64>, tensor<?xi64>)
  return %b : tensor<?xi64>
}

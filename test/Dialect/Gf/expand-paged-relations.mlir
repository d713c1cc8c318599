// RUN: linnet-opt %S/Inputs/paged.mlir -gf-expand-paged-relations | FileCheck %s
// RUN: linnet-opt %S/Inputs/paged.mlir -gf-expand-paged-relations -gf-lower-domain-to-iter -gf-verify-phase=stage=iter -o /dev/null
// RUN: linnet-opt %s -split-input-file -verify-diagnostics

// The block table and lengths become row offsets (a prefix sum of the
// clamped lengths) and column indices (the slots) in new buffers, read back
// as tensors, and the relation a materialized one that every reduction
// lowers as CSR.
// CHECK-LABEL: func.func @paged
// CHECK: %[[TABLE:.*]] = bufferization.to_memref %arg0 read_only : memref<?x3xi32>
// CHECK: %[[CAP:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[RP:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
// CHECK: scf.for
// CHECK:   arith.maxsi
// CHECK:   arith.minsi %{{.*}}, %[[CAP]]
// CHECK:   memref.store %{{.*}}, %[[RP]]
// CHECK: %[[CI:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     arith.divui
// CHECK:     arith.remui
// CHECK:     memref.load %[[TABLE]]
// CHECK:     arith.extsi
// CHECK:     memref.store %{{.*}}, %[[CI]]
// CHECK: %[[RPT:.*]] = bufferization.to_tensor %[[RP]] restrict writable
// CHECK: %[[CIT:.*]] = bufferization.to_tensor %[[CI]] restrict writable
// CHECK: "gf.relation"(%[[RPT]], %[[CIT]]) <{degree_max = 12 : i64, lifecycle = "mutable", num_dst = -1 : i64, num_src = -1 : i64, origin = "derived", realization = "materialized", relation_id = "kv", version = 0 : i64}>
// CHECK-NOT: page_size
// CHECK: "gf.apply"

func.func @bad_size(%t: tensor<?x3xi64>, %l: tensor<?xi64>) {
  // expected-error @+1 {{needs a positive page_size, got 0}}
  %r = "gf.relation"(%t, %l) <{relation_id = "kv", version = 0, realization = "paged", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1, page_size = 0}> : (tensor<?x3xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

func.func @bad_table(%t: tensor<?xi64>, %l: tensor<?xi64>) {
  // expected-error @+1 {{block table must be a 2-D tensor of integers, got 'tensor<?xi64>'}}
  %r = "gf.relation"(%t, %l) <{relation_id = "kv", version = 0, realization = "paged", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1, page_size = 4}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

func.func @not_paged(%rp: tensor<?xi64>, %ci: tensor<?xi64>) {
  // expected-error @+1 {{takes a 'page_size' only when realization = "paged"}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1, page_size = 4}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// -----

func.func @one_operand(%t: tensor<?x3xi64>) {
  // expected-error @+1 {{with a page_size takes a block table and row lengths, got 1 topology operand(s)}}
  %r = "gf.relation"(%t) <{relation_id = "kv", version = 0, realization = "paged", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1, page_size = 4}> : (tensor<?x3xi64>) -> !gf.relation
  return
}

// RUN: linnet-opt %s -gf-widen-half | FileCheck %s

// The f32-compute numerics policy: arithmetic on bf16/f16 computes in f32
// and stays f32 while arithmetic reads it; a value is rounded (one truncf)
// where something else keeps it. The module records the policy.

// CHECK: module attributes {linnet.numerics = "f32-compute"}

// x * y + z rounds once, at the store; the comparison reads the exact
// product; a constant keeps its bf16 value (widened exactly).
// CHECK-LABEL: func.func @chain
// CHECK-DAG: %[[A:.*]] = arith.extf %arg0 : bf16 to f32
// CHECK-DAG: %[[B:.*]] = arith.extf %arg1 : bf16 to f32
// CHECK-DAG: %[[C:.*]] = arith.extf %arg2 : bf16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK: %[[S:.*]] = arith.addf %[[P]], %[[C]] : f32
// CHECK: %[[R:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK: memref.store %[[R]], %arg3
// CHECK: %[[K:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.cmpf olt, %[[P]], %[[K]] : f32
// CHECK-NOT: truncf
// CHECK: return
func.func @chain(%a: bf16, %b: bf16, %c: bf16, %m: memref<4xbf16>) -> i1 {
  %p = arith.mulf %a, %b : bf16
  %s = arith.addf %p, %c : bf16
  %i0 = arith.constant 0 : index
  memref.store %s, %m[%i0] : memref<4xbf16>
  %k = arith.constant 1.0 : bf16
  %lt = arith.cmpf olt, %p, %k : bf16
  return %lt : i1
}

// A half sum's f32 accumulator: the term is the exact product (its extf to
// the accumulator goes), and the sum's final rounding (a truncf the
// importer wrote) is skipped by the arithmetic that reads it.
// CHECK-LABEL: func.func @sum_then_scale
// CHECK: %[[T:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[ACC:.*]] = arith.addf %arg2, %[[T]] : f32
// CHECK-NOT: truncf
// CHECK: %[[W:.*]] = arith.mulf %[[ACC]], %{{.*}} : f32
// CHECK-NEXT: %[[O:.*]] = arith.truncf %[[W]] : f32 to bf16
// CHECK-NEXT: return %[[O]] : bf16
func.func @sum_then_scale(%a: bf16, %b: bf16, %acc: f32, %g: bf16) -> bf16 {
  %t = arith.mulf %a, %b : bf16
  %e = arith.extf %t : bf16 to f32
  %s = arith.addf %acc, %e : f32
  %r = arith.truncf %s : f32 to bf16
  %o = arith.mulf %r, %g : bf16
  return %o : bf16
}

// A loop's carried state is kept: rounded at each yield, widened again by
// the arithmetic of the next iteration.
// CHECK-LABEL: func.func @carried
// CHECK: scf.for {{.*}} iter_args(%[[ST:.*]] = %arg0) -> (bf16)
// CHECK: %[[W:.*]] = arith.extf %[[ST]] : bf16 to f32
// CHECK: %[[M:.*]] = arith.maximumf %[[W]], %{{.*}} : f32
// CHECK: %[[N:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK: scf.yield %[[N]] : bf16
func.func @carried(%init: bf16, %x: memref<?xbf16>, %n: index) -> bf16 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%st = %init) -> (bf16) {
    %v = memref.load %x[%i] : memref<?xbf16>
    %sq = arith.mulf %v, %v : bf16
    %m = arith.maximumf %st, %sq : bf16
    scf.yield %m : bf16
  }
  return %r : bf16
}

// A linalg body: the element is rounded at the yield; tensors themselves
// are storage (an op on whole tensors is left alone).
// CHECK-LABEL: func.func @elementwise
// CHECK: ^bb0(%[[X:.*]]: bf16, %[[Y:.*]]: bf16, %{{.*}}: bf16):
// CHECK-DAG: %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-DAG: %[[YW:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK: %[[SUM:.*]] = arith.addf %[[XW]], %[[YW]] : f32
// CHECK: %[[E:.*]] = math.exp %[[SUM]] : f32
// CHECK: %[[Q:.*]] = arith.truncf %[[E]] : f32 to bf16
// CHECK: linalg.yield %[[Q]] : bf16
// CHECK: arith.addf %{{.*}}, %{{.*}} : tensor<8xbf16>
#id = affine_map<(d0) -> (d0)>
func.func @elementwise(%x: tensor<8xbf16>, %y: tensor<8xbf16>) -> tensor<8xbf16> {
  %e = tensor.empty() : tensor<8xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<8xbf16>, tensor<8xbf16>) outs(%e : tensor<8xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %s = arith.addf %a, %b : bf16
    %q = math.exp %s : bf16
    linalg.yield %q : bf16
  } -> tensor<8xbf16>
  %w = arith.addf %r, %x : tensor<8xbf16>
  return %w : tensor<8xbf16>
}

// f16 is widened the same way; a conversion between the two half types
// reads the f32 value; f32 code is untouched. A half value is widened once,
// where it is defined (block arguments at the top of their block).
// CHECK-LABEL: func.func @halves
// CHECK-DAG: %[[H:.*]] = arith.extf %arg0 : f16 to f32
// CHECK-DAG: %[[B:.*]] = arith.extf %arg1 : bf16 to f32
// CHECK: %[[D:.*]] = arith.addf %[[H]], %[[H]] : f32
// CHECK: %[[PR:.*]] = arith.mulf %[[D]], %[[B]] : f32
// CHECK: arith.truncf %[[PR]] : f32 to bf16
// CHECK: arith.mulf %arg2, %arg2 : f32
func.func @halves(%h: f16, %b: bf16, %f: f32) -> (bf16, f32) {
  %d = arith.addf %h, %h : f16
  %e = arith.extf %d : f16 to f32
  %c = arith.truncf %e : f32 to bf16
  %p = arith.mulf %c, %b : bf16
  %q = arith.mulf %f, %f : f32
  return %p, %q : bf16, f32
}

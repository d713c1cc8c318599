// RUN: linnet-opt %s -linnet-cpu-hoist-invariant-math | FileCheck %s

// Rotary embedding as written: cos and sin of an angle of (s, d), for every
// head n. They move into one generic over (s, d); the comprehension reads
// its two results at (s, d) and keeps the rest of its body.

// CHECK-DAG:   #[[SD:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG:   #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @rope(
// CHECK:       %[[T:.*]]:2 = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK:         linalg.index 0
// CHECK:         linalg.index 1
// CHECK:         tensor.extract %{{.*}} : tensor<32xf32>
// CHECK:         math.cos
// CHECK:         math.sin
// CHECK:         linalg.yield
// CHECK:       linalg.generic {{.*}} ins(%[[T]]#0, %[[T]]#1 : tensor<4x64xf32>, tensor<4x64xf32>)
// CHECK-SAME:    {linnet.task = "task.rope.l0"}
// CHECK:       ^bb0(%[[C:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NOT:     math.cos
// CHECK-NOT:     math.sin
// CHECK:         arith.mulf %{{.*}}, %[[C]]
// CHECK:         arith.mulf %{{.*}}, %[[S]]
func.func @rope(%x: tensor<4x8x64xf32>, %freq: tensor<32xf32>, %start: i64) -> tensor<4x8x64xf32> {
  %c32 = arith.constant 32 : index
  %e = tensor.empty() : tensor<4x8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%e : tensor<4x8x64xf32>) attrs = {linnet.task = "task.rope.l0"} {
  ^bb0(%out: f32):
    %s = linalg.index 0 : index
    %n = linalg.index 1 : index
    %d = linalg.index 2 : index
    %k = arith.remui %d, %c32 : index
    %f = tensor.extract %freq[%k] : tensor<32xf32>
    %si = arith.index_cast %s : index to i64
    %p = arith.addi %si, %start : i64
    %pf = arith.sitofp %p : i64 to f32
    %angle = arith.mulf %pf, %f : f32
    %v = tensor.extract %x[%s, %n, %d] : tensor<4x8x64xf32>
    %c = math.cos %angle : f32
    %a = arith.mulf %v, %c : f32
    %sn = math.sin %angle : f32
    %b = arith.mulf %v, %sn : f32
    %y = arith.addf %a, %b : f32
    linalg.yield %y : f32
  } -> tensor<4x8x64xf32>
  return %r : tensor<4x8x64xf32>
}

// A call reading every dimension, one over a dynamic dimension it leaves
// out, and one over only unit dimensions stay where they are.
// CHECK-LABEL: func.func @stay(
// CHECK:       linalg.generic
// CHECK:         math.cos
// CHECK:       linalg.generic
// CHECK:         math.sin
// CHECK:       linalg.generic
// CHECK:         math.tanh
// CHECK-NOT:   linalg.generic
func.func @stay(%x: tensor<8x64xf32>, %y: tensor<?x64xf32>, %z: tensor<1x64xf32>)
    -> (tensor<8x64xf32>, tensor<?x64xf32>, tensor<1x64xf32>) {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = math.cos %in : f32
    linalg.yield %c : f32
  } -> tensor<8x64xf32>
  %n = tensor.dim %y, %c0 : tensor<?x64xf32>
  %ey = tensor.empty(%n) : tensor<?x64xf32>
  %ry = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      outs(%ey : tensor<?x64xf32>) {
  ^bb0(%out: f32):
    %d = linalg.index 1 : index
    %i = arith.index_cast %d : index to i64
    %f = arith.sitofp %i : i64 to f32
    %s = math.sin %f : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  %ez = tensor.empty() : tensor<1x64xf32>
  %rz = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      outs(%ez : tensor<1x64xf32>) {
  ^bb0(%out: f32):
    %d = linalg.index 1 : index
    %i = arith.index_cast %d : index to i64
    %f = arith.sitofp %i : i64 to f32
    %t = math.tanh %f : f32
    linalg.yield %t : f32
  } -> tensor<1x64xf32>
  return %r, %ry, %rz : tensor<8x64xf32>, tensor<?x64xf32>, tensor<1x64xf32>
}

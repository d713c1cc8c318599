// RUN: linnet-opt %s -linnet-cpu-approximate-math | FileCheck %s

// An exponential permitted approximate (fastmath afn: the weights of the
// online softmax in blocks of keys) becomes arithmetic, which vectorizes
// with its loop; one without the flag, or of f64, stays math.exp (libm).

// CHECK-LABEL: func.func @weights(
// CHECK-NOT:   math.exp
// CHECK:       arith.mulf
// CHECK:       arith.bitcast
// CHECK:       memref.store
func.func @weights(%s: memref<64xf32>, %n: index, %m: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %k = %c0 to %n step %c1 {
    %x = memref.load %s[%k] : memref<64xf32>
    %d = arith.subf %x, %m fastmath<contract> : f32
    %e = math.exp %d fastmath<contract,afn> : f32
    memref.store %e, %s[%k] : memref<64xf32>
  }
  return
}

// CHECK-LABEL: func.func @exact(
// CHECK:       math.exp %{{.*}} : f32
// CHECK:       math.exp %{{.*}} fastmath<afn> : f64
// CHECK:       math.exp %{{.*}} fastmath<contract> : f32
func.func @exact(%x: f32, %y: f64) -> (f32, f64, f32) {
  %a = math.exp %x : f32
  %b = math.exp %y fastmath<afn> : f64
  %c = math.exp %x fastmath<contract> : f32
  return %a, %b, %c : f32, f64, f32
}

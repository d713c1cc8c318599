// RUN: linnet-opt -linnet-cpu-widen-bf16 %s | FileCheck %s

// Each bf16 op computes in f32 and rounds its result: x * x + 1 rounds the
// product before the sum (no fused multiply-add of the two).
// CHECK-LABEL: func.func @chain
// CHECK: %[[X:.*]] = arith.extf %arg0 : bf16 to f32
// CHECK: %[[X2:.*]] = arith.extf %arg0 : bf16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[X]], %[[X2]] fastmath<contract> : f32
// CHECK: %[[PB:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK: %[[PW:.*]] = arith.extf %[[PB]] : bf16 to f32
// CHECK: arith.addf %[[PW]], %{{.*}} fastmath<contract> : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: math.rsqrt %{{.*}} : vector<8xf32>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// An f32 op stays as it is.
// CHECK: arith.mulf %arg2, %arg2 : f32
func.func @chain(%x: bf16, %v: vector<8xbf16>, %y: f32) -> (bf16, vector<8xbf16>, f32) {
  %one = arith.constant 1.0 : bf16
  %p = arith.mulf %x, %x fastmath<contract> : bf16
  %s = arith.addf %p, %one fastmath<contract> : bf16
  %r = math.rsqrt %v : vector<8xbf16>
  %z = arith.mulf %y, %y : f32
  return %s, %r, %z : bf16, vector<8xbf16>, f32
}

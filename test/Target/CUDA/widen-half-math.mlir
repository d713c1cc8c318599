// RUN: linnet-opt -linnet-cuda-widen-half-math %s | FileCheck %s

// A bf16 power (RoPE's theta^(2i/d)): widened exactly, computed in f32
// with its fastmath flags, rounded once.
// CHECK-LABEL: func.func @pow_bf16
// CHECK-SAME: (%[[A:.*]]: bf16, %[[B:.*]]: bf16)
// CHECK-DAG: %[[WA:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-DAG: %[[WB:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK: %[[P:.*]] = math.powf %[[WA]], %[[WB]] fastmath<contract> : f32
// CHECK: %[[R:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK: return %[[R]]
func.func @pow_bf16(%a: bf16, %b: bf16) -> bf16 {
  %0 = math.powf %a, %b fastmath<contract> : bf16
  return %0 : bf16
}

// f16 vectors widen lane by lane.
// CHECK-LABEL: func.func @exp_f16x4
// CHECK: arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK: math.exp %{{.*}} : vector<4xf32>
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xf16>
func.func @exp_f16x4(%a: vector<4xf16>) -> vector<4xf16> {
  %0 = math.exp %a : vector<4xf16>
  return %0 : vector<4xf16>
}

// An integer exponent stays; f32 math is untouched.
// CHECK-LABEL: func.func @fpowi_and_f32
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: math.fpowi %[[W]], %{{.*}} : f32, i32
// CHECK: arith.truncf
// CHECK: math.tanh %{{.*}} : f32
// CHECK-NOT: arith.extf
func.func @fpowi_and_f32(%a: bf16, %n: i32, %x: f32) -> (bf16, f32) {
  %0 = math.fpowi %a, %n : bf16, i32
  %1 = math.tanh %x : f32
  return %0, %1 : bf16, f32
}

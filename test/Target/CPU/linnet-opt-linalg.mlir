// linnet-opt parses linalg and runs the CPU contraction stage directly.
// RUN: linnet-opt %s -linnet-cpu-lower-linalg | FileCheck %s

// CHECK: linnet.cpu.implementations = [{{.*}}op = "linalg.matmul", role = "matmul"
// CHECK-LABEL: func.func @f
// CHECK-NOT: linalg.matmul
// CHECK: vector.fma
func.func @f(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

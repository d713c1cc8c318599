// RUN: linnet-opt -linnet-cuda-bind-library %s | FileCheck %s
// RUN: linnet-opt -linnet-cuda-bind-library=implementation=generated %s | FileCheck %s --check-prefix=GEN
// RUN: not linnet-opt -linnet-cuda-bind-library=implementation=mkl %s 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: linnet-opt -linnet-cuda-bind-library=tf32=true %s | FileCheck %s --check-prefix=TF32

#mk = affine_map<(m, n, k) -> (m, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#nk = affine_map<(m, n, k) -> (n, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// y = x W^T (a linear layer, W stored [n, k]): in cuBLAS's column-major
// terms y^T = W x^T, so W is the first operand, transposed, and m, n swap.
// The op stays under scf.if on the call's status: the generated kernel
// where the runtime has no cuBLAS.
// CHECK-LABEL: func.func @linear
// CHECK-DAG: %[[T:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[NT:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[STATUS:.*]] = call @linnet_cuda_sgemm(%[[T]], %[[NT]], %{{.*}}, %{{.*}}, %{{.*}}, %[[W:.*]], %{{.*}}, %[[X:.*]], %{{.*}}, %[[BETA]], %[[Y:.*]], %{{.*}}) : (i32, i32, i64, i64, i64, i64, i64, i64, i64, f32, i64, i64) -> i32
// CHECK: %[[FALLBACK:.*]] = arith.cmpi ne, %[[STATUS]], %{{.*}} : i32
// CHECK: scf.if %[[FALLBACK]] {
// CHECK-NEXT: linalg.generic {{.*}} attrs = {linnet.cuda.library = "cublasSgemm"}
// --matmul-precision tf32: the same product through GemmEx, type word 3
// (f32 operands, CUBLAS_COMPUTE_32F_FAST_TF32).
// TF32-LABEL: func.func @linear
// TF32-DAG: %[[TY:.*]] = arith.constant 3 : i32
// TF32: call @linnet_cuda_gemm(%[[TY]], {{.*}}) : (i32, i32, i32, i64, i64, i64, i64, i64, i64, i64, f32, i64, i64) -> i32
// TF32: linalg.generic {{.*}} attrs = {linnet.cuda.library = "cublasGemmEx-tf32"}
// GEN-LABEL: func.func @linear
// GEN-NOT: linnet_cuda_sgemm
// GEN: linalg.generic
// BAD: error: -linnet-cuda-bind-library: unknown implementation policy 'mkl' (auto | generated | blas)
func.func @linear(%x: memref<?x512xf32>, %w: memref<256x512xf32>, %y: memref<?x256xf32>) {
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x512xf32>, memref<256x512xf32>) outs(%y : memref<?x256xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// A^T B with A stored [k, m]: the second operand transposed.
// CHECK-LABEL: func.func @transposed_a
// CHECK-DAG: %[[T2:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[NT2:.*]] = arith.constant 0 : i32
// CHECK: call @linnet_cuda_sgemm(%[[NT2]], %[[T2]],
func.func @transposed_a(%a: memref<64x32xf32>, %b: memref<64x48xf32>, %c: memref<32x48xf32>) {
  linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x32xf32>, memref<64x48xf32>) outs(%c : memref<32x48xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// Kept generated: a matrix-vector product (static unit m), an f16
// product, a product whose body converts, a batched product.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: linnet_cuda_sgemm
// CHECK: return
func.func @kept(%x: memref<1x512xf32>, %w: memref<256x512xf32>, %y: memref<1x256xf32>,
                %hx: memref<8x512xf16>, %hw: memref<256x512xf16>, %hy: memref<8x256xf16>,
                %cy: memref<8x256xf64>, %bx: memref<2x8x512xf32>, %bw: memref<2x256x512xf32>,
                %by: memref<2x8x256xf32>) {
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1x512xf32>, memref<256x512xf32>) outs(%y : memref<1x256xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%hx, %hw : memref<8x512xf16>, memref<256x512xf16>) outs(%hy : memref<8x256xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %p = arith.mulf %a, %b : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%hx, %hw : memref<8x512xf16>, memref<256x512xf16>) outs(%cy : memref<8x256xf64>) {
  ^bb0(%a: f16, %b: f16, %acc: f64):
    %p = arith.mulf %a, %b : f16
    %e = arith.extf %p : f16 to f64
    %s = arith.addf %acc, %e : f64
    linalg.yield %s : f64
  }
  linalg.batch_matmul_transpose_b ins(%bx, %bw : memref<2x8x512xf32>, memref<2x256x512xf32>)
      outs(%by : memref<2x8x256xf32>)
  return
}

// bf16 A and B summed in f32 with exact products (the f32-compute
// numerics policy's body, acc + extf(a) * extf(b)) is cublasGemmEx's
// arithmetic: linnet_cuda_gemm with the element type first (1: bf16) and
// each operand's address counted in 2-byte elements.
// CHECK-LABEL: func.func @bf16_exact
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: arith.muli %{{.*}}, %[[TWO]] : index
// CHECK: %[[F32:.*]] = arith.constant 4 : index
// CHECK-NEXT: arith.muli %{{.*}}, %[[F32]] : index
// CHECK: arith.constant 0 : i32
// CHECK-NEXT: %[[BF16:.*]] = arith.constant 1 : i32
// CHECK-NEXT: call @linnet_cuda_gemm(%[[BF16]], {{.*}}) : (i32, i32, i32, i64, i64, i64, i64, i64, i64, i64, f32, i64, i64) -> i32
// CHECK: scf.if
// CHECK-NEXT: linalg.generic {{.*}} attrs = {linnet.cuda.library = "cublasGemmEx"}
// A bf16 product rounded before the f32 sum (as written) stays generated.
// CHECK-LABEL: func.func @bf16_rounded
// CHECK-NOT: linnet_cuda_gemm
// CHECK: return
// CHECK: func.func private @linnet_cuda_gemm(i32, i32, i32, i64, i64, i64, i64, i64, i64, i64, f32, i64, i64) -> i32
func.func @bf16_exact(%x: memref<?x512xbf16>, %w: memref<256x512xbf16>, %y: memref<?x256xf32>) {
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x512xbf16>, memref<256x512xbf16>) outs(%y : memref<?x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %p = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
func.func @bf16_rounded(%x: memref<?x512xbf16>, %w: memref<256x512xbf16>, %y: memref<?x256xf32>) {
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x512xbf16>, memref<256x512xbf16>) outs(%y : memref<?x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %p = arith.mulf %a, %b : bf16
    %e = arith.extf %p : bf16 to f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  return
}

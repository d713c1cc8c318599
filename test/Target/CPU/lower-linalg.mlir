// -linnet-cpu-lower-linalg through linnet-cpu-compile --emit=loops, with the
// target pinned (AVX-512, 2 MiB L2, 2 threads) so tile sizes are stable.
// RUN: linnet-cpu-compile %s --impl=generated --vector-bits=512 --l2-bytes=2097152 --linalg-min-parallel-macs=0 --prefetch-rows=8 --emit=loops --implementations=%t.gen.json | FileCheck %s --check-prefix=GEN
// RUN: FileCheck %s --check-prefix=GENJSON < %t.gen.json
// RUN: linnet-cpu-compile %s --impl=blas --vector-bits=512 --l2-bytes=2097152 --linalg-min-parallel-macs=0 --emit=loops --implementations=%t.blas.json | FileCheck %s --check-prefix=BLAS
// RUN: FileCheck %s --check-prefix=BLASJSON < %t.blas.json
// By default a product of fewer than 2^22 multiply-adds (every one here)
// stays on one thread: a parallel region costs about what it takes.
// RUN: linnet-cpu-compile %s --impl=generated --vector-bits=512 --l2-bytes=2097152 --emit=loops --implementations=%t.serial.json > /dev/null
// RUN: grep -c '"threads=none' %t.serial.json | FileCheck %s --check-prefix=SERIAL
// SERIAL: {{^4$}}
// RUN: not linnet-cpu-compile %s --impl=fast --emit=loops 2>&1 | FileCheck %s --check-prefix=BADIMPL
// BADIMPL: unknown --impl=fast (auto | generated | blas)

#mA = affine_map<(i, j, k) -> (i, k)>
#mB = affine_map<(i, j, k) -> (j, k)>
#mC = affine_map<(i, j, k) -> (i, j)>

// A matmul whose N (80) is not a multiple of the 32-wide register tile: the
// zero fill is vectorized, M is split over two threads (scf.forall ->
// scf.parallel), the B tile packed into an aligned buffer, the main 8x32
// register tile and the 8x16 remainder become FMAs on vectors, and the
// accumulators are loaded and stored outside the K loop.
// GEN-LABEL: func.func @mm(
// GEN-NOT: linalg.
// GEN: vector.store %{{.*}} : memref<64x80xf32>, vector<64xf32>
// GEN: scf.parallel
// GEN: memref.alloc() {alignment = 64 : i64} : memref<36864xi8>
// GEN: vector.transfer_read {{.*}} vector<8x32xf32>
// GEN: scf.for {{.*}} iter_args({{.*}}) -> (vector<8x32xf32>)
// GEN: vector.fma {{.*}} : vector<32xf32>
// GEN: vector.transfer_write {{.*}} vector<8x32xf32>
// GEN: scf.for {{.*}} iter_args({{.*}}) -> (vector<8x16xf32>)
// GEN: vector.fma {{.*}} : vector<16xf32>
// GEN: memref.dealloc
// GEN: scf.reduce
// GENJSON: "function": "mm", "op": "linalg.matmul", "role": "matmul", "kind": "generated", "routine": "contraction-tiled", "shape": [64, 80, 96], "detail": "threads=[32, 0, 0] cache=[32, 96, 96] register=[8, 32, 1] pack_b=1"
// With a library allowed, the matmul is one sgemm call and its zero fill
// becomes beta = 0.
// BLAS-LABEL: func.func @mm(
// BLAS-NOT: linalg.fill
// BLAS: arith.constant 1.000000e+00 : f32
// BLAS-NEXT: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// BLAS: call @linnet_cblas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BETA]],
// BLASJSON: "function": "mm", "op": "linalg.matmul", "role": "matmul", "kind": "library", "routine": "cblas_sgemm", "shape": [64, 80, 96], "detail": "transA=0 transB=0 beta=0.00"
func.func @mm(%a: memref<64x96xf32>, %b: memref<96x80xf32>, %c: memref<64x80xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<64x80xf32>)
  linalg.matmul ins(%a, %b : memref<64x96xf32>, memref<96x80xf32>) outs(%c : memref<64x80xf32>)
  return
}

// M = 200 over two threads: chunks of 104 rows, the last one 96. The
// register tiles divide M, but not the chunks: a chunk's row count is a
// `min` that does not fold, so the register loop is peeled as a dynamic one
// and its main part keeps static 8x32 tiles (unpeeled, the product ran as
// scalar loops: 1000^3 at 6 GFLOP/s against 150 at 1024^3).
// GEN-LABEL: func.func @mm_chunks(
// GEN: scf.parallel
// GEN: scf.for {{.*}} iter_args({{.*}}) -> (vector<8x32xf32>)
// GEN: vector.fma {{.*}} : vector<32xf32>
// GENJSON: "function": "mm_chunks", "op": "linalg.matmul", "role": "matmul", "kind": "generated", "routine": "contraction-tiled", "shape": [200, 64, 64], "detail": "threads=[104, 0, 0] cache=[104, 64, 64] register=[8, 32, 1] pack_b=1"
func.func @mm_chunks(%a: memref<200x64xf32>, %b: memref<64x64xf32>, %c: memref<200x64xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<200x64xf32>)
  linalg.matmul ins(%a, %b : memref<200x64xf32>, memref<64x64xf32>) outs(%c : memref<200x64xf32>)
  return
}

// y = x W^T as a linalg.generic is recognized as a contraction; sgemm gets
// transB (112 = CblasTrans).
// GEN-LABEL: func.func @linear(
// GEN-NOT: linalg.
// GEN: vector.fma
// GENJSON: "function": "linear", "op": "linalg.generic", "role": "matmul", "kind": "generated", "routine": "contraction-tiled", "shape": [67, 45, 131]
// BLAS-LABEL: func.func @linear(
// BLAS-DAG: %[[T:.*]] = arith.constant 112 : i32
// BLAS-DAG: %[[N:.*]] = arith.constant 111 : i32
// BLAS: call @linnet_cblas_sgemm(%{{.*}}, %[[N]], %[[T]],
// BLASJSON: "function": "linear", "op": "linalg.generic", "role": "matmul", "kind": "library", "routine": "cblas_sgemm", "shape": [67, 45, 131], "detail": "transA=0 transB=1 beta=1.00"
func.func @linear(%x: memref<67x131xf32>, %w: memref<45x131xf32>, %y: memref<67x45xf32>) attributes {llvm.emit_c_interface} {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<67x131xf32>, memref<45x131xf32>) outs(%y : memref<67x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Decode-time y = W x streams W rows once: row blocks over threads, one
// row at a time (a sequential stream the prefetchers follow) with two
// 16-lane accumulators and the row 8 on prefetched, a one-vector loop and a
// scalar tail. Never a library call.
// GEN-LABEL: func.func @matvec(
// GEN: scf.parallel
// GEN: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>)
// GEN: memref.prefetch %{{.*}} : memref<1376x512xf32>
// GEN: vector.load %{{.*}} : memref<1376x512xf32>, vector<16xf32>
// GEN: vector.fma
// GEN: vector.reduction <add>
// GENJSON: "function": "matvec", "op": "linalg.matvec", "role": "matvec", "kind": "generated", "routine": "matvec-stream", "shape": [1376, 1, 512]
// BLASJSON: "function": "matvec", "op": "linalg.matvec", "role": "matvec", "kind": "generated", "routine": "matvec-stream"
func.func @matvec(%w: memref<1376x512xf32>, %x: memref<512xf32>, %y: memref<1376xf32>) attributes {llvm.emit_c_interface} {
  linalg.matvec ins(%w, %x : memref<1376x512xf32>, memref<512xf32>) outs(%y : memref<1376xf32>)
  return
}

// Batch matmul: threads over the batch, unit batch tiles, vectorized.
// GEN-LABEL: func.func @bmm(
// GEN-NOT: linalg.
// GEN: scf.parallel
// GEN: vector.fma
// GENJSON: "function": "bmm", "op": "linalg.batch_matmul", "role": "batch-matmul", "kind": "generated", "routine": "contraction-tiled", "shape": [4, 20, 40, 30], "detail": "threads=[2, 0, 0, 0]
// BLASJSON: "op": "linalg.batch_matmul", "role": "batch-matmul", "kind": "generated"
func.func @bmm(%a: memref<4x20x30xf32>, %b: memref<4x30x40xf32>, %c: memref<4x20x40xf32>) attributes {llvm.emit_c_interface} {
  linalg.batch_matmul ins(%a, %b : memref<4x20x30xf32>, memref<4x30x40xf32>) outs(%c : memref<4x20x40xf32>)
  return
}

// A reduction that is not a contraction becomes loops.
// GEN-LABEL: func.func @rowsum(
// GEN-NOT: linalg.
// GEN: scf.for
// GENJSON: "function": "rowsum", "op": "linalg.generic", "role": "other", "kind": "generated", "routine": "loops"
func.func @rowsum(%a: memref<7x100xf32>, %r: memref<7xf32>) attributes {llvm.emit_c_interface} {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<7x100xf32>) outs(%r : memref<7xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  }
  return
}

// RUN: linnet-opt -linnet-cuda-split-reductions %s | FileCheck %s
// RUN: linnet-opt -linnet-cuda-split-reductions=rows=4 %s | FileCheck %s --check-prefix=ROWS4
// RUN: not linnet-opt -linnet-cuda-split-reductions=rows=33 %s 2>&1 | FileCheck %s --check-prefix=BADROWS

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// A linear layer, W[n, k] summed over k: one warp an output, lane l takes
// k = l, l + 32, ... (its first term starts the partial), the partials in
// shared scratch, then each output adds its lanes in order to its initial
// value.
// CHECK: module attributes {linnet.cuda.implementations = [{detail = "loops=?x256x512 rows=8 lanes=32", function = "linear", kind = "generated", op = "linalg.generic", role = "matmul", routine = "warp-split"}, {detail = "loops=4x256x512", function = "columns", kind = "generated", op = "linalg.generic", role = "matmul", routine = "thread-per-output"}, {detail = "loops=4x8x16", function = "kept", kind = "generated", op = "linalg.generic", role = "matmul", routine = "thread-per-output"}, {detail = "loops=4x8x512", function = "kept", kind = "generated", op = "linalg.generic", role = "matmul", routine = "thread-per-output"}, {detail = "loops=64x96 rows=8 lanes=32", function = "count", kind = "generated", op = "linalg.generic", role = "reduction", routine = "warp-split"}]}
// CHECK-LABEL: func.func @linear
// CHECK-NOT: linalg.generic
// CHECK: %[[TERMS:.*]] = arith.muli %{{.*}}, %c512
// CHECK: %[[USED:.*]] = arith.minui %c32, %[[TERMS]]
// CHECK: scf.parallel (%[[T:.*]]) =
// CHECK: %[[SCRATCH:.*]] = memref.alloc() {linnet.workgroup} : memref<8x32xf32>
// CHECK: scf.parallel (%[[R:.*]], %[[L:.*]]) = (%{{.*}}, %{{.*}}) to (%c8, %c32)
// CHECK: %[[FIRSTX:.*]] = memref.load %arg0[%{{.*}}, %[[L]]]
// CHECK: %[[FIRSTW:.*]] = memref.load %arg1[%{{.*}}, %[[L]]]
// CHECK: %[[FIRST:.*]] = arith.mulf %[[FIRSTX]], %[[FIRSTW]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[L]], %c32
// CHECK: scf.for %[[J:.*]] = %[[NEXT]] to %[[TERMS]] step %c32 iter_args(%[[ACC:.*]] = %[[FIRST]])
// CHECK: arith.addf %[[ACC]], %{{.*}} fastmath<reassoc,contract>
// CHECK: memref.store %{{.*}}, %[[SCRATCH]][%[[R]], %[[L]]]
// CHECK: } {linnet.lanes, linnet.tile_schedule = {block_neighbors = 32 : i64, block_rows = 8 : i64, num_warps = 8 : i64}}
// CHECK: scf.parallel
// CHECK: %[[INIT:.*]] = memref.load %arg2
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[USED]] step %{{.*}} iter_args(%{{.*}} = %[[INIT]])
// CHECK: memref.load %[[SCRATCH]]
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: } {linnet.lanes, linnet.tile_schedule
// CHECK: memref.dealloc %[[SCRATCH]]
// CHECK: } {linnet.schedule = {block_neighbors = 32 : i64, block_rows = 8 : i64, num_warps = 8 : i64}}
// ROWS4-LABEL: func.func @linear
// ROWS4: memref.alloc() {linnet.workgroup} : memref<4x32xf32>
// ROWS4: {linnet.schedule = {block_neighbors = 32 : i64, block_rows = 4 : i64, num_warps = 4 : i64}}
// BADROWS: error: -linnet-cuda-split-reductions: rows must be 1 to 32 (a block is rows warps)
func.func @linear(%x: memref<?x512xf32>, %w: memref<256x512xf32>, %y: memref<?x256xf32>) {
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x512xf32>, memref<256x512xf32>) outs(%y : memref<?x256xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  }
  return
}

// W[k, n] summed over k: one thread an output already reads adjacent
// elements across the warp (n innermost); the op stays.
// CHECK-LABEL: func.func @columns
// CHECK: linalg.generic
func.func @columns(%x: memref<4x512xf32>, %w: memref<512x256xf32>, %y: memref<4x256xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x512xf32>, memref<512x256xf32>) outs(%y : memref<4x256xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Too few terms to share (16 < min-extent), a half-precision sum (kept in
// order until it accumulates in f32) and a maximum (not a sum): kept.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: linalg.generic
func.func @kept(%x: memref<4x16xf32>, %w: memref<8x16xf32>, %y: memref<4x8xf32>,
                %hx: memref<4x512xf16>, %hw: memref<8x512xf16>, %hy: memref<4x8xf16>,
                %mx: memref<4x512xf32>, %mw: memref<8x512xf32>, %my: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x16xf32>, memref<8x16xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%hx, %hw : memref<4x512xf16>, memref<8x512xf16>) outs(%hy : memref<4x8xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %p = arith.mulf %a, %b : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%mx, %mw : memref<4x512xf32>, memref<8x512xf32>) outs(%my : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// An integer count over a row (a comparison summed): exact in any order,
// split; linalg.index in the body is the loop variable.
// CHECK-LABEL: func.func @count
// CHECK-NOT: linalg.generic
// CHECK: memref.alloc() {linnet.workgroup} : memref<8x32xi64>
// CHECK: arith.index_cast %[[LANE:.*]] : index to i64
// CHECK: arith.addi
#rk = affine_map<(r, k) -> (r, k)>
#r = affine_map<(r, k) -> (r)>
func.func @count(%x: memref<64x96xf32>, %n: memref<64xi64>) {
  linalg.generic {indexing_maps = [#rk, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x96xf32>) outs(%n : memref<64xi64>) {
  ^bb0(%a: f32, %acc: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %a, %zero : f32
    %one = arith.extui %pos : i1 to i64
    %w = arith.muli %one, %ki : i64
    %s = arith.addi %w, %acc : i64
    linalg.yield %s : i64
  }
  return
}

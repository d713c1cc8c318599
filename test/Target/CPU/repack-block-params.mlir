// RUN: linnet-opt -linnet-cpu-repack-block-params %s | FileCheck %s

// q4_0 params as the importer reads them: the scale's two bytes and the
// quant byte at k mod 16 + 2 of block k floordiv 32.
#x = affine_map<(m, i, k) -> (m, k)>
#s0 = affine_map<(m, i, k) -> (i, k floordiv 32, 0)>
#s1 = affine_map<(m, i, k) -> (i, k floordiv 32, 1)>
#q = affine_map<(m, i, k) -> (i, k floordiv 32, k mod 16 + 2)>
#y = affine_map<(m, i, k) -> (m, i)>
#w0 = affine_map<(i, k) -> (i, k floordiv 32, 0)>
#w1 = affine_map<(i, k) -> (i, k floordiv 32, 1)>
#wq = affine_map<(i, k) -> (i, k floordiv 32, k mod 16 + 2)>
#id = affine_map<(i, k) -> (i, k)>

// The layout follows the calls: @decode and @prefill pass "up" (16 rows) to
// the private @layer, whose product reads it; @dequant reads it directly.
// Each function that reads it gets one view of the grouped shape [2, 2,
// 144], and its maps the bytes' places: a scale byte at 2 * (row mod 8),
// a quant byte at 16 * (row mod 8) + 16.
// CHECK-DAG: #[[S0:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 8, d2 floordiv 32, (d1 mod 8) * 2)>
// CHECK-DAG: #[[S1:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 8, d2 floordiv 32, (d1 mod 8) * 2 + 1)>
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 8, d2 floordiv 32, (d1 mod 8) * 16 + d2 mod 16 + 16)>
// CHECK: module attributes {linnet.cpu.layouts = {up = "q4_0x8"}}
// CHECK-LABEL: func.func @decode
// CHECK-NOT: reinterpret_cast
// CHECK: call @layer(%{{.*}}, %arg1, %{{.*}})
// CHECK-LABEL: func.func @dequant
// CHECK: %[[D:.*]] = memref.reinterpret_cast %arg0
// CHECK: ins(%[[D]], %[[D]], %[[D]] :
// CHECK-LABEL: func.func private @layer
// CHECK: %[[V:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [2, 2, 144], strides: [288, 144, 1] {linnet.layout = "q4_0x8"} : memref<16x2x18xi8> to memref<2x2x144xi8>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[S0]], #[[S1]], #[[Q]], #{{.*}}]
// CHECK-SAME: ins(%{{.*}}, %[[V]], %[[V]], %[[V]] :

// Not repacked: "emb" is read by a load (a gather), "odd" has 12 rows (not
// a multiple of 8), "shared" is read by a load in @other although @decode
// only takes its product, and "f" is f32.
// CHECK-LABEL: func.func private @product12
// CHECK-NOT: reinterpret_cast
// CHECK-LABEL: func.func private @product8
// CHECK-NOT: reinterpret_cast
// CHECK-LABEL: func.func private @q4

module {
  func.func @decode(%x: memref<1x64xf32>, %up: memref<16x2x18xi8>, %emb: memref<16x2x18xi8>,
                    %odd: memref<12x2x18xi8>, %shared: memref<8x2x18xi8>, %y: memref<1x16xf32>,
                    %yo: memref<1x12xf32>, %ys: memref<1x8xf32>)
      attributes {linnet.tensors = [{arg = 1 : i64, kind = "param", path = "up"},
                                    {arg = 2 : i64, kind = "param", path = "emb"},
                                    {arg = 3 : i64, kind = "param", path = "odd"},
                                    {arg = 4 : i64, kind = "param", path = "shared"}]} {
    call @layer(%x, %up, %y) : (memref<1x64xf32>, memref<16x2x18xi8>, memref<1x16xf32>) -> ()
    %c0 = arith.constant 0 : index
    %b = memref.load %emb[%c0, %c0, %c0] : memref<16x2x18xi8>
    call @product12(%x, %odd, %yo) : (memref<1x64xf32>, memref<12x2x18xi8>, memref<1x12xf32>) -> ()
    call @product8(%x, %shared, %ys) : (memref<1x64xf32>, memref<8x2x18xi8>, memref<1x8xf32>) -> ()
    return
  }
  func.func @prefill(%x: memref<1x64xf32>, %up: memref<16x2x18xi8>, %y: memref<1x16xf32>)
      attributes {linnet.tensors = [{arg = 1 : i64, kind = "param", path = "up"}]} {
    call @layer(%x, %up, %y) : (memref<1x64xf32>, memref<16x2x18xi8>, memref<1x16xf32>) -> ()
    return
  }
  func.func @other(%shared: memref<8x2x18xi8>) -> i8
      attributes {linnet.tensors = [{arg = 0 : i64, kind = "param", path = "shared"}]} {
    %c0 = arith.constant 0 : index
    %b = memref.load %shared[%c0, %c0, %c0] : memref<8x2x18xi8>
    return %b : i8
  }
  func.func @dequant(%up: memref<16x2x18xi8>, %out: memref<16x64xf32>)
      attributes {linnet.tensors = [{arg = 0 : i64, kind = "param", path = "up"}]} {
    linalg.generic {indexing_maps = [#w0, #w1, #wq, #id], iterator_types = ["parallel", "parallel"]}
        ins(%up, %up, %up : memref<16x2x18xi8>, memref<16x2x18xi8>, memref<16x2x18xi8>) outs(%out : memref<16x64xf32>) {
    ^bb0(%lo: i8, %hi: i8, %qb: i8, %o: f32):
      %v = func.call @q4(%lo, %hi, %qb) : (i8, i8, i8) -> f32
      %d = arith.addf %v, %o {linnet.dequant = "q4_0"} : f32
      linalg.yield %d : f32
    }
    return
  }
  func.func private @layer(%x: memref<1x64xf32>, %w: memref<16x2x18xi8>, %y: memref<1x16xf32>) {
    linalg.generic {indexing_maps = [#x, #s0, #s1, #q, #y], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w, %w, %w : memref<1x64xf32>, memref<16x2x18xi8>, memref<16x2x18xi8>, memref<16x2x18xi8>)
        outs(%y : memref<1x16xf32>) {
    ^bb0(%a: f32, %lo: i8, %hi: i8, %qb: i8, %acc: f32):
      %v = func.call @q4(%lo, %hi, %qb) : (i8, i8, i8) -> f32
      %d = arith.mulf %v, %a {linnet.dequant = "q4_0"} : f32
      %s = arith.addf %acc, %d : f32
      linalg.yield %s : f32
    }
    return
  }
  func.func private @product12(%x: memref<1x64xf32>, %w: memref<12x2x18xi8>, %y: memref<1x12xf32>) {
    linalg.generic {indexing_maps = [#x, #s0, #s1, #q, #y], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w, %w, %w : memref<1x64xf32>, memref<12x2x18xi8>, memref<12x2x18xi8>, memref<12x2x18xi8>)
        outs(%y : memref<1x12xf32>) {
    ^bb0(%a: f32, %lo: i8, %hi: i8, %qb: i8, %acc: f32):
      %v = func.call @q4(%lo, %hi, %qb) : (i8, i8, i8) -> f32
      %d = arith.mulf %v, %a {linnet.dequant = "q4_0"} : f32
      %s = arith.addf %acc, %d : f32
      linalg.yield %s : f32
    }
    return
  }
  func.func private @product8(%x: memref<1x64xf32>, %w: memref<8x2x18xi8>, %y: memref<1x8xf32>) {
    linalg.generic {indexing_maps = [#x, #s0, #s1, #q, #y], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w, %w, %w : memref<1x64xf32>, memref<8x2x18xi8>, memref<8x2x18xi8>, memref<8x2x18xi8>)
        outs(%y : memref<1x8xf32>) {
    ^bb0(%a: f32, %lo: i8, %hi: i8, %qb: i8, %acc: f32):
      %v = func.call @q4(%lo, %hi, %qb) : (i8, i8, i8) -> f32
      %d = arith.mulf %v, %a {linnet.dequant = "q4_0"} : f32
      %s = arith.addf %acc, %d : f32
      linalg.yield %s : f32
    }
    return
  }
  func.func private @q4(i8, i8, i8) -> f32
}

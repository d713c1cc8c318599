// Products against block-quantized W (-linnet-cpu-lower-linalg,
// BlockMatvec.cpp): the importer's read of a q8_0 / q4_0 param (its blocks
// three times: the scale's two bytes and the quant's byte at k) becomes a
// streaming kernel that loads each block's quants as a vector, scales each
// block's sums by its f16 scale and prefetches the rows ahead (where the
// CPU needs it: --prefetch-rows pins the distance; 0 emits no prefetch).
// RUN: linnet-cpu-compile %s --impl=generated --vector-bits=512 --prefetch-rows=8 --emit=loops --implementations=%t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: linnet-cpu-compile %s --impl=generated --vector-bits=512 --prefetch-rows=0 --emit=loops | FileCheck %s --check-prefix=NOPF
// NOPF-NOT: memref.prefetch

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#s0 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 32, 0)>
#s1 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 32, 1)>
#q8 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 32, d2 mod 32 + 2)>
#q4 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 32, d2 mod 16 + 2)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @decode_q8
// CHECK: memref.prefetch
// CHECK: vector.load {{.*}} : memref<40x2x34xi8>, vector<2xi8>
// CHECK: vector.bitcast {{.*}} : vector<2xi8> to vector<1xf16>
// CHECK: arith.extf {{.*}} : vector<16xf16> to vector<16xf32>
// CHECK: vector.load {{.*}} : memref<40x2x34xi8>, vector<16xi8>
// CHECK: arith.sitofp {{.*}} : vector<16xi8> to vector<16xf32>
// CHECK: vector.fma
// CHECK-NOT: linalg.generic
func.func @decode_q8(%x: memref<1x64xf32>, %w: memref<40x2x34xi8>, %y: memref<1x40xf32>) {
  %c8 = arith.constant 8 : i16
  linalg.generic {indexing_maps = [#x, #s0, #s1, #q8, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %w, %w : memref<1x64xf32>, memref<40x2x34xi8>, memref<40x2x34xi8>, memref<40x2x34xi8>)
      outs(%y : memref<1x40xf32>) {
  ^bb0(%in: f32, %lo: i8, %hi: i8, %q: i8, %acc: f32):
    %0 = arith.extui %hi : i8 to i16
    %1 = arith.shli %0, %c8 : i16
    %2 = arith.extui %lo : i8 to i16
    %3 = arith.ori %2, %1 : i16
    %4 = arith.bitcast %3 : i16 to f16
    %5 = arith.extf %4 : f16 to f32
    %6 = arith.sitofp %q : i8 to f32
    %7 = arith.mulf %5, %6 {linnet.dequant = "q8_0"} : f32
    %8 = arith.mulf %in, %7 : f32
    %9 = arith.addf %acc, %8 : f32
    linalg.yield %9 : f32
  }
  return
}

// q4_0, any number of rows of x: chunks of 8 rows, then single rows; the
// nibbles split by mask and shift, offset by 8.
// CHECK-LABEL: func.func @prefill_q4
// CHECK: scf.for {{.*}} step %c8
// CHECK: arith.andi {{.*}} : vector<16xi8>
// CHECK: arith.shrui {{.*}} : vector<16xi8>
// CHECK: arith.subi {{.*}} : vector<16xi8>
// CHECK-NOT: linalg.generic
func.func @prefill_q4(%x: memref<?x64xf32>, %w: memref<40x2x18xi8>, %y: memref<?x40xf32>) {
  %c8 = arith.constant 8 : i16
  %c16 = arith.constant 16 : index
  %c0 = arith.constant 0 : index
  %c4i8 = arith.constant 4 : i8
  %c0i8 = arith.constant 0 : i8
  %c15 = arith.constant 15 : i8
  %c8i8 = arith.constant 8 : i8
  linalg.generic {indexing_maps = [#x, #s0, #s1, #q4, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %w, %w : memref<?x64xf32>, memref<40x2x18xi8>, memref<40x2x18xi8>, memref<40x2x18xi8>)
      outs(%y : memref<?x40xf32>) {
  ^bb0(%in: f32, %lo: i8, %hi: i8, %q: i8, %acc: f32):
    %k = linalg.index 2 : index
    %0 = arith.extui %hi : i8 to i16
    %1 = arith.shli %0, %c8 : i16
    %2 = arith.extui %lo : i8 to i16
    %3 = arith.ori %2, %1 : i16
    %4 = arith.bitcast %3 : i16 to f16
    %5 = arith.extf %4 : f16 to f32
    %h = arith.andi %k, %c16 : index
    %high = arith.cmpi ne, %h, %c0 : index
    %sh = arith.select %high, %c4i8, %c0i8 : i8
    %n = arith.shrui %q, %sh : i8
    %m = arith.andi %n, %c15 : i8
    %v = arith.subi %m, %c8i8 : i8
    %6 = arith.sitofp %v : i8 to f32
    %7 = arith.mulf %5, %6 {linnet.dequant = "q4_0"} : f32
    %8 = arith.mulf %in, %7 : f32
    %9 = arith.addf %acc, %8 : f32
    linalg.yield %9 : f32
  }
  return
}

// A product whose body is not x times the dequantized element (here twice
// it) is not a block product: it stays a generic loop nest.
// CHECK-LABEL: func.func @scaled
// CHECK-NOT: vector<16xi8>
// CHECK: return
func.func @scaled(%x: memref<1x64xf32>, %w: memref<40x2x34xi8>, %y: memref<1x40xf32>) {
  %c8 = arith.constant 8 : i16
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#x, #s0, #s1, #q8, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %w, %w : memref<1x64xf32>, memref<40x2x34xi8>, memref<40x2x34xi8>, memref<40x2x34xi8>)
      outs(%y : memref<1x40xf32>) {
  ^bb0(%in: f32, %lo: i8, %hi: i8, %q: i8, %acc: f32):
    %0 = arith.extui %hi : i8 to i16
    %1 = arith.shli %0, %c8 : i16
    %2 = arith.extui %lo : i8 to i16
    %3 = arith.ori %2, %1 : i16
    %4 = arith.bitcast %3 : i16 to f16
    %5 = arith.extf %4 : f16 to f32
    %6 = arith.sitofp %q : i8 to f32
    %7 = arith.mulf %5, %6 {linnet.dequant = "q8_0"} : f32
    %d = arith.mulf %7, %two : f32
    %8 = arith.mulf %in, %d : f32
    %9 = arith.addf %acc, %8 : f32
    linalg.yield %9 : f32
  }
  return
}

// JSON-DAG: "routine": "matvec-stream-q8_0"
// JSON-DAG: "routine": "matvec-stream-q4_0"
// JSON-DAG: "detail": "rows_per_block={{[0-9]+}} lanes=16 rows_of_x=dynamic prefetch_rows=8"

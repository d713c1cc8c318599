// Products against k-quant W (-linnet-cpu-lower-linalg, BlockMatvec.cpp):
// the importer's read of a q6_K param (its super-blocks of 256 read once
// per byte support::blockBytes names: ql, qh, the i8 scale, d's two bytes)
// becomes a streaming kernel that decodes a super-block's 16 scales as one
// vector and widens the quants a vector at a time; under
// --block-products=int8, integer sums of 32 quants against x as q8_0
// (AVX2's pmaddubsw and pmaddwd, or AVX-512 VNNI's vpdpbusd: --int8-dot). A
// generic whose maps are not exactly those bytes (here the scale read one
// byte off) stays what it is.
// RUN: linnet-cpu-compile %s --impl=generated --vector-bits=512 --prefetch-rows=0 --emit=loops --implementations=%t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: linnet-cpu-compile %s --impl=generated --vector-bits=512 --prefetch-rows=0 --block-products=int8 --int8-dot=0 --emit=loops | FileCheck %s --check-prefix=INT8
// RUN: linnet-cpu-compile %s --impl=generated --vector-bits=512 --prefetch-rows=0 --block-products=int8 --int8-dot=1 --emit=loops | FileCheck %s --check-prefix=VNNI

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#ql = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 256, ((d2 mod 256) floordiv 128) * 64 + (((d2 mod 128) floordiv 32) mod 2) * 32 + d2 mod 32)>
#qh = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 256, ((d2 mod 256) floordiv 128) * 32 + d2 mod 32 + 128)>
#sc = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 256, ((d2 mod 256) floordiv 128) * 8 + ((d2 mod 128) floordiv 32) * 2 + (d2 mod 32) floordiv 16 + 192)>
#sc_off = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 256, ((d2 mod 256) floordiv 128) * 8 + ((d2 mod 128) floordiv 32) * 2 + (d2 mod 32) floordiv 16 + 193)>
#dlo = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 256, 208)>
#dhi = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 256, 209)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @decode_q6
// CHECK: vector.load {{.*}} : memref<40x2x210xi8>, vector<16xi8>
// CHECK: arith.sitofp {{.*}} : vector<16xi8> to vector<16xf32>
// CHECK: vector.fma
// CHECK-NOT: linalg.generic
// INT8-LABEL: func.func @decode_q6
// INT8: llvm.call_intrinsic "llvm.x86.avx2.psign.b"
// INT8: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// INT8-NOT: linalg.generic
// INT8-LABEL: func.func @not_q6
// With AVX-512 VNNI one vpdpbusd stands for the pair pmaddubsw, pmaddwd (the same sums).
// VNNI-LABEL: func.func @decode_q6
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
// VNNI-NOT: pmadd
// VNNI-LABEL: func.func @not_q6
// JSON: "function": "decode_q6", {{.*}}"routine": "matvec-stream-q6_K"
// JSON: "function": "not_q6", {{.*}}"routine": "loops"
func.func @decode_q6(%x: memref<1x512xf32>, %w: memref<40x2x210xi8>, %y: memref<1x40xf32>) {
  %c8_i16 = arith.constant 8 : i16
  %c32_i32 = arith.constant 32 : i32
  %c3_i32 = arith.constant 3 : i32
  %c1_i32 = arith.constant 1 : i32
  %c15_i32 = arith.constant 15 : i32
  %c64 = arith.constant 64 : index
  %c0 = arith.constant 0 : index
  %c4_i32 = arith.constant 4 : i32
  %c0_i32 = arith.constant 0 : i32
  %c5 = arith.constant 5 : index
  %c3 = arith.constant 3 : index
  linalg.generic {indexing_maps = [#x, #ql, #qh, #sc, #dlo, #dhi, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %w, %w, %w, %w : memref<1x512xf32>, memref<40x2x210xi8>, memref<40x2x210xi8>, memref<40x2x210xi8>, memref<40x2x210xi8>, memref<40x2x210xi8>)
      outs(%y : memref<1x40xf32>) {
  ^bb0(%in: f32, %l: i8, %h: i8, %s: i8, %lo: i8, %hi: i8, %acc: f32):
    %k = linalg.index 2 : index
    %1 = arith.shrui %k, %c5 : index
    %2 = arith.andi %1, %c3 : index
    %3 = arith.index_castui %2 : index to i32
    %4 = arith.andi %k, %c64 : index
    %5 = arith.cmpi ne, %4, %c0 : index
    %6 = arith.select %5, %c4_i32, %c0_i32 : i32
    %7 = arith.extui %l : i8 to i32
    %8 = arith.shrui %7, %6 : i32
    %9 = arith.andi %8, %c15_i32 : i32
    %10 = arith.shli %3, %c1_i32 : i32
    %11 = arith.extui %h : i8 to i32
    %12 = arith.shrui %11, %10 : i32
    %13 = arith.andi %12, %c3_i32 : i32
    %14 = arith.shli %13, %c4_i32 : i32
    %15 = arith.ori %9, %14 : i32
    %16 = arith.subi %15, %c32_i32 : i32
    %17 = arith.sitofp %s : i8 to f32
    %18 = arith.extui %hi : i8 to i16
    %19 = arith.shli %18, %c8_i16 : i16
    %20 = arith.extui %lo : i8 to i16
    %21 = arith.ori %20, %19 : i16
    %22 = arith.bitcast %21 : i16 to f16
    %23 = arith.extf %22 : f16 to f32
    %24 = arith.mulf %23, %17 : f32
    %25 = arith.sitofp %16 : i32 to f32
    %26 = arith.mulf %24, %25 {linnet.dequant = "q6_K"} : f32
    %27 = arith.mulf %in, %26 : f32
    %28 = arith.addf %acc, %27 : f32
    linalg.yield %28 : f32
  }
  return
}

// The scale read one byte off: not the format's bytes, so not its kernel.
// CHECK-LABEL: func.func @not_q6
// CHECK-NOT: vector.
// CHECK: arith.sitofp {{.*}} : i8 to f32
// CHECK-NOT: vector.
func.func @not_q6(%x: memref<1x512xf32>, %w: memref<40x2x210xi8>, %y: memref<1x40xf32>) {
  %c8_i16 = arith.constant 8 : i16
  %c32_i32 = arith.constant 32 : i32
  %c3_i32 = arith.constant 3 : i32
  %c1_i32 = arith.constant 1 : i32
  %c15_i32 = arith.constant 15 : i32
  %c64 = arith.constant 64 : index
  %c0 = arith.constant 0 : index
  %c4_i32 = arith.constant 4 : i32
  %c0_i32 = arith.constant 0 : i32
  %c5 = arith.constant 5 : index
  %c3 = arith.constant 3 : index
  linalg.generic {indexing_maps = [#x, #ql, #qh, #sc_off, #dlo, #dhi, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %w, %w, %w, %w : memref<1x512xf32>, memref<40x2x210xi8>, memref<40x2x210xi8>, memref<40x2x210xi8>, memref<40x2x210xi8>, memref<40x2x210xi8>)
      outs(%y : memref<1x40xf32>) {
  ^bb0(%in: f32, %l: i8, %h: i8, %s: i8, %lo: i8, %hi: i8, %acc: f32):
    %k = linalg.index 2 : index
    %1 = arith.shrui %k, %c5 : index
    %2 = arith.andi %1, %c3 : index
    %3 = arith.index_castui %2 : index to i32
    %4 = arith.andi %k, %c64 : index
    %5 = arith.cmpi ne, %4, %c0 : index
    %6 = arith.select %5, %c4_i32, %c0_i32 : i32
    %7 = arith.extui %l : i8 to i32
    %8 = arith.shrui %7, %6 : i32
    %9 = arith.andi %8, %c15_i32 : i32
    %10 = arith.shli %3, %c1_i32 : i32
    %11 = arith.extui %h : i8 to i32
    %12 = arith.shrui %11, %10 : i32
    %13 = arith.andi %12, %c3_i32 : i32
    %14 = arith.shli %13, %c4_i32 : i32
    %15 = arith.ori %9, %14 : i32
    %16 = arith.subi %15, %c32_i32 : i32
    %17 = arith.sitofp %s : i8 to f32
    %18 = arith.extui %hi : i8 to i16
    %19 = arith.shli %18, %c8_i16 : i16
    %20 = arith.extui %lo : i8 to i16
    %21 = arith.ori %20, %19 : i16
    %22 = arith.bitcast %21 : i16 to f16
    %23 = arith.extf %22 : f16 to f32
    %24 = arith.mulf %23, %17 : f32
    %25 = arith.sitofp %16 : i32 to f32
    %26 = arith.mulf %24, %25 {linnet.dequant = "q6_K"} : f32
    %27 = arith.mulf %in, %26 : f32
    %28 = arith.addf %acc, %27 : f32
    linalg.yield %28 : f32
  }
  return
}

// Decode's product against a q4_0 param under --block-products int8: the
// param takes the grouped layout (-linnet-cpu-repack-block-params,
// BlockRepack.h) and the kernel computes its eight rows a step in vector
// lanes (BlockMatvec.cpp, int8Grouped): 512-bit vpdpbusd where the code's
// CPU has AVX-512 VNNI, 256-bit pmaddubsw/pmaddwd otherwise, four 32-byte
// (two 64-byte) loads of the group's quants a block, the eight f16 scales
// converted as one vector.
// RUN: linnet-cpu-compile %s --impl=generated --block-products=int8 --int8-dot=1 --vector-bits=512 --prefetch-rows=0 --emit=loops | FileCheck %s --check-prefixes=CHECK,ZMM
// RUN: linnet-cpu-compile %s --impl=generated --block-products=int8 --int8-dot=0 --vector-bits=256 --prefetch-rows=0 --emit=loops | FileCheck %s --check-prefixes=CHECK,YMM
// RUN: linnet-cpu-compile %s --impl=generated --block-products=exact --vector-bits=512 --prefetch-rows=0 --emit=loops | FileCheck %s --check-prefix=EXACT

// CHECK: detail = "{{.*}} products=int8{{.*}} layout=q4_0x8", {{.*}} routine = "matvec-stream-q4_0"
// CHECK-SAME: linnet.cpu.layouts = {up.weight = "q4_0x8"}
// CHECK: %[[V:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [2, 2, 144], strides: [288, 144, 1] {linnet.layout = "q4_0x8"}
// CHECK: vector.load %[[V]][%{{.*}}, %{{.*}}, %c0{{.*}}] : memref<2x2x144xi8>, vector<16xi8>
// CHECK: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// ZMM: vector.load %[[V]]{{.*}} : memref<2x2x144xi8>, vector<64xi8>
// ZMM: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// ZMM: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// ZMM-NOT: vector.reduction
// YMM: vector.load %[[V]]{{.*}} : memref<2x2x144xi8>, vector<32xi8>
// YMM: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// YMM: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// YMM: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// YMM-NOT: vector.reduction

// Exact products keep the file's layout.
// EXACT-NOT: linnet.cpu.layouts
// EXACT-NOT: reinterpret_cast

#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#s0 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 32, 0)>
#s1 = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 32, 1)>
#q = affine_map<(d0, d1, d2) -> (d1, d2 floordiv 32, d2 mod 16 + 2)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>
module {
  func.func @one(%x: memref<1x64xf32>, %w: memref<16x2x18xi8>, %y: memref<1x16xf32>)
      attributes {linnet.tensors = [{arg = 1 : i64, kind = "param", path = "up.weight"}], llvm.emit_c_interface} {
    %c8_i16 = arith.constant 8 : i16
    %c8_i32 = arith.constant 8 : i32
    %c15_i32 = arith.constant 15 : i32
    %c16 = arith.constant 16 : index
    %c0 = arith.constant 0 : index
    %c4_i32 = arith.constant 4 : i32
    %c0_i32 = arith.constant 0 : i32
    %cst = arith.constant 0.000000e+00 : f32
    linalg.fill ins(%cst : f32) outs(%y : memref<1x16xf32>)
    linalg.generic {indexing_maps = [#x, #s0, #s1, #q, #y], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w, %w, %w : memref<1x64xf32>, memref<16x2x18xi8>, memref<16x2x18xi8>, memref<16x2x18xi8>)
        outs(%y : memref<1x16xf32>) {
    ^bb0(%in: f32, %in_0: i8, %in_1: i8, %in_2: i8, %out: f32):
      %0 = linalg.index 2 : index
      %1 = arith.andi %0, %c16 : index
      %2 = arith.cmpi ne, %1, %c0 : index
      %3 = arith.select %2, %c4_i32, %c0_i32 : i32
      %4 = arith.extui %in_2 : i8 to i32
      %5 = arith.shrui %4, %3 : i32
      %6 = arith.andi %5, %c15_i32 : i32
      %7 = arith.subi %6, %c8_i32 : i32
      %8 = arith.sitofp %7 : i32 to f32
      %9 = arith.extui %in_1 : i8 to i16
      %10 = arith.shli %9, %c8_i16 : i16
      %11 = arith.extui %in_0 : i8 to i16
      %12 = arith.ori %11, %10 : i16
      %13 = arith.bitcast %12 : i16 to f16
      %14 = arith.extf %13 : f16 to f32
      %15 = arith.mulf %14, %8 {linnet.dequant = "q4_0"} : f32
      %16 = arith.mulf %in, %15 fastmath<contract> : f32
      %17 = arith.addf %out, %16 fastmath<reassoc,contract> : f32
      linalg.yield %17 : f32
    }
    return
  }
}

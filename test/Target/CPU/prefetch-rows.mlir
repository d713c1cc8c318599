// RUN: linnet-opt -allow-unregistered-dialect -pass-pipeline='builtin.module(func.func(linnet-cpu-prefetch-rows{distance=8}))' %s | FileCheck %s
// RUN: linnet-opt -allow-unregistered-dialect -pass-pipeline='builtin.module(func.func(linnet-cpu-prefetch-rows{distance=0}))' %s | FileCheck %s --check-prefix=OFF

// OFF-NOT: memref.prefetch

// The online softmax's scoring loop: two lanes (heads 2g and 2g + 1) read
// key row first + k of KV head g, 64 f32 values (4 lines), each through an
// inner loop over d. The row 8 keys on is fetched once, clamped to the
// cache's last position, a prefetch per 64-byte line.
// CHECK-LABEL: func.func @scoring
// CHECK: scf.for %[[K:.*]] = %c0 to %{{.*}} step %c1
// CHECK-NEXT: %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %[[K]], %[[C8]] : index
// CHECK-NEXT: %[[J:.*]] = arith.addi %[[FIRST:.*]], %[[AHEAD]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 2047 : index
// CHECK-NEXT: %[[ROW:.*]] = arith.minsi %[[J]], %[[LAST]] : index
// CHECK-NEXT: memref.prefetch %[[CACHE:.*]][%[[G:.*]], %[[ROW]], %c0], read, locality<3>, data : memref<4x2048x64xf32>
// CHECK: memref.prefetch %[[CACHE]][%[[G]], %[[ROW]], %{{.*}}], read, locality<3>, data
// CHECK: memref.prefetch %[[CACHE]][%[[G]], %[[ROW]], %{{.*}}], read, locality<3>, data
// CHECK: memref.prefetch %[[CACHE]][%[[G]], %[[ROW]], %{{.*}}], read, locality<3>, data
// CHECK-NOT: memref.prefetch
// CHECK: scf.for
func.func @scoring(%q: memref<8x64xf32>, %k: memref<4x2048x64xf32>, %first: index, %n: index, %h: index, %g: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 0.0 : f32
  %h1 = arith.addi %h, %c1 : index
  scf.for %kk = %c0 to %n step %c1 {
    %j = arith.addi %first, %kk : index
    %s0 = scf.for %d = %c0 to %c64 step %c1 iter_args(%a = %cst) -> (f32) {
      %x = memref.load %q[%h, %d] : memref<8x64xf32>
      %y = memref.load %k[%g, %j, %d] : memref<4x2048x64xf32>
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %a, %m : f32
      scf.yield %s : f32
    }
    %s1 = scf.for %d = %c0 to %c64 step %c1 iter_args(%a = %cst) -> (f32) {
      %x = memref.load %q[%h1, %d] : memref<8x64xf32>
      %y = memref.load %k[%g, %j, %d] : memref<4x2048x64xf32>
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %a, %m : f32
      scf.yield %s : f32
    }
    "test.use"(%s0, %s1) : (f32, f32) -> ()
  } {linnet.rows}
  return
}

// The summing loop: a vector read of an f16 value row (64 values, 2 lines)
// at a run-time cache length (the clamp reads the dimension).
// CHECK-LABEL: func.func @summing
// CHECK: scf.for %[[K:.*]] =
// CHECK: %[[DIM:.*]] = memref.dim %[[V:.*]], %c1
// CHECK: arith.subi %[[DIM]]
// CHECK: %[[ROW:.*]] = arith.minsi
// CHECK-NEXT: memref.prefetch %[[V]][%{{.*}}, %[[ROW]], %c0]
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK-NEXT: %[[D32:.*]] = arith.addi %c0, %[[C32]]
// CHECK-NEXT: memref.prefetch %[[V]][%{{.*}}, %[[ROW]], %[[D32]]]
// CHECK-NOT: memref.prefetch
// CHECK: vector.load
func.func @summing(%v: memref<4x?x64xf16>, %first: index, %n: index, %g: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %kk = %c0 to %n step %c1 {
    %j = arith.addi %first, %kk : index
    %row = vector.load %v[%g, %j, %c0] : memref<4x?x64xf16>, vector<64xf16>
    "test.use"(%row) : (vector<64xf16>) -> ()
  } {linnet.rows}
  return
}

// Rows the prefetch cannot name ahead: an index loaded from memory (a
// block table), one carried by the loop, a buffer of the function's own
// (not an argument), and a loop the importer did not mark.
// CHECK-LABEL: func.func @unnamed
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @unnamed(%k: memref<2048x64xf32>, %table: memref<2048xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %local = memref.alloc() : memref<2048x64xf32>
  scf.for %kk = %c0 to %n step %c1 {
    %p = memref.load %table[%kk] : memref<2048xindex>
    %x = memref.load %k[%p, %c0] : memref<2048x64xf32>
    %y = memref.load %local[%kk, %c0] : memref<2048x64xf32>
    "test.use"(%x, %y) : (f32, f32) -> ()
  } {linnet.rows}
  %r = scf.for %kk = %c0 to %n step %c1 iter_args(%at = %c0) -> (index) {
    %x = memref.load %k[%at, %c0] : memref<2048x64xf32>
    "test.use"(%x) : (f32) -> ()
    %next = arith.addi %at, %c1 : index
    scf.yield %next : index
  } {linnet.rows}
  scf.for %kk = %c0 to %n step %c1 {
    %x = memref.load %k[%kk, %c0] : memref<2048x64xf32>
    "test.use"(%x) : (f32) -> ()
  }
  memref.dealloc %local : memref<2048x64xf32>
  return
}

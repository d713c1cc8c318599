// RUN: linnet-opt -linnet-cuda-cpuify %s -split-input-file -verify-diagnostics | FileCheck %s

// A neighbor tile loop with barriers inside: the loop runs once for the
// block, each piece between its barriers over every thread; its bound, a
// value every thread computes alike (linnet.uniform), is computed once for
// the block, before the loop.
// CHECK-LABEL: func.func @tiles
// CHECK: scf.parallel (%[[BX:.*]], %{{.*}}, %{{.*}}) =
// CHECK: %[[SCRATCH:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[N:.*]] = scf.for {{.*}} -> (index) {
// CHECK: } {linnet.uniform}
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[N]] step
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for %[[TX:.*]] =
// CHECK: memref.store %{{.*}}, %[[SCRATCH]][%[[TX]]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[SCRATCH]]
// CHECK-NOT: gpu.barrier
// CHECK: memref.dealloc %[[SCRATCH]]
func.func @tiles(%n: index, %data: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %scratch = memref.alloc() {linnet.workgroup} : memref<4xf32>
    %base = arith.muli %bx, %c4 : index
    %tiles = scf.for %i = %c0 to %n step %c1 iter_args(%m = %base) -> (index) {
      %next = arith.addi %m, %c1 : index
      scf.yield %next : index
    } {linnet.uniform}
    scf.for %t = %c0 to %tiles step %c1 {
      %v = memref.load %data[%t] : memref<?xf32>
      memref.store %v, %scratch[%tx] : memref<4xf32>
      gpu.barrier
      %w = memref.load %scratch[%c0] : memref<4xf32>
      memref.store %w, %out[%tx] : memref<?xf32>
      gpu.barrier
    } {linnet.neighbor_tiles}
    gpu.terminator
  }
  return
}

// -----

// A barrier under a condition: not every thread may reach it.
func.func @conditional(%p: i1) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.if %p {
      // expected-error @below {{cpuify: a barrier inside control flow cannot be split}}
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// A tile loop bounded by a value of the thread: not alike in every thread.
func.func @threaded(%data: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @below {{cpuify: a value every thread must compute alike depends on the thread}}
    scf.for %t = %c0 to %tx step %c1 {
      gpu.barrier
    } {linnet.neighbor_tiles}
    gpu.terminator
  }
  return
}

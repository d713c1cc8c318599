// RUN: linnet-opt -linnet-cpu-parallelize-element-loops -split-input-file %s | FileCheck %s

// Decode's attention after bufferization: one query row times 4 heads,
// each folding over the keys, writing its own row of `out`; the fold's
// scratch is one buffer bufferization shared between the heads. The nest
// becomes one parallel loop over both axes, and each head gets its scratch.
// CHECK-LABEL: func.func @heads
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%[[S:.*]], %[[H:.*]]) = (%c0, %c0) to (%c1, %c4) step (%c1, %c1) {
// CHECK-NEXT: %[[OWN:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK: memref.store %{{.*}}, %[[OWN]][%{{.*}}]
// CHECK: memref.store %{{.*}}, %arg1[%[[S]], %[[H]], %{{.*}}]
// CHECK: memref.dealloc %[[OWN]]
// CHECK-NOT: scf.for {{.*}} {linnet.elements}
func.func @heads(%keys: memref<100x8xf32>, %out: memref<1x4x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %scratch = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  scf.for %s = %c0 to %c1 step %c1 {
    scf.for %h = %c0 to %c4 step %c1 {
      scf.for %d = %c0 to %c8 step %c1 {
        memref.store %zero, %scratch[%d] : memref<8xf32>
      }
      scf.for %j = %c0 to %n step %c1 {
        scf.for %d = %c0 to %c8 step %c1 {
          %a = memref.load %scratch[%d] : memref<8xf32>
          %k = memref.load %keys[%j, %d] : memref<100x8xf32>
          %sum = arith.addf %a, %k : f32
          memref.store %sum, %scratch[%d] : memref<8xf32>
        }
      }
      scf.for %d = %c0 to %c8 step %c1 {
        %v = memref.load %scratch[%d] : memref<8xf32>
        memref.store %v, %out[%s, %h, %d] : memref<1x4x8xf32>
      }
    } {linnet.elements}
  } {linnet.elements}
  memref.dealloc %scratch : memref<8xf32>
  return
}

// -----

// Each element writes the same place of a buffer from outside (a value of
// the function, not a scratch it could have alone): the loop stays serial.
// CHECK-LABEL: func.func @same_place
// CHECK-NOT: scf.parallel
// CHECK: scf.for {{.*}} {
// CHECK: } {linnet.elements}
func.func @same_place(%acc: memref<1xf32>, %x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %h = %c0 to %c4 step %c1 {
    %v = memref.load %x[%h] : memref<4xf32>
    scf.for %i = %c0 to %c1 step %c1 {
      memref.store %v, %acc[%c0] : memref<1xf32>
    }
  } {linnet.elements}
  return
}

// -----

// An element holding parallel work of its own (the linalg stage's tiles)
// stays a loop: a nested OpenMP region would gain nothing.
// CHECK-LABEL: func.func @tiles_inside
// CHECK: scf.for
// CHECK: scf.parallel
// CHECK: } {linnet.elements}
func.func @tiles_inside(%out: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.for %h = %c0 to %c4 step %c1 {
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      memref.store %one, %out[%h, %i] : memref<4x64xf32>
    }
  } {linnet.elements}
  return
}

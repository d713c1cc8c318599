// RUN: linnet-opt -allow-unregistered-dialect -pass-pipeline='builtin.module(func.func(linnet-cpu-merge-parallel-loops))' %s | FileCheck %s

// Two products over the threads (q and k of one x): the second's output
// buffer and its fill move before the first loop, the first's scratch is
// freed after both, and one loop runs both bodies.
// CHECK-LABEL: func.func @qk
// CHECK: %[[Q:.*]] = memref.alloc() : memref<512xf32>
// CHECK: %[[S:.*]] = memref.alloc() : memref<16xf32>
// CHECK: %[[K:.*]] = memref.alloc() : memref<256xf32>
// CHECK: memref.store %{{.*}}, %[[K]][%c0]
// CHECK: scf.parallel (%[[T:.*]]) =
// CHECK: memref.load %[[S]][%[[T]]]
// CHECK: memref.store %{{.*}}, %[[Q]][%[[T]]]
// CHECK: memref.store %{{.*}}, %[[K]][%[[T]]]
// CHECK-NOT: scf.parallel
// CHECK: memref.dealloc %[[S]] : memref<16xf32>
// CHECK: "test.use"(%[[Q]], %[[K]])
func.func @qk(%x: memref<512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %q = memref.alloc() : memref<512xf32>
  %scratch = memref.alloc() : memref<16xf32>
  scf.parallel (%t) = (%c0) to (%c2) step (%c1) {
    %s = memref.load %scratch[%t] : memref<16xf32>
    %v = memref.load %x[%t] : memref<512xf32>
    %p = arith.mulf %s, %v : f32
    memref.store %p, %q[%t] : memref<512xf32>
    scf.reduce
  } loc("linnet.static_schedule")
  memref.dealloc %scratch : memref<16xf32>
  %k = memref.alloc() : memref<256xf32>
  memref.store %zero, %k[%c0] : memref<256xf32>
  scf.parallel (%t) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %x[%t] : memref<512xf32>
    memref.store %v, %k[%t] : memref<256xf32>
    scf.reduce
  } loc("linnet.static_schedule")
  "test.use"(%q, %k) : (memref<512xf32>, memref<256xf32>) -> ()
  return
}

// Loops that stay apart: the second reads what the first writes; the
// work between reads it; other iterations; a loop of another schedule; a
// call in the body; a write through an argument.
// CHECK-LABEL: func.func @apart
// CHECK-COUNT-10: scf.parallel
// CHECK-NOT: scf.parallel
func.func @apart(%x: memref<512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %q = memref.alloc() : memref<512xf32>
  %k = memref.alloc() : memref<512xf32>
  scf.parallel (%t) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %x[%t] : memref<512xf32>
    memref.store %v, %q[%t] : memref<512xf32>
    scf.reduce
  } loc("linnet.static_schedule")
  scf.parallel (%t) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %q[%t] : memref<512xf32>
    memref.store %v, %k[%t] : memref<512xf32>
    scf.reduce
  } loc("linnet.static_schedule")
  %r = memref.alloc() : memref<512xf32>
  %m = memref.alloc() : memref<512xf32>
  %l = memref.load %k[%c0] : memref<512xf32>
  memref.store %l, %m[%c0] : memref<512xf32>
  scf.parallel (%t) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %x[%t] : memref<512xf32>
    memref.store %v, %r[%t] : memref<512xf32>
    scf.reduce
  } loc("linnet.static_schedule")
  %u = memref.alloc() : memref<512xf32>
  scf.parallel (%t) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %x[%t] : memref<512xf32>
    memref.store %v, %u[%t] : memref<512xf32>
    scf.reduce
  } loc("linnet.static_schedule")
  %w = memref.alloc() : memref<512xf32>
  scf.parallel (%t) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %x[%t] : memref<512xf32>
    memref.store %v, %w[%t] : memref<512xf32>
    scf.reduce
  }
  %y = memref.alloc() : memref<512xf32>
  scf.parallel (%t) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %x[%t] : memref<512xf32>
    memref.store %v, %y[%t] : memref<512xf32>
    scf.reduce
  } loc("linnet.static_schedule")
  %z = memref.alloc() : memref<512xf32>
  scf.parallel (%t) = (%c0) to (%c2) step (%c1) {
    func.call @opaque(%z) : (memref<512xf32>) -> ()
    scf.reduce
  } loc("linnet.static_schedule")
  // Writes through an argument: its aliases are not in view.
  scf.parallel (%t) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %q[%t] : memref<512xf32>
    memref.store %v, %x[%t] : memref<512xf32>
    scf.reduce
  } loc("linnet.static_schedule")
  %e = memref.alloc() : memref<512xf32>
  scf.parallel (%t) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %k[%t] : memref<512xf32>
    memref.store %v, %e[%t] : memref<512xf32>
    scf.reduce
  } loc("linnet.static_schedule")
  // The second reads what the first writes.
  %f = memref.alloc() : memref<512xf32>
  scf.parallel (%t) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %e[%t] : memref<512xf32>
    memref.store %v, %f[%t] : memref<512xf32>
    scf.reduce
  } loc("linnet.static_schedule")
  "test.use"(%q, %k, %m, %r, %u, %w, %y, %z, %e, %f) : (memref<512xf32>, memref<512xf32>, memref<512xf32>, memref<512xf32>, memref<512xf32>, memref<512xf32>, memref<512xf32>, memref<512xf32>, memref<512xf32>, memref<512xf32>) -> ()
  return
}
func.func private @opaque(memref<512xf32>)

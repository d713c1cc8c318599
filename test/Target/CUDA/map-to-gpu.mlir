// RUN: linnet-opt -linnet-cuda-map-to-gpu %s | FileCheck %s
// RUN: linnet-opt -linnet-cuda-map-to-gpu=lane-tiles-only=true -linnet-cuda-map-to-gpu %s | FileCheck %s --check-prefix=ELEMENTS

// A scalar the kernel computes, read in the body of a pure host loop (no
// operand of the loop itself): the loop joins the kernel, it does not stay
// on the host ahead of the value it reads.
// CHECK-LABEL: func.func @scalar_in_loop_body
// CHECK: gpu.launch
// CHECK: %[[M:.*]] = memref.load %arg0
// CHECK: scf.for
// CHECK: arith.minsi %{{.*}}, %[[M]]
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: return

// A call ends the kernel of the ops before it: the state is written before
// the callee's kernels read it, and what follows is a kernel of its own.
// CHECK-LABEL: func.func @call_ends_kernel
// CHECK: gpu.launch
// CHECK: memref.store %cst, %arg0
// CHECK: gpu.terminator
// CHECK: call @callee(%arg0)
// CHECK: gpu.launch
// CHECK: memref.load %arg0
// CHECK: gpu.terminator

// Host control flow around a parallel loop stays on the host; the loop
// inside becomes the kernel (a library call's fallback, -linnet-cuda-bind-library).
// CHECK-LABEL: func.func @guarded
// CHECK: scf.if %arg0 {
// CHECK: gpu.launch
// CHECK: memref.store
// CHECK: gpu.terminator
func.func private @callee(memref<1xf32>)
func.func @scalar_in_loop_body(%x: memref<4xi32>, %y: memref<1xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %big = arith.constant 2147483647 : i32
  %m = memref.load %x[%c0] : memref<4xi32>
  %min = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %big) -> (i32) {
    %n = arith.minsi %acc, %m : i32
    scf.yield %n : i32
  }
  memref.store %min, %y[%c0] : memref<1xi32>
  return
}
func.func @call_ends_kernel(%s: memref<1xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %s[%c0] : memref<1xf32>
  call @callee(%s) : (memref<1xf32>) -> ()
  %v = memref.load %s[%c0] : memref<1xf32>
  memref.store %v, %out[%c0] : memref<1xf32>
  return
}
func.func @guarded(%fallback: i1, %x: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.if %fallback {
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %zero, %x[%i] : memref<8xf32>
    }
  }
  return
}

// A comprehension's element loop (`linnet.elements`, the importer's mark:
// one attention head's context vector an iteration) runs its iterations in
// parallel, each a thread with its own scratch (stack memory).
// ELEMENTS-LABEL: func.func @elements
// ELEMENTS-NOT: scf.for %{{.*}} = %c0 to %c8
// ELEMENTS: gpu.launch
// ELEMENTS: memref.alloca() : memref<64xf32>
// ELEMENTS: scf.if
// ELEMENTS: scf.for
// ELEMENTS: memref.store
// An element loop that calls a function stays a host loop.
// ELEMENTS-LABEL: func.func @elements_kept
// ELEMENTS: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// ELEMENTS: call @callee
// ELEMENTS: } {linnet.elements}
func.func @elements(%x: memref<8x64xf32>, %y: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.for %h = %c0 to %c8 step %c1 {
    %tmp = memref.alloc() : memref<64xf32>
    scf.for %d = %c0 to %c64 step %c1 {
      %v = memref.load %x[%h, %d] : memref<8x64xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %tmp[%d] : memref<64xf32>
    }
    scf.for %d = %c0 to %c64 step %c1 {
      %v = memref.load %tmp[%d] : memref<64xf32>
      memref.store %v, %y[%h, %d] : memref<8x64xf32>
    }
    memref.dealloc %tmp : memref<64xf32>
  } {linnet.elements}
  return
}
func.func @elements_kept(%s: memref<1xf32>, %y: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %h = %c0 to %c8 step %c1 {
    func.call @callee(%s) : (memref<1xf32>) -> ()
  } {linnet.elements}
  return
}

// A perfect nest of element loops ([s: S, h: 8], the loop over s holding
// only the loop over h) is one two-dimensional parallel loop: a thread an
// element, not a thread a row of them (decode has S = 1).
// ELEMENTS-LABEL: func.func @elements_nest
// ELEMENTS-NOT: scf.for
// ELEMENTS: gpu.launch
// ELEMENTS: arith.remui
// ELEMENTS: arith.divui
// ELEMENTS: memref.load %arg0
// ELEMENTS: memref.store
func.func @elements_nest(%x: memref<?x8xf32>, %y: memref<?x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %s = %c0 to %n step %c1 {
    scf.for %h = %c0 to %c8 step %c1 {
      %v = memref.load %x[%s, %h] : memref<?x8xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %y[%s, %h] : memref<?x8xf32>
    } {linnet.elements}
  } {linnet.elements}
  return
}
// The inner loop's bound depends on the outer index: only the outer loop is
// parallel, the inner one runs in its thread.
// ELEMENTS-LABEL: func.func @elements_ragged
// ELEMENTS: gpu.launch
// ELEMENTS: scf.for %{{.*}} = %c0 to %{{.*}} step %c1 {
func.func @elements_ragged(%y: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  scf.for %s = %c0 to %c8 step %c1 {
    scf.for %h = %c0 to %s step %c1 {
      memref.store %f, %y[%s, %h] : memref<8x8xf32>
    } {linnet.elements}
  } {linnet.elements}
  return
}

// A buffer of run-time size allocated in a thread's work (a branch of an
// element computing a tensor) is the thread's slice of one byte buffer the
// host allocates for the launch, a 64-byte-rounded slice per thread, and
// frees after it.
// CHECK-LABEL: func.func @private_runtime_size
// CHECK: %[[BUF:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xi8>
// CHECK: gpu.launch
// CHECK: memref.view %[[BUF]][%{{.*}}][%arg2] : memref<?xi8> to memref<?xf32>
// CHECK-NOT: memref.alloc
// CHECK: gpu.terminator
// CHECK: memref.dealloc %[[BUF]]
func.func @private_runtime_size(%x: memref<?xf32>, %y: memref<?xf32>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memref.alloc(%m) : memref<?xf32>
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %x[%j] : memref<?xf32>
      memref.store %v, %t[%j] : memref<?xf32>
    }
    %w = memref.load %t[%c0] : memref<?xf32>
    memref.store %w, %y[%i] : memref<?xf32>
    memref.dealloc %t : memref<?xf32>
    scf.reduce
  }
  return
}

// A run-time loop carrying a buffer (an RNN's hidden state over the
// input's length) stays on the host: the buffers are the host's, each
// step's work is a kernel.
// CHECK-LABEL: func.func @host_loop_carrying_buffer
// CHECK: scf.while
// CHECK: } do {
// CHECK: gpu.launch
// CHECK: scf.yield
func.func @host_loop_carrying_buffer(%h0: memref<1xf32>, %n: index) -> memref<1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.while (%h = %h0, %t = %c0) : (memref<1xf32>, index) -> (memref<1xf32>, index) {
    %go = arith.cmpi slt, %t, %n : index
    scf.condition(%go) %h, %t : memref<1xf32>, index
  } do {
  ^bb0(%h: memref<1xf32>, %t: index):
    %next = memref.alloc() : memref<1xf32>
    %v = memref.load %h[%c0] : memref<1xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %next[%c0] : memref<1xf32>
    %t1 = arith.addi %t, %c1 : index
    scf.yield %next, %t1 : memref<1xf32>, index
  }
  return %r#0 : memref<1xf32>
}

// A lone read of a scalar buffer the host needs (an entry's position) is a
// copy of the element to the host: no one-thread kernel, no buffer between.
// CHECK-LABEL: func.func @scalar_input_read
// CHECK-NOT: gpu.launch
// CHECK: %[[P:.*]] = memref.load %arg0[] {linnet.cuda.host_read}
// CHECK: gpu.launch
// CHECK: arith.addi %{{.*}}, %[[P]]
// CHECK: memref.store
func.func @scalar_input_read(%pos: memref<index>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %p = memref.load %pos[] : memref<index>
  %n = memref.dim %y, %c0 : memref<?xf32>
  %e = arith.subi %n, %p : index
  scf.parallel (%i) = (%c0) to (%e) step (%c1) {
    %j = arith.addi %i, %p : index
    memref.store %one, %y[%j] : memref<?xf32>
    scf.reduce
  }
  return
}

// Scratch allocated before the element loops that use it (bufferization's
// one buffer for every element, reused by the next comprehension once its
// value is dead) is each element's own: one buffer written by every thread
// at once was a race (zoo/encoder's attention on the device). Each loop
// gets its own, in the innermost body of its nest: the thread's stack.
// ELEMENTS-LABEL: func.func @element_scratch_outside
// ELEMENTS-NOT: memref.alloc()
// ELEMENTS: gpu.launch
// ELEMENTS: memref.alloca() : memref<4xf32>
// ELEMENTS: gpu.terminator
// ELEMENTS: gpu.launch
// ELEMENTS: memref.alloca() : memref<4xf32>
// ELEMENTS: gpu.terminator
// ELEMENTS-NOT: memref.dealloc
// ELEMENTS: return
func.func @element_scratch_outside(%x: memref<8x4xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %d = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i, %d] : memref<8x4xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %s[%d] : memref<4xf32>
    }
    %t = scf.for %d = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %s[%d] : memref<4xf32>
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    memref.store %t, %y[%i] : memref<8xf32>
  } {linnet.elements}
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %d = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i, %d] : memref<8x4xf32>
      memref.store %v, %s[%d] : memref<4xf32>
    }
    %v = memref.load %s[%c0] : memref<4xf32>
    memref.store %v, %z[%i] : memref<8xf32>
  } {linnet.elements}
  memref.dealloc %s : memref<4xf32>
  return
}

// A buffer the element loops write at their elements' own indices is their
// result (a split fold's partials, combined by the next loop): it stays one
// buffer, shared by the kernels.
// ELEMENTS-LABEL: func.func @element_results_shared
// ELEMENTS: %[[P:.*]] = memref.alloc() : memref<8xf32>
// ELEMENTS: gpu.launch
// ELEMENTS: memref.store %{{.*}}, %[[P]]
// ELEMENTS: gpu.launch
// ELEMENTS: memref.load %[[P]]
// ELEMENTS: memref.dealloc %[[P]]
func.func @element_results_shared(%x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %p = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %p[%i] : memref<8xf32>
  } {linnet.elements}
  scf.for %i = %c0 to %c8 step %c1 {
    %j = arith.subi %c8, %i : index
    %k = arith.subi %j, %c1 : index
    %v = memref.load %p[%k] : memref<8xf32>
    memref.store %v, %y[%i] : memref<8xf32>
  } {linnet.elements}
  memref.dealloc %p : memref<8xf32>
  return
}

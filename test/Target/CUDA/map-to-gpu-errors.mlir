// RUN: linnet-opt -linnet-cuda-map-to-gpu -split-input-file -verify-diagnostics %s

// A thread's buffer whose size the thread computes (here from its index):
// no buffer of the launch can be sized before it, so the mapping refuses it
// at the allocation rather than compile a wrong kernel.
func.func @size_computed_in_kernel(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %m = arith.addi %i, %c1 : index
    // expected-error @+1 {{the cuda target cannot yet allocate a buffer inside a kernel whose size the kernel computes}}
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

// -----

// A buffer of run-time size with an element type a byte buffer cannot be
// viewed as (index: its width is the target's).
func.func @index_elements(%x: memref<?xindex>, %y: memref<?xindex>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xindex>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    // expected-error @+1 {{the cuda target cannot yet allocate a buffer of run-time size inside a kernel}}
    %t = memref.alloc(%m) : memref<?xindex>
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %x[%j] : memref<?xindex>
      memref.store %v, %t[%j] : memref<?xindex>
    }
    %w = memref.load %t[%c0] : memref<?xindex>
    memref.store %w, %y[%i] : memref<?xindex>
    memref.dealloc %t : memref<?xindex>
    scf.reduce
  }
  return
}

// RUN: linnet-opt -linnet-cpu-pack-arena -split-input-file %s | FileCheck %s

// Three temporaries of a block, the first two live at once, the third
// after the first: two slots, the third in the first's (large enough);
// one arena of static size, each dealloc gone and the arena's after the
// last.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: linnet.workspace_peak = 320 : i64
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64, linnet.workspace, linnet.workspace_bytes = 320 : i64} : memref<320xi8>
// CHECK: memref.view %[[A]][%[[ZERO:.*]]][] : memref<320xi8> to memref<64xf32>
// CHECK: memref.view %[[A]][%c256][] : memref<320xi8> to memref<16xf32>
// CHECK: memref.view %[[A]][%[[ZERO]]][] : memref<320xi8> to memref<32xf32>
// CHECK-NOT: memref.alloc
// CHECK: memref.dealloc %[[A]]
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @chain(%in: memref<64xf32>, %out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  memref.copy %in, %a : memref<64xf32> to memref<64xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  %x = memref.load %a[%c0] : memref<64xf32>
  memref.store %x, %b[%c0] : memref<16xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<32xf32>
  %y = memref.load %b[%c0] : memref<16xf32>
  memref.store %y, %c[%c0] : memref<32xf32>
  memref.copy %c, %out : memref<32xf32> to memref<32xf32>
  memref.dealloc %a : memref<64xf32>
  memref.dealloc %b : memref<16xf32>
  memref.dealloc %c : memref<32xf32>
  return
}

// -----

// Dynamic sizes: a slot per size expression, static slots first; the
// arena's size is computed where it is taken, and a size computed after
// that place (a clamp of an argument) moves there. Its bound: the clamp's.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: linnet.workspace_peak = 1088 : i64
// CHECK: %[[N:.*]] = arith.minsi %arg1, %c32
// CHECK: %[[A:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64, linnet.workspace, linnet.workspace_bound = 1088 : i64} : memref<?xi8>
// CHECK: memref.view %[[A]][%c64{{.*}}][%[[N]]] : memref<?xi8> to memref<?x8xf32>
// CHECK: memref.view %[[A]][%c0{{.*}}][] : memref<?xi8> to memref<4xf32>
func.func @dynamic(%in: memref<?x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %m = arith.minsi %n, %c32 : index
  %a = memref.alloc(%m) : memref<?x8xf32>
  %x = memref.load %in[%c0, %c0] : memref<?x8xf32>
  memref.store %x, %a[%c0, %c0] : memref<?x8xf32>
  %b = memref.alloc() : memref<4xf32>
  %y = memref.load %a[%c0, %c0] : memref<?x8xf32>
  memref.store %y, %b[%c0] : memref<4xf32>
  memref.dealloc %a : memref<?x8xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// The new rows decode writes, `max(min(P + 1, W), c) - c` with c the clamp
// of P: at most one, which is the arena's bound.
// CHECK-LABEL: func.func @window
// CHECK: linnet.workspace_bound = 1024 : i64
func.func @window(%p: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %z = arith.constant 0.0 : f32
  %p1 = arith.addi %p, %c1 : index
  %hi = arith.minsi %p1, %c256 : index
  %lo0 = arith.minsi %p, %c256 : index
  %lo = arith.maxsi %lo0, %c0 : index
  %top = arith.maxsi %hi, %lo : index
  %rows = arith.subi %top, %lo : index
  %a = memref.alloc(%rows) : memref<4x?x64xf32>
  memref.store %z, %a[%c0, %c0, %c0] : memref<4x?x64xf32>
  memref.dealloc %a : memref<4x?x64xf32>
  return
}

// -----

// A loop body's temporary is taken from the stack each iteration; the
// function's peak is its own arena plus the deepest nested one, and a
// caller's adds its callee's. A buffer returned is left alone.
// CHECK-LABEL: func.func private @callee
// CHECK-SAME: linnet.workspace_peak = 192 : i64
// CHECK: scf.for
// CHECK: memref.alloc() {alignment = 64 : i64, linnet.workspace, linnet.workspace_bytes = 128 : i64} : memref<128xi8>
// CHECK-LABEL: func.func @caller
// CHECK-SAME: linnet.workspace_peak = 256 : i64
// CHECK-LABEL: func.func @escapes
// CHECK-NEXT: memref.alloc() : memref<8xf32>
// CHECK-NEXT: return
func.func private @callee(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<16xf32>
  memref.store %z, %t[%c0] : memref<16xf32>
  scf.for %i = %c0 to %n step %c1 {
    %s = memref.alloc() : memref<8xf32>
    %u = memref.alloc() : memref<8xf32>
    memref.store %z, %s[%c0] : memref<8xf32>
    memref.store %z, %u[%c0] : memref<8xf32>
    memref.dealloc %s : memref<8xf32>
    memref.dealloc %u : memref<8xf32>
  }
  memref.dealloc %t : memref<16xf32>
  return
}
func.func @caller(%n: index) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<16xf32>
  memref.store %z, %t[%c0] : memref<16xf32>
  call @callee(%n) : (index) -> ()
  memref.dealloc %t : memref<16xf32>
  return
}
func.func @escapes() -> memref<8xf32> {
  %t = memref.alloc() : memref<8xf32>
  return %t : memref<8xf32>
}

// -----

// A BLAS call takes a view's address as an integer: it becomes the
// arena's address plus the view's offset (-expand-strided-metadata would
// take the arena's own), and keeps the view alive until the last call
// that uses it, so the next temporary does not take its place.
// CHECK-LABEL: func.func @address
// CHECK: %[[A:.*]] = memref.alloc() {{.*}}linnet.workspace_bytes = 192 : i64} : memref<192xi8>
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[P:.*]] = arith.addi %[[BASE]], %c64
// CHECK: call @use(%[[P]])
// CHECK: memref.view %[[A]][%c128][] : memref<192xi8> to memref<16xf32>
// CHECK: call @use(%[[P]])
func.func private @use(index)
func.func @address() {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<16xf32>
  memref.store %z, %a[%c0] : memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  %p = memref.extract_aligned_pointer_as_index %b : memref<16xf32> -> index
  call @use(%p) : (index) -> ()
  %c = memref.alloc() : memref<16xf32>
  memref.store %z, %c[%c0] : memref<16xf32>
  call @use(%p) : (index) -> ()
  %x = memref.load %a[%c0] : memref<16xf32>
  memref.store %x, %c[%c0] : memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  memref.dealloc %c : memref<16xf32>
  return
}

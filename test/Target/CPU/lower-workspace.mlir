// RUN: linnet-opt -linnet-cpu-lower-workspace -split-input-file %s | FileCheck %s

// An arena is a push on the thread's workspace stack, its dealloc the pop
// of what the push returned; the views of it read the descriptor built
// from that address. Buffers that are not arenas stay heap allocations.
// CHECK-LABEL: func.func @arena
// CHECK: %[[N:.*]] = arith.index_cast %arg0 : index to i64
// CHECK: %[[P:.*]] = llvm.call @linnet_workspace_push(%[[N]]) : (i64) -> !llvm.ptr
// CHECK: %[[M:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<?xi8>
// CHECK: memref.view %[[M]]
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: llvm.call @linnet_workspace_pop(%[[P]]) : (!llvm.ptr) -> ()
// CHECK-NOT: memref.dealloc %[[M]]
// CHECK: llvm.func @linnet_workspace_push(i64) -> !llvm.ptr
// CHECK: llvm.func @linnet_workspace_pop(!llvm.ptr)
func.func @arena(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %z = arith.constant 1.0 : f32
  %a = memref.alloc(%n) {alignment = 64 : i64, linnet.workspace} : memref<?xi8>
  %v = memref.view %a[%c0][] : memref<?xi8> to memref<4xf32>
  memref.store %z, %v[%c0] : memref<4xf32>
  %h = memref.alloc() : memref<4xf32>
  memref.store %z, %h[%c0] : memref<4xf32>
  %x = memref.load %v[%c0] : memref<4xf32>
  memref.dealloc %h : memref<4xf32>
  memref.dealloc %a : memref<?xi8>
  return %x : f32
}

// -----

// A static arena pushes its constant size.
// CHECK-LABEL: func.func @fixed
// CHECK: %[[N:.*]] = llvm.mlir.constant(256 : i64) : i64
// CHECK: llvm.call @linnet_workspace_push(%[[N]])
func.func @fixed() {
  %a = memref.alloc() {alignment = 64 : i64, linnet.workspace} : memref<256xi8>
  memref.dealloc %a : memref<256xi8>
  return
}

// RUN: linnet-opt %s -linnet-uplift-counted-while | FileCheck %s
// RUN: linnet-opt %s -linnet-uplift-counted-while -linnet-bufferize | FileCheck %s --check-prefix=BUF

// A `while s < S { ...; s = s + 1 }` carrying a state (a KV cache written
// row by row) becomes an scf.for; bufferized, the cache is written in
// place, with no copy of it an iteration.
// CHECK-LABEL: func.func @counted
// CHECK-NOT: scf.while
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<16x4xf32>)
// BUF-LABEL: func.func @counted
// BUF-NOT: scf.while
// BUF-NOT: memref.alloc
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF: return
func.func @counted(%m: memref<16x4xf32>, %rm: memref<?x4xf32>) {
  %cache = bufferization.to_tensor %m restrict writable : memref<16x4xf32>
  %rows = bufferization.to_tensor %rm restrict : memref<?x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %rows, %c0 : tensor<?x4xf32>
  %r:2 = scf.while (%i = %c0, %acc = %cache) : (index, tensor<16x4xf32>) -> (index, tensor<16x4xf32>) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i, %acc : index, tensor<16x4xf32>
  } do {
  ^bb0(%i: index, %acc: tensor<16x4xf32>):
    %row = tensor.extract_slice %rows[%i, 0] [1, 4] [1, 1] : tensor<?x4xf32> to tensor<1x4xf32>
    %next = tensor.insert_slice %row into %acc[%i, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<16x4xf32>
    %j = arith.addi %i, %c1 : index
    scf.yield %j, %next : index, tensor<16x4xf32>
  }
  bufferization.materialize_in_destination %r#1 in restrict writable %m : (tensor<16x4xf32>, memref<16x4xf32>) -> ()
  return
}

// A condition that is not one comparison of the counter stays a while.
// CHECK-LABEL: func.func @data_dependent
// CHECK: scf.while
func.func @data_dependent(%x: tensor<8xf32>, %limit: f32) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %r = scf.while (%acc = %x) : (tensor<8xf32>) -> tensor<8xf32> {
    %v = tensor.extract %acc[%c0] : tensor<8xf32>
    %go = arith.cmpf olt, %v, %limit : f32
    scf.condition(%go) %acc : tensor<8xf32>
  } do {
  ^bb0(%acc: tensor<8xf32>):
    %two = arith.constant 2.0 : f32
    %d = arith.mulf %two, %two : f32
    %v = tensor.extract %acc[%c0] : tensor<8xf32>
    %w = arith.addf %v, %d : f32
    %next = tensor.insert %w into %acc[%c0] : tensor<8xf32>
    scf.yield %next : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// RUN: linnet-opt -linnet-cuda-host-kernels %s | FileCheck %s
// RUN: linnet-opt -linnet-cuda-host-kernels -linnet-cuda-cpuify %s | FileCheck %s --check-prefix=LOOPS
// RUN: not linnet-opt -linnet-cuda-host-kernels %S/Inputs/host-kernels-shuffle.mlir 2>&1 | FileCheck %s --check-prefix=SHUFFLE

// A kernel as the driver emulator runs it: grid and block first, then the
// parameters as 64-bit slots (a float's bits in the low half, an index as
// is), memrefs kept whole (their descriptor fields are the slots); its body
// one gpu.launch over the given grid, the ids and sizes the launch's, the
// workgroup attribution the block scratch cpuify allocates per block. The
// module's globals move to the top level.
// CHECK-LABEL: func.func @linnet_host_k_0(
// CHECK-SAME: %[[GX:[a-z0-9]+]]: i64, %{{.*}}: i64, %{{.*}}: i64, %[[BX:[a-z0-9]+]]: i64, %{{.*}}: i64, %{{.*}}: i64, %[[SCALE:[a-z0-9]+]]: i64, %[[N:[a-z0-9]+]]: i64, %[[X:[a-z0-9]+]]: memref<?xf32>)
// CHECK-SAME: linnet.host_kernel = "k_0", linnet.host_kernel_slots = 7 : i64
// CHECK: %[[BITS:.*]] = arith.trunci %[[SCALE]] : i64 to i32
// CHECK: %[[F:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK: gpu.launch blocks(%[[B:[a-z0-9]+]], {{.*}} threads(%[[T:[a-z0-9]+]], {{.*}} in (%[[BD:[a-z0-9]+]] =
// CHECK: memref.alloc() {linnet.workgroup} : memref<256xf32>
// CHECK: arith.muli %[[B]], %[[BD]]
// CHECK: arith.mulf %{{.*}}, %[[F]]
// CHECK: gpu.barrier
// CHECK: gpu.terminator
// CHECK-NOT: gpu.module
// CHECK: memref.global "public" @linnet_status

// LOOPS: scf.parallel
// LOOPS: memref.alloc() : memref<256xf32>
// LOOPS-NOT: gpu.

// SHUFFLE: error: host kernels: cannot run 'gpu.shuffle' on the host
module attributes {gpu.container_module} {
  gpu.module @k_0 {
    gpu.func @k(%scale: f32, %n: index, %x: memref<?xf32>) workgroup(%tile: memref<256xf32, #gpu.address_space<workgroup>>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %bd = gpu.block_dim x
      %base = arith.muli %b, %bd : index
      %i = arith.addi %base, %t : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<?xf32>
        %s = arith.mulf %v, %scale : f32
        memref.store %s, %tile[%t] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      scf.if %in {
        %w = memref.load %tile[%t] : memref<256xf32, #gpu.address_space<workgroup>>
        memref.store %w, %x[%i] : memref<?xf32>
      }
      gpu.return
    }
    memref.global "public" @linnet_status : memref<4xi64> = dense<0>
  }
}

module attributes {gpu.container_module} {
  gpu.module @s_0 {
    gpu.func @s(%x: memref<32xf32>) kernel {
      %t = gpu.thread_id x
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %v = memref.load %x[%t] : memref<32xf32>
      %r, %ok = gpu.shuffle xor %v, %c1, %c32 : f32
      memref.store %r, %x[%t] : memref<32xf32>
      gpu.return
    }
  }
}

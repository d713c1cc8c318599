func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'gf_task.planned' marks gf_kernel.launch ops only}}
  %y = arith.negf %x {gf_task.planned} : tensor<?xf32>
  return %y : tensor<?xf32>
}

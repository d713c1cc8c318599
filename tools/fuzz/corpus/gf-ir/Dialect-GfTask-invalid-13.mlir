func.func @f(%x: f32) -> f32 {
  // expected-error @+1 {{unknown gf_task attribute 'gf_task.plan'}}
  %y = arith.negf %x {gf_task.plan} : f32
  return %y : f32
}

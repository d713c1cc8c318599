// A dense relation has no topology buffers.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op with realization 'dense' takes 0 topology operand(s), got 2}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "dense"}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

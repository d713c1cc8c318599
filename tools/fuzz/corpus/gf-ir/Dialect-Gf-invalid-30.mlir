// A radius relation needs its radius.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op takes a 'radius' exactly when realization = "radius"}}
  %r = "gf.relation"(%pos) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "radius"}> : (tensor<?x3xf32>) -> !gf.relation
  return
}

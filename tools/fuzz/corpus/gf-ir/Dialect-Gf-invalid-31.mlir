// k cannot exceed the sources.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op asks for k = 20 neighbors of only 10 sources}}
  %r = "gf.relation"(%pos) <{relation_id = "knn", version = 0, origin = "derived", lifecycle = "frozen", num_src = 10, num_dst = 10, realization = "knn", k = 20}> : (tensor<?x3xf32>) -> !gf.relation
  return
}

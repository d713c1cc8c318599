// Realizations are a closed set.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has unknown realization 'sparse'; expected materialized, dense, triangular, radius, knn or paged}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "sparse"}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

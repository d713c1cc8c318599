// Degree bounds are ordered.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has degree_min = 17 greater than degree_max = 16}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized", degree_min = 17, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

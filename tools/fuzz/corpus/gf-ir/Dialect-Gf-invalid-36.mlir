// Lifecycle is frozen or mutable.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has lifecycle 'melted'; expected 'frozen' or 'mutable'}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "melted", num_src = 1024, num_dst = 1024, realization = "materialized"}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

// row_ptr has num_dst + 1 entries.
func.func @f(%rp: tensor<10xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op row_ptr has 10 entries but num_dst + 1 = 1025}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized"}> : (tensor<10xi64>, tensor<?xi64>) -> !gf.relation
  return
}

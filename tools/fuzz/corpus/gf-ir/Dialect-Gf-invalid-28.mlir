// A materialized relation takes row_ptr and col_idx.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op with realization 'materialized' takes 2 topology operand(s), got 1}}
  %r = "gf.relation"(%rp) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized"}> : (tensor<?xi64>) -> !gf.relation
  return
}

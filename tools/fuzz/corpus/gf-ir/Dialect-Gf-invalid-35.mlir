// A triangular relation is square.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op is triangular and needs num_src == num_dst, got 8 and 4}}
  %r = "gf.relation"() <{relation_id = "causal", version = 0, origin = "derived", lifecycle = "frozen", num_src = 8, num_dst = 4, realization = "triangular"}> : () -> !gf.relation
  return
}

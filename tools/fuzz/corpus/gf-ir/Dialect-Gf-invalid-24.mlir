// The mesh axis is in range.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has mesh_axis = 2 out of range for a mesh of rank 2}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized", mesh_shape = array<i64: 2, 4>, mesh_axis = 2}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

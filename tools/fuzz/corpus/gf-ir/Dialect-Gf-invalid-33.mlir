// Partitioning facts need a mesh.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>) {
  // expected-error @+1 {{'gf.relation' op has partition_balance or halo_depth but no mesh_shape/mesh_axis to partition over}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, realization = "materialized", partition_balance = "edges"}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return
}

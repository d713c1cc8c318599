// The parts must together own every destination of the relation.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>) {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, mesh_shape = array<i64: 4>, mesh_axis = 0}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf_task.partition' op owns 200 entities in 4 parts, fewer than the relation's 1024 destinations}}
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 200, ghost_entities = -1, version = 3}> : (!gf.relation) -> !gf_task.partition
  return
}

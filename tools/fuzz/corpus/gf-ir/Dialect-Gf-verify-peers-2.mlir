func.func @partition_before_relation(%rp: tensor<?xi64>, %ci: tensor<?xi64>) -> !gf_task.partition {
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 25, ghost_entities = -1, version = 0}> : (!gf.relation) -> !gf_task.partition
  // expected-error @below {{requires attribute 'num_dst'}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 100}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return %p : !gf_task.partition
}

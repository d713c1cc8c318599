func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %i: !gf_storage.instance) {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 8, num_dst = 8, mesh_shape = array<i64: 2>, mesh_axis = 0}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 2>, mesh_axis = 0, owned_entities = 4, ghost_entities = -1, version = 3}> : (!gf.relation) -> !gf_task.partition
  %h = "gf_task.halo"(%p) <{depth = -1, fields = ["x"], strategy = "auto"}> : (!gf_task.partition) -> !gf_task.halo_plan
  // expected-error @+1 {{'gf_task.halo_pack' op moves snapshot version 2 but its partition is of version 3}}
  %s, %d = "gf_task.halo_pack"(%h, %i) <{bytes = 16, field = "x", snapshot_version = 2}> : (!gf_task.halo_plan, !gf_storage.instance) -> (!gf_task.halo_buffer, !gf_storage.event)
  return
}

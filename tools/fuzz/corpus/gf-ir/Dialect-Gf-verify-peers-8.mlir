func.func @unpack_before_partition(%r: !gf.relation, %recv: !gf_task.halo_buffer, %gho: !gf_storage.instance, %got: !gf_storage.event) -> !gf_storage.event {
  %ready = "gf_task.halo_unpack"(%h, %recv, %gho, %got) <{field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_task.halo_buffer, !gf_storage.instance, !gf_storage.event) -> !gf_storage.event
  %h = "gf_task.halo"(%p) <{depth = 2, fields = ["x"], strategy = "neighbor"}> : (!gf_task.partition) -> !gf_task.halo_plan
  // expected-error @below {{requires attribute 'version'}}
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 25, ghost_entities = -1}> : (!gf.relation) -> !gf_task.partition
  return %ready : !gf_storage.event
}

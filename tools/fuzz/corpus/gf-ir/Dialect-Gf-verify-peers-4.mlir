func.func @launch_before_partition(%r: !gf.relation) -> !gf_storage.event {
  %i = "gf_task.launch"(%p) <{callee = @launch_before_partition, operandSegmentSizes = array<i32: 1, 0>, reads = ["x"], snapshot_version = 0, task_kind = "interior", writes = ["out"]}> : (!gf_task.partition) -> !gf_storage.event
  // expected-error @below {{requires attribute 'version'}}
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 25, ghost_entities = -1}> : (!gf.relation) -> !gf_task.partition
  return %i : !gf_storage.event
}

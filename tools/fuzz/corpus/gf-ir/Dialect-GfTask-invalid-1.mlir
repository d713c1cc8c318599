func.func @f(%r: !gf.relation) {
  // expected-error @+1 {{'gf_task.partition' op has scheme 'source'; only 'destination' is supported}}
  %p = "gf_task.partition"(%r) <{scheme = "source", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 256, ghost_entities = -1, version = 0}> : (!gf.relation) -> !gf_task.partition
  return
}

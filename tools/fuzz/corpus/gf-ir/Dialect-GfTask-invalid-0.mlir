//
// Verifier diagnostics of the gf_task dialect.

func.func @f(%r: !gf.relation) {
  // expected-error @+1 {{'gf_task.partition' op has mesh_axis = 3 out of range for a mesh of rank 2}}
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 2, 4>, mesh_axis = 3, owned_entities = 256, ghost_entities = -1, version = 0}> : (!gf.relation) -> !gf_task.partition
  return
}

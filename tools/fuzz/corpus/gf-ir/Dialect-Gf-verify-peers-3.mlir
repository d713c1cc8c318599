func.func @partition_overflowing_ownership(%rp: tensor<?xi64>, %ci: tensor<?xi64>) -> !gf_task.partition {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 100, num_dst = 100}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // Owned entities times parts overflows 64 bits: it covers the relation, and
  // the product is never formed.
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 4611686018427387904, ghost_entities = -1, version = 0}> : (!gf.relation) -> !gf_task.partition
  return %p : !gf_task.partition
}

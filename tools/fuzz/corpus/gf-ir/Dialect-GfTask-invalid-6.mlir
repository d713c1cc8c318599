func.func @f(%h: !gf_task.halo_plan, %i: !gf_storage.instance) {
  %s, %d = "gf_task.halo_pack"(%h, %i) <{bytes = 64, field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_storage.instance) -> (!gf_task.halo_buffer, !gf_storage.event)
  // expected-error @+1 {{'gf_task.halo_exchange' op exchanges 128 bytes but its send buffer was packed with 64}}
  %r, %e = "gf_task.halo_exchange"(%h, %s, %d) <{bytes = 128, group = "mesh", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_task.halo_buffer, !gf_storage.event) -> (!gf_task.halo_buffer, !gf_storage.event)
  return
}

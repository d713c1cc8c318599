func.func @exchange_before_pack(%h: !gf_task.halo_plan, %loc: !gf_storage.instance) -> !gf_task.halo_buffer {
  %recv, %got = "gf_task.halo_exchange"(%h, %send, %sent) <{bytes = 300, group = "g", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_task.halo_buffer, !gf_storage.event) -> (!gf_task.halo_buffer, !gf_storage.event)
  // expected-error @below {{requires attribute 'bytes'}}
  %send, %sent = "gf_task.halo_pack"(%h, %loc) <{field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_storage.instance) -> (!gf_task.halo_buffer, !gf_storage.event)
  return %recv : !gf_task.halo_buffer
}

func.func @unpack_before_halo(%p: !gf_task.partition, %recv: !gf_task.halo_buffer, %gho: !gf_storage.instance, %got: !gf_storage.event) -> !gf_storage.event {
  %ready = "gf_task.halo_unpack"(%h, %recv, %gho, %got) <{field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_task.halo_buffer, !gf_storage.instance, !gf_storage.event) -> !gf_storage.event
  // expected-error @below {{requires attribute 'fields'}}
  %h = "gf_task.halo"(%p) <{depth = 2, strategy = "neighbor"}> : (!gf_task.partition) -> !gf_task.halo_plan
  return %ready : !gf_storage.event
}

func.func @f(%p: !gf_task.partition, %i: !gf_storage.instance) {
  %h = "gf_task.halo"(%p) <{depth = -1, fields = ["x"], strategy = "auto"}> : (!gf_task.partition) -> !gf_task.halo_plan
  // expected-error @+1 {{'gf_task.halo_pack' op moves field 'y' which its halo plan does not cover}}
  %s, %d = "gf_task.halo_pack"(%h, %i) <{bytes = 64, field = "y", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_storage.instance) -> (!gf_task.halo_buffer, !gf_storage.event)
  return
}

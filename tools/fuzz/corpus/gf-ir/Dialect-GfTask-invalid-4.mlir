func.func @f(%p: !gf_task.partition) {
  // expected-error @+1 {{'gf_task.halo' op needs at least one field}}
  %h = "gf_task.halo"(%p) <{depth = 1, fields = [], strategy = "auto"}> : (!gf_task.partition) -> !gf_task.halo_plan
  return
}

func.func @f(%p: !gf_task.partition) {
  // expected-error @+1 {{'gf_task.halo' op has depth = 0; expected a positive depth or -1 (automatic)}}
  %h = "gf_task.halo"(%p) <{depth = 0, fields = ["x"], strategy = "auto"}> : (!gf_task.partition) -> !gf_task.halo_plan
  return
}

func.func @f(%p: !gf_task.partition) {
  // expected-error @+1 {{'gf_task.launch' op of kind 'boundary' must depend on the halo unpack event}}
  %e = "gf_task.launch"(%p) <{callee = @f, operandSegmentSizes = array<i32: 1, 0>, reads = ["x"], snapshot_version = 0, task_kind = "boundary", writes = ["out"]}> : (!gf_task.partition) -> !gf_storage.event
  return
}

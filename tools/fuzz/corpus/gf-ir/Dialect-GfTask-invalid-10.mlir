func.func @f(%p: !gf_task.partition) {
  // expected-error @+1 {{'gf_task.launch' op launches unknown function @missing}}
  %e = "gf_task.launch"(%p) <{callee = @missing, operandSegmentSizes = array<i32: 1, 0>, reads = ["x"], snapshot_version = 0, task_kind = "interior", writes = ["out"]}> : (!gf_task.partition) -> !gf_storage.event
  return
}

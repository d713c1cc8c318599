func.func @f(%p: !gf_task.partition) {
  // expected-error @+1 {{'gf_task.launch' op of kind 'whole' must not take a partition}}
  %e = "gf_task.launch"(%p) <{callee = @f, operandSegmentSizes = array<i32: 1, 0>, reads = [], snapshot_version = 0, task_kind = "whole", writes = ["out"]}> : (!gf_task.partition) -> !gf_storage.event
  return
}

// Repeated events are joined once; a join used only by another join of the
// same snapshot is flattened into it.
func.func @join_flatten(%a: !gf_storage.event, %b: !gf_storage.event, %c: !gf_storage.event) -> !gf_storage.event {
  %inner = "gf_storage.join"(%a, %b, %a) <{snapshot_version = 1}> : (!gf_storage.event, !gf_storage.event, !gf_storage.event) -> !gf_storage.event
  %outer = "gf_storage.join"(%inner, %c, %b) <{snapshot_version = 1}> : (!gf_storage.event, !gf_storage.event, !gf_storage.event) -> !gf_storage.event
  return %outer : !gf_storage.event
}

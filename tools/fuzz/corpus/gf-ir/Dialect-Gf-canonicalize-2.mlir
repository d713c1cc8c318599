// Joins of different snapshots are kept apart.
func.func @join_versions(%a: !gf_storage.event, %b: !gf_storage.event, %c: !gf_storage.event) -> !gf_storage.event {
  %inner = "gf_storage.join"(%a, %b) <{snapshot_version = 1}> : (!gf_storage.event, !gf_storage.event) -> !gf_storage.event
  %outer = "gf_storage.join"(%inner, %c) <{snapshot_version = 2}> : (!gf_storage.event, !gf_storage.event) -> !gf_storage.event
  return %outer : !gf_storage.event
}

// Folders and canonicalization patterns of the gf dialects.

// Joining one event is that event.
func.func @join_one(%e: !gf_storage.event) -> !gf_storage.event {
  %j = "gf_storage.join"(%e) <{snapshot_version = 0}> : (!gf_storage.event) -> !gf_storage.event
  return %j : !gf_storage.event
}

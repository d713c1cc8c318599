//
// Verifier diagnostics of the gf_storage dialect.

func.func @f() {
  // expected-error @+1 {{'gf_storage.join' op needs at least one event to join}}
  %j = "gf_storage.join"() <{snapshot_version = 0}> : () -> !gf_storage.event
  return
}

// RUN: linnet-opt %s -split-input-file -verify-diagnostics
//
// Verifier diagnostics of the gf_storage dialect.

func.func @f() {
  // expected-error @+1 {{'gf_storage.join' op needs at least one event to join}}
  %j = "gf_storage.join"() <{snapshot_version = 0}> : () -> !gf_storage.event
  return
}

// -----

func.func @f(%x: tensor<16xf32>) {
  // expected-error @+1 {{'gf_storage.region' op declares 32 elements but its tensor has 16}}
  %r = "gf_storage.region"(%x) <{elements = 32, logical_id = "x", version = 0}> : (tensor<16xf32>) -> !gf_storage.region
  return
}

// -----

func.func @f(%r: !gf_storage.region) {
  // expected-error @+1 {{'gf_storage.instance' op has device 'remote'; expected local, ghost or replica}}
  %i = "gf_storage.instance"(%r) <{capacity_bytes = 64, device = "remote", external = true, layout = "partitioned", memory_space = "device"}> : (!gf_storage.region) -> !gf_storage.instance
  return
}

// -----

func.func @f(%r: !gf_storage.region) {
  // expected-error @+1 {{'gf_storage.instance' op has capacity_bytes = -8; expected a non-negative size, or -1 when it is decided at run time}}
  %i = "gf_storage.instance"(%r) <{capacity_bytes = -8, device = "local", external = true, layout = "partitioned", memory_space = "device"}> : (!gf_storage.region) -> !gf_storage.instance
  return
}

// -----

func.func @f(%r: !gf_storage.region) {
  // expected-error @+1 {{'gf_storage.instance' op holds a replica, so its layout must be 'replicated'}}
  %i = "gf_storage.instance"(%r) <{capacity_bytes = 64, device = "replica", external = false, layout = "partitioned", memory_space = "host"}> : (!gf_storage.region) -> !gf_storage.instance
  return
}

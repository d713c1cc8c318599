func.func @f(%r: !gf_storage.region) {
  // expected-error @+1 {{'gf_storage.instance' op holds a replica, so its layout must be 'replicated'}}
  %i = "gf_storage.instance"(%r) <{capacity_bytes = 64, device = "replica", external = false, layout = "partitioned", memory_space = "host"}> : (!gf_storage.region) -> !gf_storage.instance
  return
}

func.func @f(%r: !gf_storage.region) {
  // expected-error @+1 {{'gf_storage.instance' op has negative capacity_bytes -8}}
  %i = "gf_storage.instance"(%r) <{capacity_bytes = -8, device = "local", external = true, layout = "partitioned", memory_space = "device"}> : (!gf_storage.region) -> !gf_storage.instance
  return
}

func.func @f(%r: !gf_storage.region) {
  // expected-error @+1 {{'gf_storage.instance' op has device 'remote'; expected local, ghost or replica}}
  %i = "gf_storage.instance"(%r) <{capacity_bytes = 64, device = "remote", external = true, layout = "partitioned", memory_space = "device"}> : (!gf_storage.region) -> !gf_storage.instance
  return
}

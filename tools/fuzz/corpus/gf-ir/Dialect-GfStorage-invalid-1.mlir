func.func @f(%x: tensor<16xf32>) {
  // expected-error @+1 {{'gf_storage.region' op declares 32 elements but its tensor has 16}}
  %r = "gf_storage.region"(%x) <{elements = 32, logical_id = "x", version = 0}> : (tensor<16xf32>) -> !gf_storage.region
  return
}

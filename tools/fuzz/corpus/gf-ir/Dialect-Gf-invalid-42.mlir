// gf.yield only terminates gf.apply regions.
func.func @f(%v: f32) {
  // expected-error @+1 {{'gf.yield' op expects parent op 'gf.apply'}}
  "gf.yield"(%v) : (f32) -> ()
}

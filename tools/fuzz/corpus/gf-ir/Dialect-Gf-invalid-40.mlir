// Reducer kinds are algebraic or ordered.
// expected-error @+1 {{'gf.reducer' op has kind 'magic'; expected 'algebraic' or 'ordered'}}
"gf.reducer"() <{sym_name = "r", kind = "magic", associative = true, commutative = true, message_types = [f32], state_types = [f32], result_types = [f32]}> ({
  %z = arith.constant 0.0 : f32
  "gf.reducer_yield"(%z) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%a: f32, %b: f32):
  "gf.reducer_yield"(%a) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}) : () -> ()

// An algebraic reducer is associative.
// expected-error @+1 {{'gf.reducer' op of kind 'algebraic' must be associative; declare kind = "ordered" for an order-dependent reducer}}
"gf.reducer"() <{sym_name = "r", kind = "algebraic", associative = false, commutative = true, message_types = [f32], state_types = [f32], result_types = [f32]}> ({
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

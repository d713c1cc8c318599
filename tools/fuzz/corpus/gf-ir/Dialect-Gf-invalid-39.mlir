// finalize yields the result types.
// expected-error @+1 {{'gf.reducer' op finalize region yields (f32) but expected (i32)}}
"gf.reducer"() <{sym_name = "r", kind = "algebraic", associative = true, commutative = true, message_types = [f32], state_types = [f32], result_types = [i32]}> ({
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

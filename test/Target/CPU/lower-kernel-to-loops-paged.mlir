// A paged relation without a page_size (a bare block table) has no Iter form, so its
// gf.apply reaches the lowering to loops unchanged: refused there, at the
// apply, not by LLVM translation ("missing LLVMTranslationDialectInterface
// for gf.reducer").
// RUN: not linnet-cpu-compile %s -o %t.so 2>&1 | FileCheck %s
// CHECK: lower-kernel-to-loops-paged.mlir:[[@LINE+20]]:{{[0-9]+}}: error: 'gf.apply' op over a paged relation ('kv') has no page_size: only a paged relation with a block table, row lengths and a page_size lowers (-gf-expand-paged-relations)
// CHECK-NOT: LLVM

"gf.reducer"() <{sym_name = "sum", kind = "algebraic", associative = true, commutative = true, message_types = [f32], state_types = [f32], result_types = [f32]}> ({
  %z = arith.constant 0.0 : f32
  "gf.reducer_yield"(%z) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%a: f32, %b: f32):
  %s = arith.addf %a, %b : f32
  "gf.reducer_yield"(%s) : (f32) -> ()
}, {
^bb0(%s: f32):
  "gf.reducer_yield"(%s) : (f32) -> ()
}) : () -> ()

func.func @paged(%pages: tensor<?x16xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%pages) <{relation_id = "kv", version = 0, realization = "paged", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = 16}> : (tensor<?x16xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v0: f32):
    "gf.yield"(%v0) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

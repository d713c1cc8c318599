// -gf-plan-distributed-tasks=ranks=N (linnet build --ranks N) places every
// relation declared without a mesh on N parts. A relation sized at run time
// (an entry's CSR inputs) leaves its shares, ghost counts and halo bytes to
// the runtime (-1). Where the import states one relation per reduction
// over the same topology, each launch is partitioned by the closest one.
//
// RUN: linnet-opt %s -gf-lower-domain-to-iter -gf-lower-iter-to-kernel \
// RUN:   -gf-select-kernel-schedule -gf-plan-distributed-tasks=ranks=4 | FileCheck %s
// Without ranks nothing is placed:
// RUN: linnet-opt %s -gf-lower-domain-to-iter -gf-lower-iter-to-kernel \
// RUN:   -gf-select-kernel-schedule -gf-plan-distributed-tasks | FileCheck %s --check-prefix=NONE
// NONE-NOT: gf_task.
// NONE-NOT: mesh_shape
// RUN: not linnet-opt %s -gf-plan-distributed-tasks=ranks=-2 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: ranks = -2; expected a positive rank count

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

func.func @twice(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r0 = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %a = "gf.apply"(%r0, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  %r1 = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %b = "gf.apply"(%r1, %a) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %b : tensor<?xf32>
}

// CHECK-LABEL: func.func @twice(
// CHECK: %[[R0:.*]] = "gf.relation"{{.*}}mesh_axis = 0 : i64, mesh_shape = array<i64: 4>, num_dst = -1 : i64, num_src = -1 : i64
// CHECK-NEXT: %[[P0:.*]] = "gf_task.partition"(%[[R0]]) <{ghost_entities = -1 : i64, mesh_axis = 0 : i64, mesh_shape = array<i64: 4>, owned_entities = -1 : i64
// CHECK: "gf_storage.instance"({{.*}}) <{capacity_bytes = -1 : i64, device = "local"
// CHECK-NEXT: "gf_storage.instance"({{.*}}) <{capacity_bytes = -1 : i64, device = "ghost"
// CHECK-NEXT: "gf_task.halo_pack"({{.*}}) <{bytes = -1 : i64, field = "x"
// CHECK-NEXT: "gf_task.halo_exchange"({{.*}}) <{bytes = -1 : i64, group = "g"
// CHECK: task_kind = "interior"
// CHECK: task_kind = "boundary"
// CHECK: "gf_kernel.launch"
// CHECK: }) {gf_task.planned}
// The second launch by the relation right before it.
// CHECK: %[[R1:.*]] = "gf.relation"{{.*}}mesh_shape = array<i64: 4>
// CHECK-NEXT: "gf_task.partition"(%[[R1]])
// CHECK: "gf_kernel.launch"
// CHECK: }) {gf_task.planned}

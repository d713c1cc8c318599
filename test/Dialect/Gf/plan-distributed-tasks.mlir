// -gf-plan-distributed-tasks partitions each kernel whose relation carries
// placement metadata (mesh_shape/mesh_axis), plans a halo for the fields read
// through the src role, and splits the work into interior and boundary
// tasks. A relation without placement gets no tasks. (The fixture in
// test/mlir/distributed-plan.mlir pins the complete output of one case.)
//
// RUN: linnet-opt %s -gf-lower-domain-to-iter -gf-lower-iter-to-kernel \
// RUN:   -gf-select-kernel-schedule -gf-plan-distributed-tasks | FileCheck %s
// Planning twice plans nothing new.
// RUN: linnet-opt %s -gf-lower-domain-to-iter -gf-lower-iter-to-kernel \
// RUN:   -gf-select-kernel-schedule -gf-plan-distributed-tasks > %t
// RUN: linnet-opt %t -gf-plan-distributed-tasks | diff -u %t -
// The halo strategy is an option of the pass:
// RUN: linnet-opt %s -gf-lower-domain-to-iter -gf-lower-iter-to-kernel \
// RUN:   -gf-plan-distributed-tasks=halo-strategy=neighbor \
// RUN:   | FileCheck %s --check-prefix=NEIGHBOR
// RUN: not linnet-opt %s -gf-lower-domain-to-iter -gf-lower-iter-to-kernel \
// RUN:   -gf-plan-distributed-tasks=halo-strategy=gossip 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADSTRATEGY
// NEIGHBOR: "gf_task.halo"{{.*}}strategy = "neighbor"
// BADSTRATEGY: error: unknown halo strategy 'gossip'; expected auto, alltoall or neighbor

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

// No placement metadata: no tasks.
func.func @local(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Two remote fields (one of 4-float rows), a dst field that stays local, 3
// parts that do not divide 1,000 rows, a 2-hop halo, rows balanced evenly.
func.func @two_fields(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %h: tensor<?x4xf32>, %s: tensor<?xf32>, %d: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "ring", version = 7, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1000, num_dst = 1000, degree_min = 1, degree_max = 2, mesh_shape = array<i64: 3>, mesh_axis = 0, partition_balance = "destinations", halo_depth = 2}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %h, %s, %d) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 3>, snapshot_versions = array<i64: 7, 7, 7>, effects = ["read", "read", "read"], deterministic = false, input_roles = ["src", "src", "dst"], input_names = ["h", "s", "d"]}> ({
  ^bb0(%hv: tensor<4xf32>, %sv: f32, %dv: f32):
    %m = arith.mulf %sv, %dv : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?x4xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Only edge data: nothing remote is read, so every row is interior.
func.func @edges_only(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 64, num_dst = 64, mesh_shape = array<i64: 2, 2>, mesh_axis = 0}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["edge"], input_names = ["w"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Dense: the ghost count is known statically (every other part's sources).
func.func @dense(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"() <{relation_id = "all", version = 1, realization = "dense", origin = "derived", lifecycle = "frozen", num_src = 64, num_dst = 64, mesh_shape = array<i64: 4>, mesh_axis = 0}> : () -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 1>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// CHECK-LABEL: func.func @local(
// CHECK-NOT: gf_task
// CHECK-NOT: gf_storage
// CHECK: return

// 1,000 rows over 3 parts: 334 owned. Worst-case ghosts: min(1000 - 334,
// 334 rows * 2^2 neighbors within 2 hops) = 666 entities: 666 * 16 bytes
// for h (4 floats per entity), 666 * 4 for s. d (dst role) stays local.
// CHECK-LABEL: func.func @two_fields(
// CHECK: %[[REL:.*]] = "gf.relation"
// CHECK-NEXT: %[[P:.*]] = "gf_task.partition"(%[[REL]]) <{ghost_entities = -1 : i64, mesh_axis = 0 : i64, mesh_shape = array<i64: 3>, owned_entities = 334 : i64, scheme = "destination", version = 7 : i64}> {ghost_map_algorithm = "csr-owned-row-remote-src-sort-unique", neighbor_discovery = "alltoall-counts-then-request-ids", owner_map_algorithm = "contiguous-destination-block"}
// CHECK-NEXT: %[[H:.*]] = "gf_task.halo"(%[[P]]) <{depth = 2 : i64, fields = ["h", "s"], strategy = "auto"}>
// CHECK-NEXT: %[[RH:.*]] = "gf_storage.region"(%arg2) <{elements = 1000 : i64, logical_id = "h", version = 7 : i64}>
// CHECK-NEXT: %[[LH:.*]] = "gf_storage.instance"(%[[RH]]) <{capacity_bytes = 5344 : i64, device = "local"
// CHECK-NEXT: %[[GH:.*]] = "gf_storage.instance"(%[[RH]]) <{capacity_bytes = 10656 : i64, device = "ghost"
// CHECK-NEXT: %[[S1:.*]], %[[D1:.*]] = "gf_task.halo_pack"(%[[H]], %[[LH]]) <{bytes = 10656 : i64, field = "h", snapshot_version = 7 : i64}>
// CHECK-NEXT: %[[R1:.*]], %[[E1:.*]] = "gf_task.halo_exchange"(%[[H]], %[[S1]], %[[D1]]) <{bytes = 10656 : i64, group = "ring", snapshot_version = 7 : i64}>
// CHECK-NEXT: %[[U1:.*]] = "gf_task.halo_unpack"(%[[H]], %[[R1]], %[[GH]], %[[E1]]) <{field = "h", snapshot_version = 7 : i64}>
// CHECK-NEXT: "gf_storage.region"(%arg3) <{elements = 1000 : i64, logical_id = "s", version = 7 : i64}>
// CHECK-NEXT: "gf_storage.instance"({{.*}}) <{capacity_bytes = 1336 : i64, device = "local"
// CHECK-NEXT: "gf_storage.instance"({{.*}}) <{capacity_bytes = 2664 : i64, device = "ghost"
// CHECK-NEXT: "gf_task.halo_pack"
// CHECK-NEXT: "gf_task.halo_exchange"
// CHECK-NEXT: %[[U2:.*]] = "gf_task.halo_unpack"
// CHECK-NEXT: %[[I:.*]] = "gf_task.launch"(%[[P]]) <{callee = @two_fields, operandSegmentSizes = array<i32: 1, 0>, reads = ["h", "s"], snapshot_version = 7 : i64, task_kind = "interior", writes = ["out"]}>
// CHECK-NEXT: %[[B:.*]] = "gf_task.launch"(%[[P]], %[[U1]], %[[U2]]) <{callee = @two_fields, operandSegmentSizes = array<i32: 1, 2>, reads = ["h", "s"], snapshot_version = 7 : i64, task_kind = "boundary", writes = ["out"]}>
// CHECK-NEXT: "gf_storage.join"(%[[I]], %[[B]]) <{snapshot_version = 7 : i64}>
// CHECK-NEXT: "gf_kernel.launch"
// CHECK: }) {gf_task.planned}

// Edge data moves with its destination rows: no halo, one interior task.
// CHECK-LABEL: func.func @edges_only(
// CHECK: %[[P:.*]] = "gf_task.partition"{{.*}}owned_entities = 32 : i64
// CHECK-NEXT: "gf_task.launch"(%[[P]]) <{{{.*}}reads = [], snapshot_version = 0 : i64, task_kind = "interior"
// CHECK-NEXT: "gf_kernel.launch"
// CHECK-NOT: gf_task.halo
// CHECK: }) {gf_task.planned}

// Dense: every row reads all 48 remote sources, known statically; no
// interior task.
// CHECK-LABEL: func.func @dense(
// CHECK: "gf_task.partition"{{.*}}<{ghost_entities = 48 : i64{{.*}}owned_entities = 16 : i64{{.*}}{ghost_map_algorithm = "dense-remote-src-range", neighbor_discovery = "static-from-mesh"
// CHECK: "gf_storage.instance"{{.*}}capacity_bytes = 192 : i64, device = "ghost"
// CHECK: "gf_task.halo_unpack"
// CHECK-NEXT: "gf_task.launch"{{.*}}task_kind = "boundary"
// CHECK-NEXT: "gf_kernel.launch"

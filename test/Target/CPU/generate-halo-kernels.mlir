// RUN: linnet-opt %linnet_src/test/mlir/distributed-plan.mlir -linnet-gf-to-tasks -linnet-cpu-generate-halo-kernels | FileCheck %s
// RUN: linnet-opt %s -split-input-file -verify-diagnostics -linnet-cpu-generate-halo-kernels
// RUN: rm -rf %t && linnet build %examples/gcn.ln -D In=4 -D Hidden=8 -D Out=2 --ranks 2 --dump-ir %t -o %t/gcn
// RUN: linnet-opt %t/01-tasks.mlir -linnet-cpu-generate-halo-kernels | FileCheck %s --check-prefix=FEAT

// The seed's fixture: its halo pack and unpack become the functions the
// concrete plan names (linnet_distributed_k0_halo_pack_x, ...), a gather
// and a scatter of rows over an index vector, and the module lists them by
// kernel with the kernel argument the field is; the planning ops are gone.
// CHECK: module attributes {linnet.distributed.halo = [{arg = 2 : i64, field = "x", kernel = "distributed.k0", pack = "linnet_distributed_k0_halo_pack_x", unpack = "linnet_distributed_k0_halo_unpack_x"}]}
// CHECK-LABEL: func.func @linnet_distributed_k0_halo_pack_x(
// CHECK-SAME: %[[SRC:.*]]: memref<?xf32>, %[[IDX:.*]]: memref<?xi64>, %[[SEND:.*]]: memref<?xf32>) attributes {llvm.emit_c_interface}
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK: %[[R:.*]] = memref.load %[[IDX]][%[[I]]]
// CHECK: %[[RI:.*]] = arith.index_cast %[[R]] : i64 to index
// CHECK: %[[V:.*]] = memref.load %[[SRC]][%[[RI]]]
// CHECK: memref.store %[[V]], %[[SEND]][%[[I]]]
// CHECK-LABEL: func.func @linnet_distributed_k0_halo_unpack_x(
// CHECK-SAME: %[[RECV:.*]]: memref<?xf32>, %[[SLOTS:.*]]: memref<?xi64>, %[[DST:.*]]: memref<?xf32>)
// CHECK: %[[S:.*]] = memref.load %[[SLOTS]][%[[J:.*]]]
// CHECK: %[[SI:.*]] = arith.index_cast %[[S]]
// CHECK: %[[W:.*]] = memref.load %[[RECV]][%[[J]]]
// CHECK: memref.store %[[W]], %[[DST]][%[[SI]]]
// CHECK-LABEL: func.func @distributed(
// CHECK-NOT: "gf_task.
// CHECK-NOT: "gf_storage.
// CHECK: "gf_kernel.launch"

// A model's relation (examples/gcn.ln, --ranks 2): one field per kernel,
// rows of features, each moved as one vector.
// FEAT: linnet.distributed.halo = [{arg = 2 : i64, field = "src0", kernel = "forward.k0", pack = "linnet_forward_k0_halo_pack_src0", unpack = "linnet_forward_k0_halo_unpack_src0"}, {arg = 2 : i64, field = "src0", kernel = "forward.k1",
// FEAT-LABEL: func.func @linnet_forward_k0_halo_pack_src0(
// FEAT-SAME: memref<?x4xf32>, %{{.*}}: memref<?xi64>, %{{.*}}: memref<?x4xf32>)
// FEAT: scf.parallel
// FEAT-NOT: scf.for
// FEAT: vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x4xf32>, vector<4xf32>
// FEAT: vector.store
// FEAT-LABEL: func.func @linnet_forward_k1_halo_pack_src0(
// FEAT-SAME: memref<?x8xf32>
// FEAT-NOT: "gf_task.
// FEAT-NOT: "gf_storage.

"gf.reducer"() <{associative = true, commutative = true, kind = "algebraic", message_types = [f32], result_types = [f32], state_types = [f32], sym_name = "sum"}> ({
  %cst = arith.constant 0.000000e+00 : f32
  "gf.reducer_yield"(%cst) : (f32) -> ()
}, {
^bb0(%arg0: f32):
  "gf.reducer_yield"(%arg0) : (f32) -> ()
}, {
^bb0(%arg0: f32, %arg1: f32):
  %0 = arith.addf %arg0, %arg1 : f32
  "gf.reducer_yield"(%0) : (f32) -> ()
}, {
^bb0(%arg0: f32):
  "gf.reducer_yield"(%arg0) : (f32) -> ()
}) : () -> ()
// A halo of a field the kernel after it does not read.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>, %w: tensor<?xf32>, %other: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1, mesh_shape = array<i64: 2>, mesh_axis = 0}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 2>, mesh_axis = 0, owned_entities = -1, ghost_entities = -1, version = 0}> : (!gf.relation) -> !gf_task.partition
  %h = "gf_task.halo"(%p) <{depth = -1, fields = ["x"], strategy = "auto"}> : (!gf_task.partition) -> !gf_task.halo_plan
  %g = "gf_storage.region"(%other) <{elements = -1, logical_id = "x", version = 0}> : (tensor<?xf32>) -> !gf_storage.region
  %l = "gf_storage.instance"(%g) <{capacity_bytes = -1, device = "local", external = true, layout = "partitioned", memory_space = "device"}> : (!gf_storage.region) -> !gf_storage.instance
  // expected-error @+1 {{'gf_task.halo_pack' op moves field 'x', which kernel f.k0 does not read as a ranked tensor}}
  %s, %d = "gf_task.halo_pack"(%h, %l) <{bytes = -1, field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_storage.instance) -> (!gf_task.halo_buffer, !gf_storage.event)
  %y = "gf_kernel.launch"(%rp, %ci, %x, %w) <{block_neighbors = 16 : i64, block_rows = 4 : i64, deterministic = false, effects = ["read", "read"], execution_roles = ["workgroup.destination-rows", "subgroup.neighbor-reduction", "lane.scalar"], input_names = ["x", "weight"], input_roles = ["src", "edge"], input_segment_sizes = array<i64: 2>, instruction_contracts = ["masked-memory", "associative-reduce"], num_rows = -1 : i64, num_warps = 1 : i64, pipeline_stages = 1 : i64, reducers = [@sum], region_kinds = array<i64: 0>, schedule_handoffs = ["load.global-to-register", "reduce.subgroup", "store.register-to-global"], schedule_kind = "bounded-ragged-row-neighbor", schedule_resources = ["relation.global.read", "input.global.read", "state.register.private", "output.global.write"], snapshot_versions = array<i64: 0, 0>, target_contract = "cpu-simd-v1", traversal = "csr-row"}> ({
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    "gf_kernel.yield"(%m) : (f32) -> ()
  }) {gf_task.planned} : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

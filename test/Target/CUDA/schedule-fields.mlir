// RUN: linnet-opt %s -gf-lower-domain-to-iter -gf-lower-iter-to-kernel \
// RUN:   -gf-select-kernel-schedule=target-contract=provider-neutral-v1 \
// RUN:   -gf-lower-kernel-to-loops=lane-split=true | FileCheck %s

// What the Kernel IR schedule's schedule_kind and pipeline_stages change in
// the loops the CUDA target maps (-gf-lower-kernel-to-loops{lane-split}).

// degree_max = 16 fits one neighbor tile: "bounded-ragged-row-neighbor",
// one stage. A lane's at most ceil(16 / 16) = 1 neighbor is a loop of
// constant trip count (unrolled downstream), guarded by the row's end; the
// remainder stays a loop, which runs no iteration when the fact holds and
// keeps the sum exact when it does not.
// CHECK-LABEL: func.func @bounded
// CHECK: memref.alloc() {linnet.workgroup} : memref<16x16xf32>
// CHECK: %[[PEELED:.*]] = scf.for %{{.*}} = %{{.*}} to %[[ONE:.*]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: memref.load %arg1
// CHECK: } {linnet.bounded_trips = 1 : i64}
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[PEELED]]) -> (f32) {
// CHECK-NOT: linnet.pipeline_stages
// CHECK: schedule_kind = "bounded-ragged-row-neighbor"

// No degree facts: "chunked-ragged-row-neighbor" with two stages: each lane
// loads the column index of its next neighbor (guarded by the row's end)
// while it gathers and reduces the one in hand, carried as a loop value.
// CHECK-LABEL: func.func @chunked
// CHECK: memref.alloc() {linnet.workgroup} : memref<8x32xf32>
// CHECK: %[[FIRST:.*]] = scf.if %{{.*}} -> (index) {
// CHECK: memref.load %arg1
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[SRC:.*]] = %[[FIRST]]) -> (f32, index) {
// CHECK: %[[AHEAD:.*]] = arith.addi %[[E]], %c32
// CHECK: scf.if %{{.*}} -> (index) {
// CHECK: memref.load %arg1[%[[AHEAD]]]
// CHECK: memref.load %arg2[%[[SRC]]]
// CHECK: } {linnet.pipeline_stages = 2 : i64}
// CHECK: pipeline_stages = 2 : i64, schedule_kind = "chunked-ragged-row-neighbor"

// Rows of 64 features (every op of the message and the reducer computes a
// feature from the same feature): the feature axis over 32 lanes of 2, the
// neighbors in tiles staged through the block's scratch. The chunked
// schedule (block_rows = 8, block_neighbors = 32, pipeline_stages = 2): two
// tiles of 32 column indices and edge values a row, tile t + 1 staged in
// the phase that reduces tile t, the tile loop bounded by the tile's
// largest degree (computed alike by every thread).
// CHECK-LABEL: func.func @features_chunked
// CHECK: memref.alloc() {linnet.workgroup} : memref<8x32xvector<2xf32>>
// CHECK: memref.alloc() {linnet.workgroup} : memref<2x8x32xi64>
// CHECK: memref.alloc() {linnet.workgroup} : memref<2x8x32xf32>
// CHECK: } {linnet.uniform}
// CHECK: memref.store %{{.*}}, %{{.*}}[%c0, %{{.*}}, %{{.*}}] : memref<2x8x32xi64>
// CHECK: scf.for
// CHECK: vector.load %arg2[%{{.*}}, %{{.*}}] : memref<?x64xf32>, vector<2xf32>
// CHECK: } {linnet.neighbor_tiles, linnet.pipeline_stages = 2 : i64
// CHECK: vector.store %{{.*}}, %arg4[%{{.*}}, %{{.*}}] : memref<?x64xf32>, vector<2xf32>

// The bounded schedule (degree_max = 16: block_rows = 16, block_neighbors
// = 16, one stage): one tile of 16 a row, staged and then reduced, a phase
// (and a barrier) each.
// CHECK-LABEL: func.func @features_bounded
// CHECK: memref.alloc() {linnet.workgroup} : memref<16x32xvector<2xf32>>
// CHECK: memref.alloc() {linnet.workgroup} : memref<1x16x16xi64>
// CHECK: scf.for
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0{{.*}}, %c0{{.*}}) to (%c16{{.*}}, %c16{{.*}})
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0{{.*}}, %c0{{.*}}) to (%c16{{.*}}, %c32{{.*}})
// CHECK: } {linnet.neighbor_tiles, linnet.pipeline_stages = 1 : i64

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

func.func @bounded(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

func.func @chunked(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "h", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

"gf.reducer"() <{sym_name = "vsum", kind = "algebraic", associative = true, commutative = true, message_types = [tensor<64xf32>], state_types = [tensor<64xf32>], result_types = [tensor<64xf32>]}> ({
  %z = arith.constant dense<0.0> : tensor<64xf32>
  "gf.reducer_yield"(%z) : (tensor<64xf32>) -> ()
}, {
^bb0(%m: tensor<64xf32>):
  "gf.reducer_yield"(%m) : (tensor<64xf32>) -> ()
}, {
^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
  %s = arith.addf %a, %b : tensor<64xf32>
  "gf.reducer_yield"(%s) : (tensor<64xf32>) -> ()
}, {
^bb0(%s: tensor<64xf32>):
  "gf.reducer_yield"(%s) : (tensor<64xf32>) -> ()
}) : () -> ()

func.func @features_chunked(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?x64xf32>, %w: tensor<?xf32>) -> tensor<?x64xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "fc", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@vsum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%a: tensor<64xf32>, %b: f32):
    %bs = tensor.splat %b : tensor<64xf32>
    %m = arith.mulf %a, %bs : tensor<64xf32>
    "gf.yield"(%m) : (tensor<64xf32>) -> ()
  }) : (!gf.relation, tensor<?x64xf32>, tensor<?xf32>) -> tensor<?x64xf32>
  return %o : tensor<?x64xf32>
}

func.func @features_bounded(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?x64xf32>, %w: tensor<?xf32>) -> tensor<?x64xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "fb", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@vsum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%a: tensor<64xf32>, %b: f32):
    %bs = tensor.splat %b : tensor<64xf32>
    %m = arith.mulf %a, %bs : tensor<64xf32>
    "gf.yield"(%m) : (tensor<64xf32>) -> ()
  }) : (!gf.relation, tensor<?x64xf32>, tensor<?xf32>) -> tensor<?x64xf32>
  return %o : tensor<?x64xf32>
}

// -gf-select-kernel-schedule derives each launch's schedule from the
// relation's facts (rows, degree bounds), the reducer's declared algebra and
// a target contract. Different facts give different schedules.
//
// RUN: linnet-opt %S/Inputs/relation-kinds.mlir -gf-lower-domain-to-iter \
// RUN:   -gf-lower-iter-to-kernel -gf-select-kernel-schedule | FileCheck %s
// RUN: linnet-opt %S/Inputs/relation-kinds.mlir -gf-lower-domain-to-iter \
// RUN:   -gf-lower-iter-to-kernel \
// RUN:   -gf-select-kernel-schedule=target-contract=cpu-simd-v1 \
// RUN:   | FileCheck %s --check-prefix=CPU
// RUN: not linnet-opt %S/Inputs/relation-kinds.mlir -gf-lower-domain-to-iter \
// RUN:   -gf-lower-iter-to-kernel -gf-select-kernel-schedule=target-contract=tpu-v9 \
// RUN:   2>&1 | FileCheck %s --check-prefix=BAD
// Scheduling is idempotent: scheduled launches are left alone.
// RUN: linnet-opt %S/Inputs/relation-kinds.mlir -gf-lower-domain-to-iter \
// RUN:   -gf-lower-iter-to-kernel -gf-select-kernel-schedule > %t
// RUN: linnet-opt %t -gf-select-kernel-schedule=target-contract=cpu-simd-v1 | diff -u %t -

// The fixture's facts: degree_max 16 -> 16 neighbors per tile; 256-message
// tile / 16 -> 16 rows; 256 lanes of work capped at 4 subgroups; one chunk
// covers every row -> 1 stage; degrees 4..16 are ragged -> masked memory.
// CHECK-LABEL: func.func @csr(
// CHECK: "gf_kernel.launch"{{.*}}<{block_neighbors = 16 : i64, block_rows = 16 : i64,
// CHECK-SAME: execution_roles = ["workgroup.destination-rows", "subgroup.neighbor-reduction", "lane.scalar"]
// CHECK-SAME: instruction_contracts = ["masked-memory", "associative-reduce"]
// CHECK-SAME: num_warps = 4 : i64, pipeline_stages = 1 : i64
// CHECK-SAME: schedule_handoffs = ["load.global-to-register", "reduce.subgroup", "store.register-to-global"]
// CHECK-SAME: schedule_kind = "bounded-ragged-row-neighbor"
// CHECK-SAME: schedule_resources = ["relation.global.read", "input.global.read", "state.register.private", "output.global.write"]
// CHECK-SAME: target_contract = "provider-neutral-v1"

// Uniform rows of 8 that tile 1,024 rows exactly need no masking.
// CHECK-LABEL: func.func @csr_uniform(
// CHECK: <{block_neighbors = 8 : i64, block_rows = 32 : i64,
// CHECK-SAME: instruction_contracts = ["associative-reduce"]
// CHECK-SAME: num_warps = 4 : i64, pipeline_stages = 1 : i64
// CHECK-SAME: schedule_kind = "bounded-uniform-row-neighbor"

// Rows of up to 100 neighbors: 32-wide chunks (a subgroup), 4 chunks,
// pipelined 2 deep through shared memory.
// CHECK-LABEL: func.func @csr_heavy(
// CHECK: <{block_neighbors = 32 : i64, block_rows = 8 : i64,
// CHECK-SAME: num_warps = 4 : i64, pipeline_stages = 2 : i64
// CHECK-SAME: schedule_handoffs = ["load.global-to-shared", "load.shared-to-register", "reduce.subgroup", "store.register-to-global"]
// CHECK-SAME: schedule_kind = "chunked-ragged-row-neighbor"
// CHECK-SAME: schedule_resources = ["relation.global.read", "input.global.read", "input.shared.staged", "state.register.private", "output.global.write"]

// 6 rows of at most 3 neighbors: a 4x8 tile, one subgroup.
// CHECK-LABEL: func.func @csr_small(
// CHECK: <{block_neighbors = 4 : i64, block_rows = 8 : i64,
// CHECK-SAME: num_warps = 1 : i64, pipeline_stages = 1 : i64
// CHECK-SAME: schedule_kind = "bounded-ragged-row-neighbor"

// Unknown bounds: assume long ragged rows.
// CHECK-LABEL: func.func @csr_unknown(
// CHECK: <{block_neighbors = 32 : i64, block_rows = 8 : i64,
// CHECK-SAME: pipeline_stages = 2 : i64
// CHECK-SAME: schedule_kind = "chunked-ragged-row-neighbor"

// A non-associative reducer: one lane walks each row in order.
// CHECK-LABEL: func.func @csr_ordered(
// CHECK: execution_roles = ["workgroup.destination-rows", "lane.sequential-neighbors", "lane.scalar"]
// CHECK-SAME: instruction_contracts = ["masked-memory", "ordered-reduce"]
// CHECK-SAME: schedule_handoffs = ["load.global-to-register", "reduce.lane-serial", "store.register-to-global"]

// Dense: 64 neighbors per row in two 32-wide chunks, no topology to read.
// CHECK-LABEL: func.func @dense(
// CHECK: <{block_neighbors = 32 : i64, block_rows = 8 : i64,
// CHECK-SAME: instruction_contracts = ["associative-reduce"]
// CHECK-SAME: pipeline_stages = 2 : i64
// CHECK-SAME: schedule_kind = "chunked-uniform-row-neighbor"
// CHECK-SAME: schedule_resources = ["relation.implicit",

// CHECK-LABEL: func.func @triangular(
// CHECK: schedule_kind = "chunked-ragged-row-neighbor"
// CHECK-SAME: schedule_resources = ["relation.implicit",

// CHECK-LABEL: func.func @radius(
// CHECK: <{block_neighbors = 32 : i64, block_rows = 8 : i64,
// CHECK-SAME: schedule_kind = "bounded-ragged-row-neighbor"

// CHECK-LABEL: func.func @knn(
// CHECK: <{block_neighbors = 8 : i64, block_rows = 32 : i64,
// CHECK-SAME: schedule_kind = "bounded-uniform-row-neighbor"

// CHECK-LABEL: func.func @paged(
// CHECK-NOT: gf_kernel.launch
// CHECK: return

// A CPU core: 16 lanes, a 64-message tile, one "subgroup".
// CPU-LABEL: func.func @csr(
// CPU: <{block_neighbors = 16 : i64, block_rows = 4 : i64,
// CPU-SAME: num_warps = 1 : i64, pipeline_stages = 1 : i64
// CPU-SAME: target_contract = "cpu-simd-v1"
// CPU-LABEL: func.func @csr_heavy(
// CPU: <{block_neighbors = 16 : i64, block_rows = 4 : i64,
// CPU-SAME: pipeline_stages = 2 : i64
// CPU-LABEL: func.func @knn(
// CPU: <{block_neighbors = 8 : i64, block_rows = 8 : i64,

// BAD: error: unknown target contract 'tpu-v9'; known contracts: provider-neutral-v1, cpu-simd-v1

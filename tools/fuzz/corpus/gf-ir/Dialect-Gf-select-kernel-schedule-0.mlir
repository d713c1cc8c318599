// -gf-select-kernel-schedule derives each launch's schedule from the
// relation's facts (rows, degree bounds), the reducer's declared algebra and
// a target contract. Different facts give different schedules.
//
// Scheduling is idempotent: scheduled launches are left alone.

// The fixture's facts: degree_max 16 -> 16 neighbors per tile; 256-message
// tile / 16 -> 16 rows; 256 lanes of work capped at 4 subgroups; one chunk
// covers every row -> 1 stage; degrees 4..16 are ragged -> masked memory.

// Uniform rows of 8 that tile 1,024 rows exactly need no masking.

// Rows of up to 100 neighbors: 32-wide chunks (a subgroup), 4 chunks,
// pipelined 2 deep through shared memory.

// 6 rows of at most 3 neighbors: a 4x8 tile, one subgroup.

// Unknown bounds: assume long ragged rows.

// A non-associative reducer: one lane walks each row in order.

// Dense: 64 neighbors per row in two 32-wide chunks, no topology to read.





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

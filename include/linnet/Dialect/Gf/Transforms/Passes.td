//===- Passes.td - linnet's Domain -> Iter -> Kernel -> Task passes -*- tablegen -*-===//

#ifndef LINNET_DIALECT_GF_TRANSFORMS_PASSES_TD
#define LINNET_DIALECT_GF_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def GfExpandPagedRelations : Pass<"gf-expand-paged-relations", "::mlir::ModuleOp"> {
  let summary = "Expand paged relations with a page size into compressed rows";
  let description = [{
    A `gf.relation` with `realization = "paged"` and a `page_size` P reads
    a block table `[M, B]` and row lengths `[M]`: destination `d` has
    `lengths[d]` edges (clamped to `[0, B * P]`), the `j`-th from source
    `block_table[d, j / P] * P + j % P`. This pass computes its row offsets
    (a prefix sum of the clamped lengths) and column indices (the slots,
    in row order) as tensors and replaces it with a materialized relation
    (`origin = "derived"`, `degree_max = B * P` when B is static), so every
    reduction over it lowers as over CSR. Block-table entries are trusted
    like CSR column indices: each must name a page of the source pool.
    A paged relation without a page size is left alone (it has no lowering).

    Before:
    ```mlir
    %r = "gf.relation"(%table, %lengths) <{realization = "paged", page_size = 4, ...}>
        : (tensor<?x8xi64>, tensor<?xi64>) -> !gf.relation
    ```
    After: `scf.for` loops write `%row_ptr` and `%col_idx` into new buffers
    (read back as tensors, `to_tensor restrict writable`), and
    ```mlir
    %r = "gf.relation"(%row_ptr, %col_idx) <{realization = "materialized", origin = "derived",
        degree_max = 32, ...}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::bufferization::BufferizationDialect", "::mlir::arith::ArithDialect"];
}

def GfBuildRelations : Pass<"gf-build-relations", "::mlir::ModuleOp"> {
  let summary = "Build radius and kNN relations from their positions";
  let description = [{
    A `gf.relation` with `realization = "radius"` (a generated
    neighbourhood) or `"knn"` (ranked pairs) names its pairs by the
    positions of its points (language §10.5). This pass builds its compressed
    rows once, where the relation is defined, by a call of the target's
    builder (`linnet_relation_build`, `RelationBuilder.h`: a grid over the
    first three axes, parallel over destination rows, at most `k` sources a
    row, nearest first, ties by the smaller source index) and replaces it with
    a materialized relation (`origin = "derived"`, `degree_max` = the bound)
    over them. Every `gf.edges` of it reads the same rows; a `gf.edges` of a
    materialized relation becomes its operands. Positions narrower than f64
    are widened first (a `linalg.generic`).

    Before:
    ```mlir
    %r = "gf.relation"(%pos, %radius) <{realization = "radius", k = 16, exclude_self, ...}>
        : (tensor<1000x3xf32>, tensor<f64>) -> !gf.relation
    %rp, %ci = "gf.edges"(%r) : (!gf.relation) -> (tensor<1001xi64>, tensor<16000xi64>)
    ```
    After: `%rp` and `%ci` are buffers the call wrote (`to_tensor restrict
    writable`), and
    ```mlir
    call @linnet_relation_build(%dst, %src, %row_ptr, %col_idx, %c1, %c16, %c1, %r) : (...) -> ()
    %r = "gf.relation"(%rp, %ci) <{realization = "materialized", origin = "derived",
        degree_max = 16, ...}> : (tensor<1001xi64>, tensor<16000xi64>) -> !gf.relation
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::bufferization::BufferizationDialect", "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def GfLowerDomainToIter : Pass<"gf-lower-domain-to-iter", "::mlir::ModuleOp"> {
  let summary = "Choose a coordinate hierarchy for every gf.apply";
  let description = [{
    Rewrites each `gf.apply` into a `gf_iter.traverse` with the same operands,
    message signature and edge region. The coordinate hierarchy comes from
    the realization of the `gf.relation` the apply reads:

    | realization            | coordinate_hierarchy     |
    | ---------------------- | ------------------------ |
    | materialized (CSR)     | compressed-row           |
    | dense, triangular      | cartesian-product        |
    | radius                 | generated-neighborhood   |
    | knn                    | ranked-pairs             |
    | paged                  | (stays a gf.apply)       |

    Paged relations have no Iter form yet and stay in Domain IR. The
    ordering is always "destination-major": reductions are per destination,
    so visiting a destination's edges together keeps its state private.

    Before:
    ```mlir
    %1 = "gf.apply"(%0, %x, %w) <{..., reducers = [@sum], ...}> ({
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      "gf.yield"(%m) : (f32) -> ()
    }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    ```
    After (for a materialized relation):
    ```mlir
    %1 = "gf_iter.traverse"(%0, %x, %w) <{coordinate_hierarchy = "compressed-row",
        ..., ordering = "destination-major", reducers = [@sum], ...}> ({
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      "gf_iter.yield"(%m) : (f32) -> ()
    }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    ```
  }];
  let dependentDialects = ["::linnet::gf_iter::GfIterDialect"];
}

def GfLowerIterToKernel : Pass<"gf-lower-iter-to-kernel", "::mlir::ModuleOp"> {
  let summary = "Bind every gf_iter.traverse to its relation's buffers";
  let description = [{
    Rewrites each `gf_iter.traverse` into an unscheduled `gf_kernel.launch`
    whose operands are the relation's topology buffers followed by the field
    inputs. The traversal names the loop structure ("csr-row", "dense-row",
    "triangular-row", "radius-cell", "knn-row") and the relation's facts the
    schedule needs are copied: `num_rows` (destinations) and the degree
    bounds (for dense relations every row has `num_src` neighbors). The
    `gf.relation` itself stays: task planning reads its placement.

    Before:
    ```mlir
    %0 = "gf.relation"(%row_ptr, %col_idx) <{..., num_dst = 1024 : i64, ...}>
    %1 = "gf_iter.traverse"(%0, %x, %w) <{coordinate_hierarchy = "compressed-row", ...}> ({...})
    ```
    After:
    ```mlir
    %0 = "gf.relation"(%row_ptr, %col_idx) <{..., num_dst = 1024 : i64, ...}>
    %1 = "gf_kernel.launch"(%row_ptr, %col_idx, %x, %w) <{degree_max = 16 : i64,
        degree_min = 4 : i64, ..., num_rows = 1024 : i64, ..., traversal = "csr-row"}> ({...})
    ```
  }];
  let dependentDialects = ["::linnet::gf_kernel::GfKernelDialect"];
}

def GfSelectKernelSchedule : Pass<"gf-select-kernel-schedule", "::mlir::ModuleOp"> {
  let summary = "Derive each gf_kernel.launch's schedule from relation facts";
  let description = [{
    Fills in the schedule of every unscheduled `gf_kernel.launch`. Nothing is
    a per-kernel constant: the tile comes from the relation's facts (degree
    bounds, number of rows), the reducer's declared algebra and the message
    types, within the limits of a named target contract.

    `provider-neutral-v1` (the default) describes any SIMT device: 32-lane
    subgroups, at most 4 subgroups per workgroup, a 256-message tile, at
    most 2 pipeline stages. For a row-neighbor traversal:

    - `block_neighbors` = degree_max rounded up to a power of two, capped at
      the subgroup width (rows longer than that loop over neighbor chunks);
    - `block_rows` = tile / block_neighbors, capped by the row count
      (rounded up to a power of two);
    - `num_warps` = block_rows * block_neighbors / subgroup width, between
      1 and the subgroup limit;
    - `pipeline_stages` = 1 when one chunk covers every row, otherwise the
      number of chunks, capped by the contract;
    - a ragged relation (degree_min < degree_max, or unknown bounds) needs
      masked memory; an associative reducer may reduce across a subgroup,
      a non-associative one reduces serially in one lane per row.

    The fixture's CSR relation (1024 rows, degrees 4..16, f32, `@sum`) thus
    gets block_rows = 16, block_neighbors = 16, num_warps = 4,
    pipeline_stages = 1, "bounded-ragged-row-neighbor". `cpu-simd-v1`
    describes a CPU core: 16 f32 lanes, one "subgroup", a 64-message tile.

    Before:
    ```mlir
    %1 = "gf_kernel.launch"(...) <{degree_max = 16 : i64, degree_min = 4 : i64, ...,
        num_rows = 1024 : i64, ..., traversal = "csr-row"}> ({...})
    ```
    After:
    ```mlir
    %1 = "gf_kernel.launch"(...) <{block_neighbors = 16 : i64, block_rows = 16 : i64, ...,
        num_warps = 4 : i64, pipeline_stages = 1 : i64, ...,
        schedule_kind = "bounded-ragged-row-neighbor", ...,
        target_contract = "provider-neutral-v1", traversal = "csr-row"}> ({...})
    ```
  }];
  let options = [
    Option<"targetContract", "target-contract", "std::string",
           /*default=*/"\"provider-neutral-v1\"",
           "Target contract bounding the schedule: provider-neutral-v1 or cpu-simd-v1">
  ];
}

def GfPlanDistributedTasks : Pass<"gf-plan-distributed-tasks", "::mlir::ModuleOp"> {
  let summary = "Partition kernels over a relation's mesh and plan their halo";
  let description = [{
    For each scheduled `gf_kernel.launch` whose relation carries placement
    metadata (`mesh_shape`, `mesh_axis`), inserts before the launch:

    1. `gf_task.partition`: destinations split over `mesh_shape[mesh_axis]`
       parts (`owned_entities` = ceil(num_dst / parts));
    2. `gf_task.halo` for the fields read through the `src` role (the only
       ones indexed by a possibly remote entity);
    3. per halo field: a `gf_storage.region`, a local instance (owned
       entities) and a ghost instance sized for the worst case
       (min(num_src - owned, owned * degree_max) entities), then
       `halo_pack`, `halo_exchange` (in the relation's group) and
       `halo_unpack`;
    4. an interior `gf_task.launch` with no dependencies and a boundary one
       that waits for the unpacks, joined by `gf_storage.join`. With no
       `src` field there is no halo and only the interior launch; a dense
       relation has no interior rows, so only the boundary launch.

    The kernel launch is marked `gf_task.planned`. A launch over a relation
    without placement metadata is left alone: no tasks. `ranks=N` places
    every relation without a mesh on `mesh_shape = [N]`, `mesh_axis = 0`.
    Where several relations over the same topology dominate a launch (one
    per reduction), the closest one partitions it. A relation sized at run
    time (`num_dst`/`num_src` = -1) gets `owned_entities`, `ghost_entities`,
    halo `bytes` and instance `capacity_bytes` of -1: the runtime splits it.

    Before:
    ```mlir
    %0 = "gf.relation"(%rp, %ci) <{..., mesh_axis = 1 : i64, mesh_shape = array<i64: 2, 4>, ...}>
    %1 = "gf_kernel.launch"(%rp, %ci, %x, %w) <{...}> ({...})
    ```
    After:
    ```mlir
    %1 = "gf_task.partition"(%0) <{..., owned_entities = 256 : i64, scheme = "destination", ...}>
    %2 = "gf_task.halo"(%1) <{depth = -1 : i64, fields = ["x"], strategy = "auto"}>
    ... region, instances, %send, %done = halo_pack, halo_exchange, halo_unpack ...
    %7 = "gf_task.launch"(%1) <{..., task_kind = "interior", ...}>
    %8 = "gf_task.launch"(%1, %6) <{..., task_kind = "boundary", ...}>
    %9 = "gf_storage.join"(%7, %8) <{snapshot_version = 3 : i64}>
    %10 = "gf_kernel.launch"(%rp, %ci, %x, %w) <{...}> ({...}) {gf_task.planned}
    ```
  }];
  let options = [
    Option<"haloStrategy", "halo-strategy", "std::string", /*default=*/"\"auto\"",
           "Halo exchange strategy recorded on gf_task.halo (auto, alltoall, neighbor)">,
    Option<"ranks", "ranks", "int64_t", /*default=*/"0",
           "Place every relation declared without a mesh on a 1-D mesh of this many "
           "parts (linnet build --ranks N); 0 leaves them unplaced">
  ];
  let dependentDialects = ["::linnet::gf_task::GfTaskDialect",
                           "::linnet::gf_storage::GfStorageDialect"];
}

def GfWidenHalf : Pass<"gf-widen-half", "::mlir::ModuleOp"> {
  let summary = "The f32-compute numerics policy: f16/bf16 arithmetic in f32, rounded where kept";
  let description = [{
    Runs on the imported module (tensors, before any fusion) when the build's
    numerics policy is `f32-compute` (docs/language/08,
    §8.4). Every arith or math op with an f16 or bf16 operand or result
    computes on f32 values instead, and a value computed so stays f32 while
    it feeds further arithmetic (comparisons and conversions included): a
    product of two bf16 values is exact, `x * y + z` rounds once. It is
    rounded to its dtype where it is kept, which is wherever it reaches an
    op that is not arithmetic: a tensor's element (`linalg.yield`,
    `tensor.insert`, ...), a fold's or loop's carried state, a branch's
    result, a call. A conversion to a half type (`x as bf16`, a half sum's
    final rounding) feeding arithmetic is the unrounded f32 value too;
    constants keep their half values. Under the default policy
    (`as-written`) the pass does not run and each op rounds to its dtype.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def GfVerifyPhase : Pass<"gf-verify-phase", "::mlir::ModuleOp"> {
  let summary = "Check that no op of an earlier stage survived a lowering";
  let description = [{
    Fails with an error naming the op and the stage when the module still
    holds an op that the pipeline up to `stage` should have lowered:

    | stage       | rejected                                             |
    | ----------- | ---------------------------------------------------- |
    | `domain`    | nothing (Domain IR is the input)                     |
    | `iter`      | `gf.apply` over a non-paged relation                 |
    | `kernel`    | the above, and `gf_iter.traverse`                    |
    | `scheduled` | the above, and an unscheduled `gf_kernel.launch`     |
    | `task`      | the above, and a launch over a relation with a mesh  |
    |             | that is not marked `gf_task.planned`                 |

    Example: `linnet-opt -gf-lower-domain-to-iter -gf-verify-phase=stage=kernel`
    reports `'gf_iter.traverse' op should have been lowered by the kernel
    stage (run -gf-lower-iter-to-kernel)`.
  }];
  let options = [
    Option<"stage", "stage", "std::string", /*default=*/"\"task\"",
           "The stage the module must have reached: domain, iter, kernel, scheduled, task">
  ];
}

#endif // LINNET_DIALECT_GF_TRANSFORMS_PASSES_TD

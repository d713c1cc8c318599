//===- Passes.td - linnet's CPU target passes ---------------*- tablegen -*-===//

#ifndef LINNET_TARGET_CPU_PASSES_TD
#define LINNET_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def GfLowerKernelToLoops : Pass<"gf-lower-kernel-to-loops", "::mlir::ModuleOp"> {
  let summary = "Lower scheduled gf_kernel.launch ops to scf loops over memrefs";
  let description = [{
    Rewrites every function that holds `gf_kernel.launch` ops into upstream
    MLIR (scf, arith, math, memref, vector) following linnet's CPU ABI
    (docs/cpu-abi.md):

    - every tensor argument becomes a memref of the same shape; every tensor
      result becomes a trailing output memref argument written by the
      function (destination-passing style); the function gets
      `llvm.emit_c_interface`;
    - each launch becomes an `scf.parallel` over tiles of `block_rows`
      destination rows (the unit a thread takes), an `scf.for` over the
      tile's rows, and an `scf.for` over the row's neighbors carrying the
      reducer state. The traversal decides the neighbors:
      `csr-row` walks `row_ptr[d] .. row_ptr[d+1]` and reads the source from
      `col_idx[e]`; `dense-row` visits every source `s < num_src` with edge
      id `d * num_src + s`; `triangular-row` visits `s <= d` with edge id
      `d * (d + 1) / 2 + s`;
    - the launch's message region is inlined per edge with its inputs read
      at the source, destination or edge index (by `input_roles`), and the
      reducers' identity, lift, combine and finalize regions are inlined
      from their `gf.reducer` symbols: nothing is specific to a sum;
    - per-entity values with a static feature axis (a `tensor<?x64xf32>`
      input gives the region `tensor<64xf32>`) become `vector<64xf32>`:
      rows are read with `vector.load`, elementwise arith/math ops on the
      small tensors are rebuilt on vectors, `tensor.splat` becomes
      `vector.broadcast`.

    Task planning ops (`gf_task.*`, `gf_storage.*`) and `gf.relation` are
    dropped (a single process runs every partition) and `gf.reducer`
    symbols are erased once nothing refers to them.

    Before (scheduled Kernel IR):
    ```mlir
    func.func @agg(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>,
                   %w: tensor<?xf32>) -> tensor<?xf32> {
      %o = "gf_kernel.launch"(%rp, %ci, %x, %w) <{block_rows = 4 : i64, ...,
          reducers = [@sum], traversal = "csr-row"}> ({...})
      return %o : tensor<?xf32>
    }
    ```
    After:
    ```mlir
    func.func @agg(%rp: memref<?xi64>, %ci: memref<?xi64>, %x: memref<?xf32>,
                   %w: memref<?xf32>, %out: memref<?xf32>)
        attributes {llvm.emit_c_interface} {
      scf.parallel (%t) = (%c0) to (%tiles) step (%c1) {
        scf.for %d = %r0 to %r1 step %c1 {
          %acc = scf.for %e = %lo to %hi step %c1 iter_args(%s = %zero) -> (f32) {
            ...  // col_idx[e], x[src], w[e], message, lift, combine
          }
          memref.store %acc, %out[%d] : memref<?xf32>
        }
      }
      return
    }
    ```
  }];
  let options = [
    Option<"laneSplit", "lane-split", "bool", "false",
           "split each row's neighbors over block_neighbors lanes where every reducer is "
           "associative: partial states in a per-tile scratch (linnet.workgroup), two "
           "linnet.lanes phases (a GPU target's subgroup.neighbor-reduction); a CSR row of "
           "16 or more features whose regions compute each feature from the same feature "
           "instead splits its features over up to 32 lanes and stages its neighbors in "
           "tiles of block_neighbors through the scratch (pipeline_stages = 2: double-"
           "buffered) inside a linnet.neighbor_tiles loop bounded by a linnet.uniform value">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def LinnetCPULowerLinalg : Pass<"linnet-cpu-lower-linalg", "::mlir::ModuleOp"> {
  let summary = "Tile, pack and vectorize linalg contractions (or bind them to BLAS); lower other linalg ops";
  let description = [{
    Lowers every memref-level linalg op of the module for the host CPU
    (docs/cpu-abi.md, "Contractions"):

    - matmul-like contractions (`linalg.matmul`, `linalg.batch_matmul`,
      `linalg.generic` whose maps and mul/add body form a contraction with
      one M, N and K loop and any batch loops) are tiled through the
      transform-dialect interpreter with a schedule derived from the shape
      and the target: `scf.forall` over thread chunks of M (or N, or the
      batch), cache tiles (the B tile a quarter of L2, the A tile half of
      it), the B tile packed into an aligned buffer, register tiles of
      RI x (2 vectors) peeled where they do not divide, vectorized to
      `vector.contract` and lowered to outer products (FMAs), with loads and
      stores of the accumulators hoisted out of the K loop;
    - with `implementation=blas` (or `auto` where OpenBLAS is installed),
      2-D f32 matmuls with unit inner strides become calls to
      `linnet_cblas_sgemm` (a shim over OpenBLAS's `cblas_sgemm`), a zero
      `linalg.fill` of C right before folded into beta = 0;
    - matrix-vector products (`y[i] += W[i, k] x[k]`, W rows contiguous)
      become an `scf.parallel` over row blocks streaming each row of W once
      with vector loads and four accumulators;
    - static elementwise ops are tiled to rows of up to four vectors and
      vectorized; everything else becomes scf loops.

    Every choice is recorded on the module as `linnet.cpu.implementations`
    (and emitted as a remark with `remarks=true`).
  }];
  let options = [
    Option<"implementation", "implementation", "std::string", "\"generated\"",
           "auto | generated | blas: which implementations contractions may bind to">,
    Option<"vectorBits", "vector-bits", "unsigned", "0",
           "vector register width in bits (0: the host's)">,
    Option<"l1Bytes", "l1-bytes", "int64_t", "0", "L1 data cache bytes (0: the host's)">,
    Option<"l2Bytes", "l2-bytes", "int64_t", "0", "L2 cache bytes per core (0: the host's)">,
    Option<"threads", "threads", "unsigned", "2", "threads the outer tiles are split over">,
    Option<"minParallelMacs", "min-parallel-macs", "int64_t", "4194304",
           "multiply-adds under which a contraction runs on one thread">,
    Option<"prefetchRows", "prefetch-rows", "int64_t", "-1",
           "rows ahead streamed products prefetch W (0: none; -1: as tuned for the host's CPU)">,
    Option<"blockProducts", "block-products", "std::string", "\"exact\"",
           "exact | int8: products against block-quantized weights may quantize x to q8_0 (--block-products)">,
    Option<"int8Dot", "int8-dot", "int", "-1",
           "integer block products with AVX-512 VNNI's vpdpbusd: 1, 0 (AVX2's pmaddubsw/pmaddwd), -1 (as the host has it)">,
    Option<"remarks", "remarks", "bool", "false", "emit a remark per implementation choice">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def LinnetCPUOpenMPSchedule : Pass<"linnet-cpu-openmp-schedule", "::mlir::ModuleOp"> {
  let summary = "Give OpenMP worksharing loops their schedule and inline empty alloca scopes";
  let description = [{
    Runs after -convert-scf-to-openmp in -linnet-cpu-lower-to-llvm:
    `omp.wsloop`s without a schedule get `guided` (R-MAT-like graphs put
    most edges in few rows), those whose location is named
    "linnet.static_schedule" (the linalg stage's matvecs: one block of rows
    per thread) get `static`; `memref.alloca_scope`s that allocate nothing
    (scf-to-openmp wraps each loop body in one, which no longer verifies once
    scf-to-cf splits the body into blocks) are inlined away.
  }];
  let dependentDialects = ["::mlir::omp::OpenMPDialect", "::mlir::memref::MemRefDialect"];
}

def LinnetCPUMathToLibm : Pass<"linnet-cpu-math-to-libm", "::mlir::ModuleOp"> {
  let summary = "math.tanh and math.erf (no LLVM intrinsic) to libm calls";
  let description = [{
    Only the math ops without an LLVM intrinsic become libm calls
    (tanhf/tanh, erff/erf; model.so links -lm), vector forms unrolled into
    scalar calls; exp, log, sin... stay math ops and lower to LLVM
    intrinsics, which vectorize.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::vector::VectorDialect"];
}

def LinnetCPUApproximateMath : Pass<"linnet-cpu-approximate-math", "::mlir::ModuleOp"> {
  let summary = "math.exp permitted approximate (fastmath afn) as a polynomial that vectorizes";
  let description = [{
    An exponential whose fastmath flags carry `afn` (approximate functions
    permitted: the importer marks the weights of attention's online softmax
    computed in blocks of keys) becomes MLIR's polynomial approximation,
    arithmetic only, so LLVM vectorizes its loop; an exponential without
    the flag stays `math.exp`, for -linnet-cpu-exact-exp (the C library's
    expf, written out) or a libm call per element. Measured over [-100, 0] in steps of 2^-14.3 (2M
    points): within 1 ulp of the correctly rounded exponential wherever it is
    a normal f32; 0 below e^-87.3 (where it would be subnormal) and at -inf.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def LinnetCPUHoistInvariantMath : Pass<"linnet-cpu-hoist-invariant-math", "::mlir::ModuleOp"> {
  let summary = "Costly calls a comprehension repeats along an axis they do not read, as a smaller generic";
  let description = [{
    In an all-parallel `linalg.generic` on tensors, a call that becomes a
    libm call (sin, cos, tanh, erf, log, pow, ...) whose value depends on
    only some of the loop dimensions (through `linalg.index` and values
    defined outside), where the others are static and one of them has more
    than one iteration, moves with the ops it is computed from into a new
    generic over just those dimensions; the comprehension reads its result
    as an input. Calls over the same dimensions share one generic. The
    values are computed by the same ops, so the results are unchanged.
    Rotary embeddings (`cos(angle)`, `sin(angle)` of (position, d), repeated
    for every head) are the case it is for.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def LinnetCPUExactExp : Pass<"linnet-cpu-exact-exp", "::mlir::ModuleOp"> {
  let summary = "f32 math.exp as vector arithmetic bit-identical to the C library's expf";
  let description = [{
    Every f32 `math.exp` (scalar or a 1-D vector) becomes glibc's expf
    algorithm written out on its shape: the argument in double lanes,
    k = round(x * 32 / ln 2) by the shift trick, r by an FMA, 2^(k/32)
    from a gather of the 32-entry table (`linnet_expf_table`) plus k's
    high bits in the exponent, a degree-3 polynomial by FMAs, one rounding
    to f32, and selects for -inf, NaN, +inf, overflow and underflow.
    LLVM vectorizes it with its loop, where `math.exp` was a libm call per
    element. The result is the C library's, bit for bit (checked over all
    2^32 arguments against Debian 12's glibc; ExactExp.h): the pass runs
    only for CPUs with FMA and AVX2, whose expf this is, and changes
    nothing when the scalar mirror disagrees with this process's expf on
    its probes (another C library).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect"];
}

def LinnetCPUFoldLoopChecks : Pass<"linnet-cpu-fold-loop-checks"> {
  let summary = "Integer comparisons a loop's bounds decide, as constants";
  let description = [{
    An `arith.cmpi` of an `scf.for` or `scf.parallel` induction variable
    (constant bounds and step) against a constant, or of two such values,
    whose result the ranges decide becomes an `i1` constant: the variable
    takes lb, lb + step, ... up to the last value below ub. The run-time
    index checks the importer emits for a reduction's binder (`d < Head`
    with d over 0 .. Head) then fold away with the canonicalizer, and the
    loops they guarded vectorize (their status stores kept them scalar).
    MLIR 19's integer range analysis takes ub itself as a possible value
    and folds none of these.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def LinnetCPUMergeParallelLoops : Pass<"linnet-cpu-merge-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Independent sibling thread loops of the streamed products as one";
  let description = [{
    The streamed products are each an `scf.parallel` over the threads (one
    block of W's rows a thread, `linnet.static_schedule`), so a layer's q,
    k and v projections fork and join the threads three times, each join
    a few microseconds that decode pays 56 times a token. Two such loops of
    one block over the same constant iterations become one when the work
    between them (the next product's output fill and quantized x) touches
    no buffer the first loop writes and the first reads none it writes (it
    moves before the first loop), and neither loop reads or writes a
    buffer the other writes. Writes must land on buffers the function
    allocates, so that every alias is in view; a call, or an effect on
    anything else, leaves the loops apart.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def LinnetCPURepackBlockParams : Pass<"linnet-cpu-repack-block-params", "::mlir::ModuleOp"> {
  let summary = "q4_0 params in groups of eight rows, for products eight rows a step";
  let description = [{
    Under --block-products int8, decode's product against a q4_0 weight
    computed one row of W a step, each ending in a horizontal reduction.
    A q4_0 param (memref<N x KB x 18 x i8>, N a multiple of 8) that only
    linalg.generic ops read, at the block bytes the importer indexes (the
    scale's two bytes, `k mod 16 + 2`) under a q4_0 dequantization, in
    every function that takes it, is given the grouped layout: per 8 rows
    and block, the 8 scales, then the 8 rows' 16 quant bytes (144 bytes).
    Each function reads it through one `memref.reinterpret_cast` of shape
    [N / 8, KB, 144] tagged `linnet.layout = "q4_0x8"`, and each generic's
    map for it becomes (row floordiv 8, block, the byte's new place), so
    every reader stays exact. The module's `linnet.cpu.layouts` names the
    repacked params; the runtime repacks their blocks when it binds the
    weights. A param read any other way (a load in a body, a call) keeps
    the file's layout.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::linalg::LinalgDialect"];
}

def LinnetCPUPrefetchRows : Pass<"linnet-cpu-prefetch-rows", "::mlir::func::FuncOp"> {
  let summary = "Prefetch the rows a loop marked linnet.rows reads some iterations ahead";
  let description = [{
    The importer marks `linnet.rows` the loops that read one row of a
    large input a step (the online softmax's scoring and summing loops:
    one key row, one value row of the KV cache). Such rows (256 bytes at
    f32 and 64 values) end before a core's stream prefetchers pick the
    stream up, and decode's attention read a cold cache at ~10 GB/s of a
    ~25 GB/s machine. At the start of each marked loop's body, every read
    of a function argument whose indices depend on the loop's induction
    variable gets `memref.prefetch`es of the row it reads `distance`
    iterations on: the indices recomputed with iv + distance (clamped to
    the dimension), one prefetch per 64-byte line of the contiguous
    extent an inner loop (constant bounds) or a vector read covers. Reads
    with the same row in several lanes are fetched once. Indices that
    depend on anything but the loop's variable and values from outside the
    loop (a carried value, a load) leave a read as it is.
  }];
  let options = [
    Option<"distance", "distance", "int64_t", /*default=*/"8",
           "Iterations ahead; 0 prefetches nothing">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def LinnetCPUParallelizeElementLoops
    : Pass<"linnet-cpu-parallelize-element-loops", "::mlir::ModuleOp"> {
  let summary = "A comprehension's element loops as scf.parallel (OpenMP threads)";
  let description = [{
    Each outermost `scf.for` the importer marked `linnet.elements` (a
    comprehension whose elements are computed by loops: attention's heads,
    each folding over the KV cache), with the perfect nest of element loops
    it heads, becomes one `scf.parallel`, which -convert-scf-to-openmp makes
    a worksharing loop: decode's one query row times 8 heads runs as 8
    iterations across the threads, not on one thread while the others wait.
    The scratch buffers bufferization shared between elements become each
    element's own. A loop stays serial where it holds parallel work of its
    own (`scf.parallel`, a call) or where a write of its body could land on
    another element's place (target::parallelizeElementLoops,
    linnet/Target/ElementLoops.h).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect"];
}

def LinnetCPUPackArena : Pass<"linnet-cpu-pack-arena", "::mlir::ModuleOp"> {
  let summary = "A block's temporary buffers as views of one workspace arena";
  let description = [{
    In each block (a function's body, a loop's body), the `memref.alloc`s
    that the block frees itself (one `memref.dealloc` in the same block,
    the buffer neither returned, yielded nor passed on as anything but a
    view or a call's operand) become `memref.view`s of one arena the block
    takes before the first of them and frees after the last: one allocation
    per block execution instead of one per buffer. Buffers whose live
    ranges (first to last use, in the block's order) do not overlap share a
    slot; a slot holds buffers of one size expression (a dynamic size reuses
    a slot only of the same expression; static ones a slot of any static
    size, which grows to the largest). The arena is marked
    `linnet.workspace` (-linnet-cpu-lower-workspace takes it from the
    thread's workspace stack), with its size in `linnet.workspace_bytes`
    where it is static, or its upper bound in `linnet.workspace_bound`
    where its dynamic sizes have one (decode's window over the KV cache,
    `max(min(P, W), 0)`). Each function gets `linnet.workspace_peak`: the
    most bytes of workspace one thread holds while it runs (its arena, plus
    the deepest of its calls and nested blocks), where every arena has a
    size or a bound.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def LinnetCPULowerWorkspace : Pass<"linnet-cpu-lower-workspace", "::mlir::ModuleOp"> {
  let summary = "Workspace arenas from the thread's workspace stack";
  let description = [{
    Each `memref.alloc` marked `linnet.workspace` becomes a call of
    `linnet_workspace_push(bytes)` and its `memref.dealloc` a call of
    `linnet_workspace_pop(ptr)`: the library's workspace stack
    (docs/cpu-abi.md), one per thread, whose chunks stay allocated between
    calls, so a call at steady state allocates nothing. Runs right before
    the memref to LLVM conversion; the arena's descriptor is built in the
    LLVM dialect and handed on through an unrealized cast.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect"];
}

def LinnetCPUWidenBf16 : Pass<"linnet-cpu-widen-bf16", "::mlir::ModuleOp"> {
  let summary = "bf16 arithmetic as f32 arithmetic, each result rounded to bf16";
  let description = [{
    Each arith or math op on bf16 values (scalars or vectors) computes on
    their f32 extensions and rounds its result back to bf16 (arith.extf,
    arith.truncf), keeping the rounding of every operation the language
    asks for; arith-expand's bf16 patterns then make the conversions integer
    code, which vectorizes, where LLVM would call __truncsfbf2 per element
    on a host without AVX512-BF16.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def LinnetCPUGenerateHaloKernels
    : Pass<"linnet-cpu-generate-halo-kernels", "::mlir::ModuleOp"> {
  let summary = "Generate the halo pack/unpack functions the plans name, then drop the Task IR's planning ops";
  let description = [{
    For each `gf_task.halo_pack` and `gf_task.halo_unpack` before the i-th
    `gf_kernel.launch` of a function F, defines the function the concrete
    plan binds that command to, `linnet_F_k<i>_halo_pack_<field>` and
    `linnet_F_k<i>_halo_unpack_<field>` (public, with a C interface), over
    the field's row type (its tensor type with a dynamic leading axis):

    - pack(src, rows, send): `send[i, ...] = src[rows[i], ...]`, gathering
      the owned rows other ranks read into the send buffer;
    - unpack(recv, slots, dst): `dst[slots[i], ...] = recv[i, ...]`,
      scattering received rows into their ghost slots.

    Rows are one `scf.parallel`; a static innermost axis moves as one
    `vector.load`/`vector.store` (the kernels' row form), axes before it
    are `scf.for` loops. The module attribute
    `linnet.distributed.halo` lists, per kernel `F.k<i>` and field, the
    kernel argument the field is and both symbols, for the distributed
    runtime (docs/distributed.md). Every `gf_task` and `gf_storage` op is
    then erased: the plans have read them, and the exchange itself is the
    runtime's.

    Before:
    ```mlir
    %send, %done = "gf_task.halo_pack"(%plan, %local) <{field = "x", ...}>
    ...
    %y = "gf_kernel.launch"(%rp, %ci, %x) <{...}> ({...}) {gf_task.planned}
    ```
    After:
    ```mlir
    func.func @linnet_f_k0_halo_pack_x(%src: memref<?x8xf32>, %rows: memref<?xi64>,
                                       %send: memref<?x8xf32>) attributes {llvm.emit_c_interface}
    func.func @linnet_f_k0_halo_unpack_x(...)
    ...
    %y = "gf_kernel.launch"(%rp, %ci, %x) <{...}> ({...}) {gf_task.planned}
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def LinnetCPUOutlineRelationKernels
    : Pass<"linnet-outline-relation-kernels", "::mlir::ModuleOp"> {
  let summary = "Outline each scheduled relation kernel into a private function called by its entry";
  let description = [{
    Takes the entries as the task pipeline (-linnet-gf-to-tasks) leaves
    them: tensors, with each relation reduction a scheduled
    `gf_kernel.launch`. Each launch is outlined into a kernel function of a
    module of its own, lowered there by -gf-lower-kernel-to-loops
    (destination-passing style on memrefs) and moved back as a private
    function; in the entry the launch becomes `bufferization.to_memref`
    (read only) of its operands, output buffers, a `func.call` and
    `bufferization.to_tensor` (restrict) of the outputs, which one-shot
    bufferization then folds. An output that the entry only stores into its
    result memref is computed straight into it. A `gf.apply` that was never
    scheduled is an error.
  }];
  let options = [
    Option<"laneSplit", "lane-split", "bool", "false",
           "lower the kernels with -gf-lower-kernel-to-loops{lane-split}">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect", "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect"];
}

def LinnetCPUDropUnreadAliasedInputs
    : Pass<"linnet-drop-unread-aliased-inputs", "::mlir::ModuleOp"> {
  let summary = "Drop a buffer generic's input that is its own output buffer and is never read";
  let description = [{
    A generic on buffers whose input is its own output buffer and whose body
    never reads that input (`0 * t[n]` folded to 0 after in-place
    bufferization) loses the input; MLIR 19's canonicalizer would otherwise
    erase such a generic as an identity copy without looking at its body.
  }];
}

def LinnetUpliftCountedWhile
    : Pass<"linnet-uplift-counted-while", "::mlir::ModuleOp"> {
  let summary = "A counted scf.while (i < n; i + step) on tensors becomes an scf.for";
  let description = [{
    The importer makes a `while` whose condition is known only at run time
    an `scf.while` (`while s < S { ...; s = s + 1 }` over a prompt's tokens).
    One-shot bufferization copies every tensor an `scf.while` carries in its
    condition region, once an iteration: a loop writing a KV cache row by row
    copied the whole cache per row. An `scf.for` carries its tensors in
    place. A loop whose condition region is one `arith.cmpi` of the counter
    against a bound defined outside, and whose body adds a loop-invariant step
    to the counter, is that `scf.for` (upstream `upliftWhileToForLoop`); any
    other `scf.while` stays as it is.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

def LinnetCPUInstrumentCommands
    : Pass<"linnet-cpu-instrument-commands", "::mlir::ModuleOp"> {
  let summary = "Time every planned command: timer calls around the ops the plan names";
  let description = [{
    `linnet build --profile` only. The portable plan tags the op each task
    comes from with `linnet.task = "task.<fn>.l<k>"` (a linalg op, a
    relation kernel's call, or a function that is one `whole` task). This
    pass brackets each tagged op with `func.call @linnet_prof_begin(id)`
    before it and `@linnet_prof_end(id)` after it (a tagged function: at its
    entry and before each return), where `id` indexes the module attribute
    `linnet.profile.tasks` it writes (the task ids, in first-seen order).
    It runs on buffers, where linalg ops have memory effects and nothing
    moves across the calls; the timers are defined by the profile shim
    linked into the library (docs/profiling.md). Untagged modules are left
    alone.

    Before:
    ```mlir
    linalg.generic {...} ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
        attrs = {linnet.task = "task.f.l0"} {...}
    ```
    After:
    ```mlir
    %c0 = arith.constant 0 : i64
    call @linnet_prof_begin(%c0) : (i64) -> ()
    linalg.generic {...} ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {...}
    call @linnet_prof_end(%c0) : (i64) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"];
}

def LinnetCPUDistributeKernels
    : Pass<"linnet-cpu-distribute-kernels", "::mlir::ModuleOp"> {
  let summary = "Route each relation kernel call through the distributed runtime's hook";
  let description = [{
    `linnet build --ranks N` only. Every kernel function the outlining
    pass marked with `linnet.kernel_roles` (row_ptr, col_idx, the inputs'
    roles src/edge/dst, out...) gets a C interface and public visibility,
    and each call of it becomes a call of `@linnet_dist_<kernel>`, an
    external declaration with a C interface: the distributed shim linked
    into the library forwards it to the runtime's hook (`linnet_dist_hook`),
    which exchanges the halo rows of the `src` inputs between ranks and runs
    the kernel on the interior rows while the exchange is in flight, then
    on the boundary rows (docs/distributed.md). Without a hook (one
    process) the shim calls the kernel directly. The module attribute
    `linnet.distributed.kernels` lists the kernels in hook-id order with
    their roles.

    Before:
    ```mlir
    func.func private @f.k0(%rp: memref<?xi64>, %ci: memref<?xi64>, %x: memref<?x8xf32>,
                            %out: memref<?x8xf32>) attributes {linnet.kernel_roles = [...]}
    call @f.k0(%a, %b, %c, %d) : (...) -> ()
    ```
    After:
    ```mlir
    func.func @f.k0(...) attributes {llvm.emit_c_interface}
    func.func private @linnet_dist_f.k0(...) attributes {llvm.emit_c_interface}
    call @linnet_dist_f.k0(%a, %b, %c, %d) : (...) -> ()
    ```
  }];
}

#endif // LINNET_TARGET_CPU_PASSES_TD

//===- Passes.td - linnet's CUDA target passes --------------*- tablegen -*-===//

#ifndef LINNET_TARGET_CUDA_PASSES_TD
#define LINNET_TARGET_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def LinnetCUDAMapToGPU : Pass<"linnet-cuda-map-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Host loops over memrefs to gpu.launch ops: the CUDA target's mapping";
  let description = [{
    Runs on the loops the shared lowering leaves (-gf-lower-kernel-to-loops,
    linalg as parallel loops) and decides what runs on the device. In every
    function, at the host level (the function body and the regions of host
    control flow that holds parallel loops):

    - an `scf.parallel` that carries a relation kernel's schedule
      (`linnet.schedule`, set by -gf-lower-kernel-to-loops from the
      `gf_kernel.launch`) becomes one block per tile of `block_rows` rows and
      `num_warps * 32` threads that take the tile's rows in turn (row
      `r0 + tid`, `r0 + tid + threads`, ...);
    - a relation tile split over lanes (`linnet.lanes` phases inside the
      tile loop, -gf-lower-kernel-to-loops{lane-split}) becomes one block
      per tile, each phase over the block's threads with a barrier after
      it, the tile's scratch kept for -linnet-cuda-promote-workgroup;
    - any other `scf.parallel` becomes a one-dimensional grid over its
      linearized iteration space, `block-size` threads a block, guarded;
    - a `memref.copy` becomes an element-parallel copy kernel;
    - a run of other ops that read or write memory becomes a kernel of one
      thread (scalar work, and loops with a carried value);
    - allocations, views, index arithmetic and calls stay on the host.

    Parallel loops nested inside a kernel run sequentially in its thread.
    A scalar computed on the device and used by host code (a loop bound, a
    condition read from an input) is stored by its kernel into a
    one-element buffer and read back after it (`linnet.cuda.host_read`,
    -linnet-cuda-lower-launches); any other value is refused with its
    location.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per block of a kernel without a relation schedule">,
    Option<"laneTilesOnly", "lane-tiles-only", "bool", /*default=*/"false",
           "map only the relation tiles split over lanes (before canonicalization, "
           "which would fold a tile loop of one tile and lose its schedule)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def LinnetCUDACpuify : Pass<"linnet-cuda-cpuify", "::mlir::ModuleOp"> {
  let summary = "Run gpu.launch kernels on the CPU: grid and block as loops";
  let description = [{
    The CPU execution of the CUDA target's kernels, for tests: each
    `gpu.launch` becomes an `scf.parallel` over its grid (blocks run on host
    threads) holding `scf.for` loops over the block's threads, with the
    launch's block and thread ids, grid and block sizes replaced by the loop
    variables and bounds. The kernel body is the one the device compiles,
    after the same mapping, so its index arithmetic, guards and thread
    distribution are what the CPU executes. A `gpu.barrier` at the kernel's
    top level splits the thread loop there (each piece runs for every
    thread before the next); pure values of an earlier piece (index
    arithmetic on the ids) are computed again in the later one, anything
    else crossing a barrier is refused, as is a barrier inside other control
    flow. A relation's neighbor tile loop (`scf.for` marked
    `linnet.neighbor_tiles`) may hold barriers: it runs once for the block,
    the pieces inside it over the threads, its bounds computed once for the
    block from values every thread computes alike (ops marked
    `linnet.uniform` and pure arithmetic on the block's ids); a bound that
    depends on the thread is refused. A block's scratch (`memref.alloc`
    marked `linnet.workgroup`) is allocated once per block.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

def LinnetCUDAHostKernels : Pass<"linnet-cuda-host-kernels", "::mlir::ModuleOp"> {
  let summary = "Outlined kernels as host functions that launch themselves, for the driver emulator";
  let description = [{
    The kernels the device compiles, made runnable on the CPU by the CUDA
    driver emulator (`linnet build --target cuda --host-kernels`,
    docs/cuda-abi.md). Each `gpu.module`'s kernel `K` becomes a public
    `func.func @linnet_host_K(%gx, %gy, %gz, %bx, %by, %bz: i64,
    params...)` whose body is one `gpu.launch` of the kernel's body over
    that grid and block (then `-linnet-cuda-cpuify` makes it loops). Its
    scalar parameters are i64 slots, as the launches pass them (a float's
    bits in the low bytes), so that a memref's descriptor fields and a
    scalar are all 64-bit values: the C wrapper that reads cuLaunchKernel's
    parameter array needs no per-type code. Workgroup attributions become
    the block scratch cpuify allocates per block, private ones stack
    buffers; module globals (`linnet_status`) and functions the kernels call
    move to the top level once.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def LinnetCUDAPromoteWorkgroup : Pass<"linnet-cuda-promote-workgroup", "::mlir::ModuleOp"> {
  let summary = "Turn a kernel's block-shared scratch into workgroup (shared) memory";
  let description = [{
    A `memref.alloc` marked `linnet.workgroup` at the top of a `gpu.launch`
    (a relation tile's partial states, -linnet-cuda-map-to-gpu) becomes a
    workgroup attribution of the launch, in `#gpu.address_space<workgroup>`:
    shared memory once the kernel is outlined. Its deallocation goes; its
    users must be loads and stores. The CPU execution (-linnet-cuda-cpuify)
    runs before this pass and allocates the scratch per block instead.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect"];
}

def LinnetCUDAWidenHalfMath : Pass<"linnet-cuda-widen-half-math"> {
  let summary = "Math functions of bf16 and f16 values computed in f32";
  let description = [{
    NVPTX has no bf16 or f16 form of the math functions (pow, exp, tanh,
    ...) that `math` ops lower to, and LLVM's instruction selection aborts
    on them. Each `math` op with bf16 or f16 operands or results (scalars
    or vectors) is rebuilt on f32: its float operands widened (`arith.extf`,
    exact), the op computed in f32 with its attributes, each result rounded
    back (`arith.truncf`). That is how the reference interpreter computes
    a half math function (in f32, rounded once), so results agree.
    Integer operands (the exponent of `math.fpowi`) are left as they are.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def LinnetCUDALowerLaunches : Pass<"linnet-cuda-lower-launches", "::mlir::ModuleOp"> {
  let summary = "gpu.launch_func to calls of the CUDA host runtime";
  let description = [{
    After kernel outlining, each `gpu.launch_func` of host code becomes a
    call `linnet_cuda_launch_slots(kernel, gx, gy, gz, bx, by, bz, shared,
    slots, count)` (docs/cuda-abi.md): its arguments are stored in a
    stack array of 64-bit slots in the order the NVVM kernel takes them (a
    memref as allocated and aligned pointer, offset, sizes, strides; a
    scalar zero-extended or bit-cast), and `kernel` indexes the module's
    `linnet.cuda.kernels` table, which the artifact's kernels.json lists.
    The `gpu.module`s are left for the device pipeline to take.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect"];
}

def LinnetCUDASplitReductions : Pass<"linnet-cuda-split-reductions", "::mlir::ModuleOp"> {
  let summary = "Sum reductions read along their reduced axis: one warp an output, lanes over the axis";
  let description = [{
    Runs on memref-level linalg ops before they become loops. A linalg op
    that sums (its body yields `out + g` with `arith.addf` or `arith.addi`,
    `out` used nowhere else) over at least `min-extent` reduced elements,
    whose largest input is laid out with a reduced axis innermost (a linear
    layer's `W[n, k]` summed over `k`, the keys of attention scores), would
    read memory with a stride across the threads of a warp as one thread
    an output: it becomes a lane-split tile instead, the form
    -linnet-cuda-map-to-gpu maps to one block of `rows * 32` threads:

    - phase one (`linnet.lanes`): output `o` of the tile and lane `l` sum
      the terms `l`, `l + 32`, ... of the (linearized, last axis fastest)
      reduction, starting from the first term itself, into a partial in the
      tile's scratch (`linnet.workgroup`: shared memory on the device);
    - phase two: each output adds its lanes' partials to its initial value
      in lane order (a fixed order: the same result every run).

    Adjacent lanes read adjacent elements: a warp's loads are coalesced.
    The sum is reassociated (lanes, then lanes in order), as a BLAS would;
    f16 and bf16 sums keep the sequential loop until the numerics policy
    says they accumulate in f32. Each op split is recorded in the module's
    `linnet.cuda.implementations` (routine `warp-split`).
  }];
  let options = [
    Option<"minExtent", "min-extent", "int64_t", /*default=*/"64",
           "fewest reduced elements (when static) worth splitting over a warp">,
    Option<"rows", "rows", "int64_t", /*default=*/"8",
           "outputs a block takes: one warp each">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LinnetCUDABindLibrary : Pass<"linnet-cuda-bind-library", "::mlir::ModuleOp"> {
  let summary = "Matrix products to cuBLAS (sgemm, GemmEx), with the generated kernel as the fallback";
  let description = [{
    Runs on memref-level linalg ops before -linnet-cuda-split-reductions.
    Where the implementation policy allows a library (`auto`, `blas`), a
    two-dimensional f32 product C[m, n] += A[m, k] B[k, n] (either operand
    possibly transposed, unit inner strides, neither m nor n a static 1: a
    matrix-vector product stays the generated warp-split kernel) becomes a
    call of the host runtime's `linnet_cuda_sgemm` in cuBLAS's
    column-major convention (C^T = B^T A^T, beta = 1: C holds its initial
    value), followed by the op itself under `scf.if` on the call's result:
    a runtime without cuBLAS (a machine with the CUDA driver only) returns
    non-zero and the generated kernel runs instead. A product of bf16 or
    f16 A and B summed in f32 with exact products (`acc + extf(a) *
    extf(b)`, the f32-compute numerics policy) calls
    `linnet_cuda_gemm(type, ...)` the same way: cuBLAS's GemmEx with f32
    accumulation, the tensor cores' arithmetic. A half product rounded
    before the sum (as written) stays generated. With `tf32` (the build's
    `--matmul-precision tf32`) an f32 product calls `linnet_cuda_gemm` with
    the TF32 type instead: GemmEx on f32 operands with
    CUBLAS_COMPUTE_32F_FAST_TF32. The op keeps
    `linnet.cuda.library = "cublasSgemm"` (`"cublasGemmEx"`,
    `"cublasGemmEx-tf32"`), which the concrete plan records as the
    implementation.
  }];
  let options = [
    Option<"implementation", "implementation", "std::string", "\"auto\"",
           "auto | generated | blas: whether matrix products may bind to cuBLAS">,
    Option<"tf32", "tf32", "bool", "false",
           "f32 products may round their operands to TF32 (--matmul-precision tf32)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::func::FuncDialect"];
}

#endif // LINNET_TARGET_CUDA_PASSES_TD

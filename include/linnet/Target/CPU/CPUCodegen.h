//===- CPUCodegen.h - Kernel IR to a host shared library --------*- C++ -*-===//
//
// linnet's CPU code generator, in-process: Domain/Iter/Kernel IR is taken
// through linnet's passes to loops (-gf-lower-kernel-to-loops), through the
// upstream conversions to the LLVM dialect, translated to LLVM IR, optimized
// for the host CPU by LLVM's TargetMachine, emitted as an object file and
// linked into a shared library by the system linker driver (`cc -shared`,
// run through llvm::sys::ExecuteAndWait). The calling convention of the
// library's functions is described in docs/cpu-abi.md.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TARGET_CPU_CPUCODEGEN_H
#define LINNET_TARGET_CPU_CPUCODEGEN_H

#include "linnet/Target/CPU/LinalgCodegen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <optional>
#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace linnet::cpu {

struct CodegenOptions {
  /// LLVM optimization level, 0..3.
  unsigned optLevel = 3;
  /// Run scf.parallel loops on OpenMP threads (LLVM's libomp); without it,
  /// or where libomp is missing, they run serially.
  bool parallel = true;
  /// Target CPU and features; empty means the host's (AVX2/AVX-512 here).
  std::string cpu;
  std::string features;
  /// Linker driver used for `-shared`.
  std::string linker = "cc";
  /// Which implementations linalg contractions may bind to (BLAS or the
  /// generated kernel); see LinalgCodegen.h.
  ImplementationPolicy implementation = ImplementationPolicy::Auto;
  /// Vector width, cache sizes and thread count the linalg schedules are
  /// derived from (zeros: the host's).
  LinalgTarget linalgTarget;
  /// When set, compileToSharedLibrary writes the IR of its stages there
  /// (`linnet build --dump-ir`), numbered from firstDumpStage: NN-loops.mlir,
  /// NN-llvm.mlir and the optimized LLVM IR the object code is emitted
  /// from, NN-model.ll.
  std::string dumpIRDir;
  unsigned firstDumpStage = 3;
  /// The input is gf Domain/Iter/Kernel IR: run the task pipeline
  /// (cpu-simd-v1) before lowering to loops. A compilation that already ran
  /// it (linnet/Compiler) turns this off: the gf passes run once.
  bool runTaskPipeline = true;
  /// Timers around every op the plan tagged with its task
  /// (-linnet-cpu-instrument-commands) and the profile shim linked in:
  /// `linnet build --profile`.
  bool profile = false;
  /// With `profile`: the library's timers (linnet_prof_begin/end,
  /// linnet_profile_take) are the CPU clock's; false where extraShim
  /// defines them (the CUDA target's host code: device events).
  bool profileShim = true;
  /// Relation kernels called through the distributed runtime's hook
  /// (-linnet-cpu-distribute-kernels) and the distributed shim linked in:
  /// `linnet build --ranks N`.
  bool distributed = false;
  /// Memref-level linalg ops become plain parallel loops (upstream
  /// -convert-linalg-to-parallel-loops) instead of the CPU's tiled,
  /// vectorized or BLAS kernels: the CUDA target maps those loops to a grid.
  bool linalgAsLoops = false;
  /// With linalgAsLoops: passes another target runs on the memref-level
  /// linalg ops first (the CUDA target's reductions split over lanes).
  std::function<void(mlir::OpPassManager &)> beforeLinalgLoops;
  /// Host allocations call `_mlir_memref_to_llvm_alloc`/`_free` (which a
  /// runtime supplies: the CUDA runtime's device memory) instead of malloc.
  bool genericAllocation = false;
  /// Temporaries a block frees itself share one arena a block execution
  /// (-linnet-cpu-pack-arena).
  bool workspaceArena = true;
  /// With workspaceArena: the arenas come from the thread's workspace
  /// stack (-linnet-cpu-lower-workspace; the stack is in the library's
  /// shim); false where allocations are another memory's
  /// (genericAllocation: the arena is one allocation of it).
  bool workspaceStack = true;
  /// Runs on the module once it is loops, before the LLVM lowering: another
  /// target's mapping of those loops (the CUDA target's kernels).
  std::function<mlir::LogicalResult(mlir::ModuleOp)> afterLoops;
  /// How many --dump-ir stages afterLoops writes (the later ones are
  /// numbered after them).
  unsigned afterLoopsStages = 0;
  /// C source another target links into the library beside its host code
  /// (the CUDA target's host shim: the table its runtime fills).
  std::string extraShim;
};

/// The C source of the distributed shim of a module the distribute pass
/// ran on (its `linnet.distributed.kernels`); empty for any other module.
std::string distributedShimSource(mlir::ModuleOp module);

/// The C source of the workspace stack (linnet_workspace_push/pop/stats)
/// the arenas of -linnet-cpu-lower-workspace come from (docs/cpu-abi.md).
const char *workspaceShimSource();

/// The C source of the profile shim: the timers instrumented code calls and
/// the event buffer the runtime reads (docs/profiling.md).
const char *profileShimSource();

/// The C source of the relation builder (linnet/Dialect/Gf/Transforms/RelationBuilder.h) the CPU
/// target links into libraries that build relations from coordinates
/// (RelationBuild.c): kNN and radius neighbourhoods over a uniform grid,
/// parallel over destinations.
const char *relationBuildSource();

/// The schedule contract of the CPU target's gf kernels.
inline constexpr const char *kScheduleContract = "cpu-simd-v1";

/// Adds every dialect and LLVM IR translation the CPU pipeline touches.
void registerCPUCodegenDialects(mlir::DialectRegistry &registry);

/// Bufferization interfaces and the dialects -linnet-bufferize creates.
void registerBufferizationInterfaces(mlir::DialectRegistry &registry);

/// The pipelines of the CPU code generator, one builder each: the build
/// runs them and linnet-opt registers them (registerCPUPipelines,
/// registerBufferizePipeline), so every stage of `linnet build` can be
/// reproduced from its --dump-ir input.
///
/// -linnet-bufferize: Task IR on tensors to memrefs (relation kernels
/// outlined, one-shot bufferization, buffer deallocation).
/// `laneSplit`: relation kernels split each row over lanes
/// (-gf-lower-kernel-to-loops{lane-split}), for a GPU target.
void buildBufferizePipeline(mlir::OpPassManager &pm, bool laneSplit = false);
void registerBufferizePipeline();
/// Runs -linnet-bufferize on `module`.
mlir::LogicalResult bufferize(mlir::ModuleOp module, bool laneSplit = false);
/// -linnet-cpu-lower-to-loops: -gf-lower-kernel-to-loops and
/// the linalg stage with options' policy and target (threads 1 when serial
/// or without OpenMP); its choices are recorded on the module
/// (recordedChoices).
void buildLowerToLoopsPipeline(mlir::OpPassManager &pm, const CodegenOptions &options);
/// -linnet-cpu-lower-to-llvm: loops (scf, arith, math, memref, vector,
/// func) to the LLVM dialect, through OpenMP when options.parallel and
/// libomp is installed.
void buildLowerToLLVMPipeline(mlir::OpPassManager &pm, const CodegenOptions &options);
/// Registers -linnet-cpu-lower-to-loops and -linnet-cpu-lower-to-llvm.
void registerCPUPipelines();

/// Runs linnet's lowering from any of Domain, Iter or Kernel IR down to
/// loops over memrefs: domain->iter, iter->kernel, schedule selection with
/// the cpu-simd-v1 contract, then -gf-lower-kernel-to-loops. Stages already
/// reached are no-ops.
mlir::LogicalResult lowerToLoops(mlir::ModuleOp module);

/// Converts a module of loops (scf, arith, math, memref, vector, func) to
/// the LLVM dialect in place.
mlir::LogicalResult lowerLoopsToLLVMDialect(mlir::ModuleOp module,
                                            const CodegenOptions &options);

/// Translates an LLVM-dialect module to LLVM IR and optimizes it for the
/// target at options.optLevel.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateAndOptimize(mlir::ModuleOp module, llvm::LLVMContext &context,
                     const CodegenOptions &options);

/// The whole pipeline: lowerToLoops, lowerLoopsToLLVMDialect, translation,
/// optimization, object emission and `cc -shared` into `outputPath`.
/// Errors carry MLIR's diagnostics as text.
/// Memref-level linalg ops (from the plan importer) go through
/// lowerLinalg after lowerToLoops; `choices`, when given, receives the
/// implementation chosen for each of them (for the concrete plan).
llvm::Error compileToSharedLibrary(mlir::ModuleOp module,
                                   llvm::StringRef outputPath,
                                   const CodegenOptions &options = {},
                                   std::vector<ImplementationChoice> *choices = nullptr);

/// compileToSharedLibrary into a private temporary directory, returning the
/// library's bytes: the caller hashes and writes exactly what was linked.
llvm::Expected<std::string>
compileToSharedLibraryBytes(mlir::ModuleOp module, const CodegenOptions &options = {},
                            std::vector<ImplementationChoice> *choices = nullptr);

/// The task pipeline (options.runTaskPipeline), -gf-lower-kernel-to-loops,
/// then the linalg stage with options' policy and target.
mlir::LogicalResult lowerToLoops(mlir::ModuleOp module,
                                 const CodegenOptions &options,
                                 std::vector<ImplementationChoice> *choices);

/// True when scf.parallel can be lowered to OpenMP on this machine.
bool openMPAvailable();

/// The triple, CPU and features code is generated for by default (no
/// CodegenOptions::cpu): "x86_64-pc-linux-gnu znver3 +avx2,+fma,...".
std::string hostCodeIdentity();

/// The runtime.json member `cpu` of a library compiled under `options`:
/// `{arch, name, features}`, the features every instruction set extension
/// the code may use (the host's, by default). The runtime refuses the
/// library on a CPU that lacks one (linnet/Runtime/HostCpu.h).
std::string codeCpuJson(const CodegenOptions &options);
/// The runtime.json member `workspace` of a module -linnet-cpu-pack-arena
/// ran on: `{"entries": {NAME: bytes or null}}`, the most workspace one
/// thread holds during a call of each entry (null where a size has no
/// static bound: prefill's, which grows with the tokens); nullopt when the
/// pass did not run.
std::optional<std::string> workspaceJson(mlir::ModuleOp module);

/// runtime.json's `layouts`, from -linnet-cpu-repack-block-params: `{PATH:
/// "q4_0x8"}` for each param whose blocks the runtime repacks when it binds
/// the weights; nullopt when none.
std::optional<std::string> layoutsJson(mlir::ModuleOp module);
/// The widest vector registers the code for `options.cpu`/`features` may
/// use (512 with AVX-512F, 256 with AVX2, else 128); 0 for the host's
/// (LinalgTarget resolves it).
unsigned codeVectorBits(const CodegenOptions &options);
/// Whether that code's CPU has AVX-512 VNNI with VL (1, 0), or -1 for the
/// host's CPU (resolved by LinalgTarget).
int codeInt8Dot(const CodegenOptions &options);
/// Whether that code's CPU (the host's for a portable build) has FMA and
/// AVX2: the C library's expf there is the algorithm -linnet-cpu-exact-exp
/// writes out.
bool codeRunsFmaExpf(const CodegenOptions &options);
/// Rows ahead that code's streamed reads prefetch (matvec rows of W, the
/// online softmax's KV rows): options.linalgTarget.prefetchRows where set,
/// else streamPrefetchRows of the code's CPU (the host's for a portable
/// build, as LinalgTarget resolves it).
int64_t codePrefetchRows(const CodegenOptions &options);

} // namespace linnet::cpu

#endif // LINNET_TARGET_CPU_CPUCODEGEN_H

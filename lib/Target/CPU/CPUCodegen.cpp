//===- CPUCodegen.cpp - Kernel IR to a host shared library -----------------===//
//
// Every pass is created through its upstream creation function and every
// dialect registered by hand: InitAllPasses.h / InitAllDialects.h cost ~48 s
// and 2.5 GB to compile. Linked against libMLIR.so and libLLVM.so only.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/CPUCodegen.h"
#include "linnet/Dialect/Gf/Transforms/RelationBuilder.h"

#include "linnet/Dialect/Gf/Transforms/Passes.h"
#include "linnet/Target/Target.h"
#include "linnet/Target/CPU/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Regex.h"
#include "llvm/TargetParser/Triple.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "linnet/Support/AtomicFile.h"
#include "linnet/Support/MlirDiagnostics.h"
#include "linnet/Support/Timing.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>

using namespace mlir;

namespace linnet::cpu {

#ifndef LINNET_CLANG_RT_BUILTINS
#define LINNET_CLANG_RT_BUILTINS ""
#endif
#ifndef LINNET_LLVM_LIBRARY_DIR
#define LINNET_LLVM_LIBRARY_DIR "/usr/lib/llvm-19/lib"
#endif

void registerCPUCodegenDialects(DialectRegistry &registry) {
  registry.insert<gf::GfDialect, gf_iter::GfIterDialect,
                  gf_kernel::GfKernelDialect, gf_task::GfTaskDialect,
                  gf_storage::GfStorageDialect>();
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  cf::ControlFlowDialect, func::FuncDialect,
                  index::IndexDialect, LLVM::LLVMDialect, math::MathDialect,
                  memref::MemRefDialect, omp::OpenMPDialect, scf::SCFDialect,
                  tensor::TensorDialect, vector::VectorDialect>();
  registerLinalgCodegenDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
}

bool openMPAvailable() {
  return llvm::sys::fs::exists(LINNET_LLVM_LIBRARY_DIR "/libomp.so");
}

#define GEN_PASS_DEF_LINNETCPUOPENMPSCHEDULE
#define GEN_PASS_DEF_LINNETCPUMATHTOLIBM
#include "linnet/Target/CPU/Passes.h.inc"

namespace {

struct OpenMPSchedulePass : public impl::LinnetCPUOpenMPScheduleBase<OpenMPSchedulePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Guided scheduling of tiles: R-MAT-like graphs put most edges in few
    // rows, so equal row ranges per thread are far from equal work, and a
    // dynamic schedule pays one dispatch per small tile.
    // Loops whose location is named "linnet.static_schedule" (the linalg
    // stage's matvecs: one block of rows per thread) are static: no dynamic
    // dispatch per call, and each thread reads the same rows every call.
    module.walk([](omp::WsloopOp loop) {
      if (loop.getScheduleVal())
        return;
      auto name = dyn_cast<NameLoc>(loop.getLoc());
      loop.setScheduleVal(name && name.getName() == "linnet.static_schedule"
                              ? omp::ClauseScheduleKind::Static
                              : omp::ClauseScheduleKind::Guided);
    });
    // scf-to-openmp wraps each loop body in memref.alloca_scope; once
    // scf-to-cf splits the body into blocks that op no longer verifies.
    // Our bodies allocate nothing, so the scope is inlined away.
    SmallVector<memref::AllocaScopeOp> scopes;
    module.walk([&](memref::AllocaScopeOp scope) {
      bool allocates = false;
      scope.walk([&](memref::AllocaOp) { allocates = true; });
      if (!allocates && scope->getNumResults() == 0)
        scopes.push_back(scope);
    });
    for (memref::AllocaScopeOp scope : scopes) {
      Block &body = scope.getBodyRegion().front();
      body.getTerminator()->erase();
      scope->getBlock()->getOperations().splice(scope->getIterator(),
                                                body.getOperations());
      scope->erase();
    }
  }
};

/// math ops without an LLVM intrinsic (tanh, erf) become libm calls
/// (tanhf/tanh, erff/erf; model.so links -lm), vector forms unrolled into
/// scalar calls. Only these: exp, log, sin... stay math ops and lower to
/// LLVM intrinsics, which vectorize.
struct MathToLibmPass : public impl::LinnetCPUMathToLibmBase<MathToLibmPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addIllegalOp<math::TanhOp, math::ErfOp>();
    RewritePatternSet patterns(ctx);
    populateMathToLibmConversionPatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

/// Options of the registered pipelines; their defaults are `linnet build`'s.
struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  Option<std::string> implementation{
      *this, "implementation",
      llvm::cl::desc("auto | generated | blas: which implementations contractions may bind to "
                     "(linnet build --impl)"),
      llvm::cl::init("auto")};
  Option<bool> parallel{*this, "parallel",
                        llvm::cl::desc("OpenMP threads where libomp is installed (false: "
                                       "linnet build --serial)"),
                        llvm::cl::init(true)};
  Option<bool> profile{*this, "profile",
                       llvm::cl::desc("timers around the ops tagged with their task (linnet build --profile)"),
                       llvm::cl::init(false)};
  Option<bool> distributed{*this, "distributed",
                           llvm::cl::desc("relation kernels called through the distributed hook "
                                          "(linnet build --ranks N)"),
                           llvm::cl::init(false)};
  Option<unsigned> threads{*this, "threads",
                           llvm::cl::desc("threads the linalg stage's outer tiles are split over"),
                           llvm::cl::init(LinalgTarget().threads)};

  CodegenOptions codegen() const {
    CodegenOptions o;
    o.parallel = parallel;
    o.linalgTarget.threads = threads;
    o.profile = profile;
    o.distributed = distributed;
    if (!parseImplementationPolicy(implementation, o.implementation))
      llvm::report_fatal_error("implementation: expected auto, generated or blas");
    return o;
  }
};

const char *policyName(ImplementationPolicy p) {
  switch (p) {
  case ImplementationPolicy::Auto:
    return "auto";
  case ImplementationPolicy::Generated:
    return "generated";
  case ImplementationPolicy::Blas:
    return "blas";
  }
  return "auto";
}

} // namespace

void buildLowerToLoopsPipeline(OpPassManager &pm, const CodegenOptions &options) {
  if (options.profile)
    pm.addPass(createLinnetCPUInstrumentCommands());
  if (options.distributed)
    pm.addPass(createLinnetCPUDistributeKernels());
  // Task IR straight from the task pipeline (linnet-cpu-compile of a
  // fixture) still has its halo ops; after -linnet-bufferize this finds none.
  pm.addPass(createLinnetCPUGenerateHaloKernels());
  pm.addPass(createGfLowerKernelToLoops());
  if (options.linalgAsLoops) {
    if (options.beforeLinalgLoops)
      options.beforeLinalgLoops(pm);
    pm.addPass(createConvertLinalgToParallelLoopsPass());
    return;
  }
  LinnetCPULowerLinalgOptions linalg;
  linalg.implementation = policyName(options.implementation);
  linalg.vectorBits = options.linalgTarget.vectorBits ? options.linalgTarget.vectorBits
                                                       : codeVectorBits(options);
  linalg.l1Bytes = options.linalgTarget.l1Bytes;
  linalg.l2Bytes = options.linalgTarget.l2Bytes;
  linalg.threads = options.linalgTarget.threads;
  linalg.minParallelMacs = options.linalgTarget.minParallelMacs;
  // Tuned for the CPU the code is for: the host's, or the one named.
  linalg.prefetchRows = codePrefetchRows(options);
  linalg.blockProducts = options.linalgTarget.int8BlockProducts ? "int8" : "exact";
  linalg.int8Dot = options.linalgTarget.int8Dot >= 0 ? options.linalgTarget.int8Dot : codeInt8Dot(options);
  if (!options.parallel || !openMPAvailable())
    linalg.threads = 1;
  // Integer products compute eight q4_0 rows a step from the grouped
  // layout (AVX2 and up; elsewhere the exact kernels read it as well).
  if (options.linalgTarget.int8BlockProducts)
    pm.addPass(createLinnetCPURepackBlockParams());
  pm.addPass(createLinnetCPULowerLinalg(linalg));
}

void buildLowerToLLVMPipeline(OpPassManager &pm, const CodegenOptions &options) {
  // Index checks a loop's own bounds prove (`d < Head` for d in 0 .. Head,
  // inside a reduction the importer lowers to a loop) fold away while the
  // loops are still structured: their status stores kept the loops scalar
  // (decode's attention read the KV cache at ~5 GB/s).
  pm.addPass(createLinnetCPUFoldLoopChecks());
  pm.addPass(createCanonicalizerPass());
  // scf.parallel (row tiles) becomes an OpenMP worksharing loop.
  bool parallel = options.parallel && openMPAvailable();
  // Independent products over the threads share one fork and join.
  if (parallel)
    pm.addNestedPass<func::FuncOp>(createLinnetCPUMergeParallelLoops());
  if (parallel)
    pm.addPass(createLinnetCPUParallelizeElementLoops());
  // The KV cache's rows an online softmax reads, fetched some keys ahead
  // where the CPU's stream prefetchers need it (as the streamed products'
  // rows of W). After the element loops became parallel: a prefetch is a
  // memory effect on the cache, which their check of disjoint writes
  // would take for a write.
  if (int64_t rows = codePrefetchRows(options); rows > 0)
    pm.addNestedPass<func::FuncOp>(createLinnetCPUPrefetchRows(LinnetCPUPrefetchRowsOptions{rows}));
  // After the element loops took their own scratch: it packs in their
  // bodies, and each thread pushes on its own workspace stack.
  if (options.workspaceArena) {
    pm.addPass(createLinnetCPUPackArena());
    if (options.workspaceStack)
      pm.addPass(createLinnetCPULowerWorkspace());
  }
  if (parallel) {
    pm.addPass(createConvertSCFToOpenMPPass());
    pm.addPass(createLinnetCPUOpenMPSchedule());
  }
  // Before the math ops lower: an exponential permitted approximate is
  // arithmetic that vectorizes.
  pm.addPass(createLinnetCPUApproximateMath());
  // Every other f32 exponential: the C library's own algorithm, written out
  // so it vectorizes, where the code's CPU runs that algorithm's variant.
  if (codeRunsFmaExpf(options))
    pm.addPass(createLinnetCPUExactExp());
  pm.addPass(createLinnetCPUMathToLibm());
  // arith.floordivsi (integer `/` floors) and friends have no LLVM lowering.
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // bf16 arithmetic in f32, each result rounded (linnet-cpu-widen-bf16),
  // the conversions integer code that vectorizes: without AVX512-BF16,
  // LLVM would call __truncsfbf2 per rounded element (bf16 decode ran 30x
  // slower than f32). After the canonicalizer, which folds
  // extf(truncf(x)) of contractable ops to x: the roundings must stay.
  pm.addPass(createLinnetCPUWidenBf16());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = options.genericAllocation;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  if (parallel)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void registerCPUPipelines() {
  PassPipelineRegistration<CPUPipelineOptions>(
      "linnet-cpu-lower-to-loops",
      "linnet build's CPU stage 03: scheduled gf kernels and memref-level linalg to loops "
      "(-gf-lower-kernel-to-loops, -linnet-cpu-lower-linalg)",
      [](OpPassManager &pm, const CPUPipelineOptions &o) {
        buildLowerToLoopsPipeline(pm, o.codegen());
      });
  PassPipelineRegistration<CPUPipelineOptions>(
      "linnet-cpu-lower-to-llvm",
      "linnet build's CPU stage 04: loops to the LLVM dialect (OpenMP, libm, upstream "
      "conversions)",
      [](OpPassManager &pm, const CPUPipelineOptions &o) {
        buildLowerToLLVMPipeline(pm, o.codegen());
      });
}

LogicalResult lowerToLoops(ModuleOp module) {
  PassManager pm(module.getContext());
  linnet::support::enablePassTiming(pm);
  target::buildTaskPipeline(pm, kScheduleContract);
  pm.addPass(createGfLowerKernelToLoops());
  return pm.run(module);
}

LogicalResult lowerToLoops(ModuleOp module, const CodegenOptions &options,
                           std::vector<ImplementationChoice> *choices) {
  size_t before = recordedChoices(module).size();
  PassManager pm(module.getContext());
  linnet::support::enablePassTiming(pm);
  if (options.runTaskPipeline)
    target::buildTaskPipeline(pm, kScheduleContract);
  buildLowerToLoopsPipeline(pm, options);
  if (failed(pm.run(module)))
    return failure();
  if (choices) {
    std::vector<ImplementationChoice> all = recordedChoices(module);
    choices->insert(choices->end(), all.begin() + std::min(before, all.size()), all.end());
  }
  return success();
}

LogicalResult lowerLoopsToLLVMDialect(ModuleOp module,
                                      const CodegenOptions &options) {
  PassManager pm(module.getContext());
  linnet::support::enablePassTiming(pm);
  buildLowerToLLVMPipeline(pm, options);
  return pm.run(module);
}

std::string hostCodeIdentity() {
  llvm::SubtargetFeatures host;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    host.AddFeature(feature.first(), feature.second);
  std::vector<std::string> features = host.getFeatures();
  std::sort(features.begin(), features.end()); // a StringMap's order is not stable
  std::string out = llvm::sys::getDefaultTargetTriple() + " " + llvm::sys::getHostCPUName().str() + " ";
  for (size_t i = 0; i < features.size(); ++i)
    out += (i ? "," : "") + features[i];
  return out;
}

namespace {

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
makeTargetMachine(const CodegenOptions &options) {
  initializeNativeTarget();
  std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no LLVM target for " + triple + ": " + error);
  std::string cpu = options.cpu.empty() ? llvm::sys::getHostCPUName().str()
                                        : options.cpu;
  std::string features = options.features;
  if (features.empty() && options.cpu.empty()) {
    llvm::SubtargetFeatures host;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      host.AddFeature(feature.first(), feature.second);
    features = host.getString();
  }
  llvm::TargetOptions targetOptions;
  // Fuse the message's multiply into the reducer's add (FMA), as C
  // compilers do by default.
  targetOptions.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  llvm::CodeGenOptLevel level = options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
                                : options.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                : options.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                                        : llvm::CodeGenOptLevel::None;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_, std::nullopt,
      level));
  if (!tm)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot create a TargetMachine for " + cpu);
  return tm;
}


void optimize(llvm::Module &module, llvm::TargetMachine &tm, unsigned level) {
  module.setDataLayout(tm.createDataLayout());
  module.setTargetTriple(tm.getTargetTriple().str());
  // Function attributes are what the vectorizers' cost models read.
  for (llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", tm.getTargetCPU());
    f.addFnAttr("target-features", tm.getTargetFeatureString());
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel opt = level >= 3   ? llvm::OptimizationLevel::O3
                                : level == 2 ? llvm::OptimizationLevel::O2
                                : level == 1 ? llvm::OptimizationLevel::O1
                                             : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager mpm = level == 0
                                    ? pb.buildO0DefaultPipeline(opt)
                                    : pb.buildPerModuleDefaultPipeline(opt);
  mpm.run(module, mam);
}

/// For every `_mlir_ciface_F` whose parameters are all descriptor pointers,
/// adds `void linnet_entry_F(void **args)` calling it with args[0..n): the
/// runtime's `linnet-cpu-packed-v1` convention (docs/runtime-abi.md), so a
/// loader needs no per-signature thunk.
void addPackedEntries(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  SmallVector<llvm::Function *> interfaces;
  for (llvm::Function &f : module)
    if (!f.isDeclaration() && f.getName().starts_with("_mlir_ciface_") &&
        f.getReturnType()->isVoidTy() &&
        llvm::all_of(f.args(), [](llvm::Argument &a) {
          return a.getType()->isPointerTy();
        }))
      interfaces.push_back(&f);
  for (llvm::Function *f : interfaces) {
    std::string name =
        "linnet_entry_" + f->getName().drop_front(strlen("_mlir_ciface_")).str();
    // Kernel functions (`F.k<i>`) and halo pack/unpack functions
    // (`linnet_F_k<i>_halo_...`), exported by a distributed build, are no
    // entries.
    static const llvm::Regex halo("^linnet_entry_linnet_.*_k[0-9]+_halo_(pack|unpack)_");
    if (module.getFunction(name) || name.find('.') != std::string::npos || halo.match(name))
      continue;
    auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
    auto *entry = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                         name, module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
    SmallVector<llvm::Value *> args;
    for (unsigned i = 0; i < f->arg_size(); ++i)
      args.push_back(b.CreateLoad(
          ptr, b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i)));
    b.CreateCall(f, args);
    b.CreateRetVoid();
  }
}

/// Inlines each function `F` whose only caller is its C interface
/// `_mlir_ciface_F` into it, before optimization; the library exports the
/// interface (and `linnet_entry_F`), not `F`. `F` takes every field of every
/// memref descriptor as an argument (about seven per tensor: thousands for
/// a deep model's entry), and the interprocedural passes that run before
/// LLVM's own inliner (called-value propagation, IPSCCP) take time that
/// grows with that count. Inlined, the interface loads only the fields used.
void inlineIntoInterfaces(llvm::Module &module) {
  SmallVector<llvm::Function *> interfaces;
  for (llvm::Function &f : module)
    if (!f.isDeclaration() && f.getName().starts_with("_mlir_ciface_"))
      interfaces.push_back(&f);
  for (llvm::Function *f : interfaces) {
    llvm::Function *inner =
        module.getFunction(f->getName().drop_front(strlen("_mlir_ciface_")));
    if (!inner || inner->isDeclaration() || !inner->hasOneUse())
      continue;
    auto *call = llvm::dyn_cast<llvm::CallBase>(inner->user_back());
    if (!call || call->getFunction() != f || call->getCalledFunction() != inner)
      continue;
    inner->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::InlineFunctionInfo info;
    if (llvm::InlineFunction(*call, info).isSuccess() && inner->use_empty())
      inner->eraseFromParent();
  }
}

/// MLIR's diagnostics (located), carried in an llvm::Error after `what`
/// as values (support::DiagError).
using DiagnosticCapture = support::DiagnosticCollector;

/// A stage's module as `linnet-opt --mlir-print-debuginfo` prints it: the
/// locations are part of the IR (source lines; the linalg stage marks the
/// loops that get a static OpenMP schedule with a named location).
std::function<void(llvm::raw_ostream &)> printWithLocations(ModuleOp module) {
  return [module](llvm::raw_ostream &os) {
    module->print(os, OpPrintingFlags().enableDebugInfo());
    os << "\n";
  };
}

/// Writes one stage's IR to options.dumpIRDir/NN-name (`linnet build
/// --dump-ir`), numbered from options.firstDumpStage in the order written.
llvm::Error dumpIR(const CodegenOptions &options, llvm::StringRef name,
                   llvm::function_ref<void(llvm::raw_ostream &)> print) {
  if (options.dumpIRDir.empty())
    return llvm::Error::success();
  unsigned stage = options.firstDumpStage +
                   (name == "loops.mlir" ? 0 : options.afterLoopsStages + (name == "llvm.mlir" ? 1 : 2));
  llvm::SmallString<128> path(options.dumpIRDir);
  llvm::sys::path::append(path, (stage < 10 ? "0" : "") + llvm::Twine(stage) + "-" + name);
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  // Through the output guard: a planted link is refused, not written through.
  std::string err;
  if (!linnet::support::prepareOutputDir(options.dumpIRDir, err) ||
      !linnet::support::writeFileAtomic(path.str().str(), text, err))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot write '" + path.str() + "': " + err);
  return llvm::Error::success();
}

} // namespace

/// 1 where the code's CPU has AVX-512 VNNI (with VL), 0 where it has not,
/// -1 for the host's (resolved by LinalgTarget).
int codeInt8Dot(const CodegenOptions &options) {
  if (options.cpu.empty() && options.features.empty())
    return -1;
  auto tm = makeTargetMachine(options);
  if (!tm) {
    llvm::consumeError(tm.takeError());
    return 0;
  }
  return (*tm)->getMCSubtargetInfo()->checkFeatures("+avx512vnni,+avx512vl") ? 1 : 0;
}

bool codeRunsFmaExpf(const CodegenOptions &options) {
  auto tm = makeTargetMachine(options);
  if (!tm) {
    llvm::consumeError(tm.takeError());
    return false;
  }
  return (*tm)->getMCSubtargetInfo()->checkFeatures("+fma,+avx2");
}

int64_t codePrefetchRows(const CodegenOptions &options) {
  if (options.linalgTarget.prefetchRows >= 0)
    return options.linalgTarget.prefetchRows;
  return streamPrefetchRows(options.cpu.empty() ? llvm::sys::getHostCPUName() : llvm::StringRef(options.cpu));
}

unsigned codeVectorBits(const CodegenOptions &options) {
  if (options.cpu.empty() && options.features.empty())
    return 0; // the host's, resolved by LinalgTarget
  auto tm = makeTargetMachine(options);
  if (!tm) {
    llvm::consumeError(tm.takeError());
    return 0;
  }
  const llvm::MCSubtargetInfo *sti = (*tm)->getMCSubtargetInfo();
  return sti->checkFeatures("+avx512f") ? 512 : sti->checkFeatures("+avx2") ? 256 : 128;
}

std::optional<std::string> workspaceJson(ModuleOp module) {
  auto peaks = module->getAttrOfType<DictionaryAttr>("linnet.workspace_peaks");
  if (!peaks)
    return std::nullopt;
  nlohmann::json entries = nlohmann::json::object();
  for (NamedAttribute a : peaks) {
    auto bytes = dyn_cast<IntegerAttr>(a.getValue());
    entries[a.getName().str()] = bytes ? nlohmann::json(bytes.getInt()) : nlohmann::json();
  }
  return nlohmann::json{{"entries", entries}}.dump();
}

std::optional<std::string> layoutsJson(ModuleOp module) {
  auto layouts = module->getAttrOfType<DictionaryAttr>("linnet.cpu.layouts");
  if (!layouts || layouts.empty())
    return std::nullopt;
  nlohmann::json out = nlohmann::json::object();
  for (NamedAttribute a : layouts)
    if (auto s = dyn_cast<StringAttr>(a.getValue()))
      out[a.getName().str()] = s.getValue().str();
  return out.dump();
}

std::string codeCpuJson(const CodegenOptions &options) {
  nlohmann::json features = nlohmann::json::array();
  std::string name = options.cpu.empty() ? llvm::sys::getHostCPUName().str() : options.cpu;
  if (options.cpu.empty() && options.features.empty()) {
    // The host's extensions as the code generator gets them (sorted: the
    // same build gives the same bytes).
    std::vector<std::string> on;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      if (feature.second)
        on.push_back(feature.first().str());
    std::sort(on.begin(), on.end());
    for (const std::string &f : on)
      features.push_back(f);
  } else if (auto tm = makeTargetMachine(options)) {
    // A CPU or feature list given: what the target machine enables.
    const llvm::MCSubtargetInfo *sti = (*tm)->getMCSubtargetInfo();
    for (const llvm::SubtargetFeatureKV &kv : sti->getAllProcessorFeatures())
      if (sti->checkFeatures(std::string("+") + kv.Key))
        features.push_back(kv.Key);
  } else {
    llvm::consumeError(tm.takeError());
  }
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  return nlohmann::json{{"arch", triple.getArchName().str()}, {"name", name}, {"features", features}}.dump();
}

llvm::Expected<std::unique_ptr<llvm::Module>>
translateAndOptimize(ModuleOp module, llvm::LLVMContext &context,
                     const CodegenOptions &options) {
  DiagnosticCapture diags(module.getContext());
  DialectRegistry registry;
  registerCPUCodegenDialects(registry);
  module.getContext()->appendDialectRegistry(registry);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return diags.error("translation to LLVM IR failed");
  addPackedEntries(*llvmModule);
  inlineIntoInterfaces(*llvmModule);
  auto tm = makeTargetMachine(options);
  if (!tm)
    return tm.takeError();
  optimize(*llvmModule, **tm, options.optLevel);
  return llvmModule;
}

llvm::Error compileToSharedLibrary(ModuleOp module, llvm::StringRef outputPath,
                                   const CodegenOptions &options,
                                   std::vector<ImplementationChoice> *choices) {
  DiagnosticCapture diags(module.getContext());
  DialectRegistry registry;
  registerCPUCodegenDialects(registry);
  module.getContext()->appendDialectRegistry(registry);
  linnet::support::TimingStage stage("gf and linalg to loops");
  if (failed(lowerToLoops(module, options, choices)))
    return diags.error("lowering to loops failed");
  if (llvm::Error e = dumpIR(options, "loops.mlir", printWithLocations(module)))
    return e;
  if (options.afterLoops && failed(options.afterLoops(module)))
    return diags.error("mapping the loops failed");
  bool blas = usesBLAS(module);
  // Relations built from coordinates (std.graph) call the builder the shim
  // carries (RelationBuild.c).
  bool relations = module.lookupSymbol(gf::kRelationBuilder) != nullptr;
  bool timers = module->hasAttr("linnet.profile.tasks");
  std::string distShim = distributedShimSource(module) + options.extraShim;
  stage.next("loops to the LLVM dialect");
  if (failed(lowerLoopsToLLVMDialect(module, options)))
    return diags.error("lowering to the LLVM dialect failed");
  // Arenas from the workspace stack the shim carries.
  bool workspace = module.lookupSymbol("linnet_workspace_push") != nullptr;
  if (llvm::Error e = dumpIR(options, "llvm.mlir", printWithLocations(module)))
    return e;
  stage.next("LLVM IR and its optimization");
  llvm::LLVMContext context;
  auto llvmModule = translateAndOptimize(module, context, options);
  stage.next("object code");
  if (!llvmModule)
    return llvmModule.takeError();
  if (llvm::Error e = dumpIR(options, "model.ll",
                             [&](llvm::raw_ostream &os) { (*llvmModule)->print(os, nullptr); }))
    return e;
  auto tm = makeTargetMachine(options);
  if (!tm)
    return tm.takeError();

  // The object goes to a temporary file next to nothing the user owns.
  llvm::SmallString<128> objPath;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("linnet-cpu", "o", fd, objPath))
    return llvm::createStringError(ec, "cannot create a temporary object file");
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    llvm::legacy::PassManager pm;
    if ((*tm)->addPassesToEmitFile(pm, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
      llvm::sys::fs::remove(objPath);
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "the target cannot emit object files");
    }
    pm.run(**llvmModule);
  }

  // Link with the system C compiler driver: it knows the platform's crt
  // files and default libraries, which a bare `ld -shared` would not.
  auto linker = llvm::sys::findProgramByName(options.linker);
  if (!linker) {
    llvm::sys::fs::remove(objPath);
    return llvm::createStringError(linker.getError(),
                                   "linker driver '" + options.linker +
                                       "' not found on PATH");
  }
  std::string out = outputPath.str(), obj = objPath.str().str();
  std::vector<std::string> argv = {*linker, "-shared", "-o", out, obj, "-lm"};
  // BLAS calls go through a small C shim that loads OpenBLAS on first use
  // (LinalgCodegen.cpp, blasShimSource).
  llvm::SmallString<128> shimPath;
  if (blas || relations || timers || workspace || !distShim.empty()) {
    int shimFd;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "linnet-blas-shim", "c", shimFd, shimPath)) {
      llvm::sys::fs::remove(objPath);
      return llvm::createStringError(ec, "cannot create the BLAS shim source");
    }
    llvm::raw_fd_ostream shim(shimFd, /*shouldClose=*/true);
    if (blas)
      shim << blasShimSource();
    if (relations)
      shim << relationBuildSource();
    if (workspace)
      shim << workspaceShimSource();
    if (timers && options.profileShim)
      shim << profileShimSource();
    shim << distShim;
    // The shim is read from stdin (`-x c -`), so the temporary file's random
    // name never reaches the library (an STT_FILE symbol): the same build
    // gives the same bytes, which the artifact manifest's digest relies on.
    // No FMA contraction: the relation builder's distances must round as
    // the interpreter's do.
    argv.insert(argv.begin() + 5,
                {"-O2", "-fPIC", "-ffp-contract=off", "-x", "c", "-", "-x", "none"});
    argv.push_back("-ldl");
    argv.push_back("-lpthread");
  }
  if (options.parallel && openMPAvailable()) {
    argv.push_back("-L" LINNET_LLVM_LIBRARY_DIR);
    argv.push_back("-Wl,-rpath," LINNET_LLVM_LIBRARY_DIR);
    // The relation builder reaches the OpenMP runtime through weak symbols
    // only: a linker defaulting to --as-needed would drop the library and
    // leave the builder serial.
    if (relations)
      argv.push_back("-Wl,--push-state,--no-as-needed");
    argv.push_back("-lomp");
    if (relations)
      argv.push_back("-Wl,--pop-state");
  }
  // bf16/f16 conversions LLVM lowers to calls (__truncsfbf2, ...): the
  // archive gives only what the object needs, nothing otherwise.
  if (*LINNET_CLANG_RT_BUILTINS && llvm::sys::fs::exists(LINNET_CLANG_RT_BUILTINS))
    argv.push_back(LINNET_CLANG_RT_BUILTINS);
  stage.next("link");
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  std::string message;
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, std::nullopt, std::nullopt};
  if (!shimPath.empty())
    redirects[0] = shimPath.str();
  int rc = llvm::sys::ExecuteAndWait(*linker, args, std::nullopt, redirects, 0, 0,
                                     &message);
  llvm::sys::fs::remove(objPath);
  if (!shimPath.empty())
    llvm::sys::fs::remove(shimPath);
  if (rc != 0)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "linking " + out + " failed (exit " + std::to_string(rc) + ")" +
            (message.empty() ? "" : ": " + message));
  return llvm::Error::success();
}

std::string distributedShimSource(ModuleOp module) {
  auto kernels = module->getAttrOfType<ArrayAttr>("linnet.distributed.kernels");
  if (!kernels)
    return "";
  // Per kernel: the hook's entry `_mlir_ciface_linnet_dist_<kernel>` (what
  // the entry calls) forwards its descriptors to the runtime's hook, or
  // straight to the kernel's C interface when no hook is set (one process).
  std::string src = "\n#include <stdint.h>\n"
                    "void (*linnet_dist_hook)(int64_t kernel, int64_t nargs, void **descs) = 0;\n";
  for (auto [i, a] : llvm::enumerate(kernels)) {
    auto d = cast<DictionaryAttr>(a);
    std::string name = cast<StringAttr>(d.get("name")).getValue().str();
    size_t n = cast<ArrayAttr>(d.get("roles")).size();
    std::string params, args;
    for (size_t k = 0; k < n; ++k) {
      params += (k ? ", " : "") + ("void *a" + std::to_string(k));
      args += (k ? ", " : "") + ("a" + std::to_string(k));
    }
    std::string id = std::to_string(i);
    src += "extern void linnet_kernel_" + id + "(" + params + ") __asm__(\"_mlir_ciface_" + name + "\");\n";
    src += "void linnet_dist_" + id + "(" + params + ") __asm__(\"_mlir_ciface_linnet_dist_" + name + "\");\n";
    src += "void linnet_dist_" + id + "(" + params + ") {\n  if (!linnet_dist_hook) {\n    linnet_kernel_" + id +
           "(" + args + ");\n    return;\n  }\n  void *d[] = {" + args + "};\n  linnet_dist_hook(" + id + ", " +
           std::to_string(n) + ", d);\n}\n";
  }
  return src;
}

const char *relationBuildSource() {
  return
#include "RelationBuild.inc"
      ;
}

const char *workspaceShimSource() {
  // Each thread's stack is a chain of chunks: a push that does not fit
  // moves to the chunk above (kept from an earlier call when it is big
  // enough, else a new one twice the size), a pop that empties a chunk
  // moves back down. Chunks stay allocated, so once a call has run, the
  // same call allocates nothing; the library frees them all when it is
  // unloaded (a thread's stack outlives the thread until then).
  return R"c(
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct linnet_ws_chunk {
  struct linnet_ws_chunk *below, *above, *all;
  uint64_t cap, used, pad[3];
} linnet_ws_chunk; /* 64 bytes: the data after it stays 64-byte aligned */
static __thread linnet_ws_chunk *linnet_ws_top;
static __thread uint64_t linnet_ws_inuse;
static linnet_ws_chunk *linnet_ws_chunks;
static pthread_mutex_t linnet_ws_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t linnet_ws_peak, linnet_ws_allocs, linnet_ws_bytes;
static linnet_ws_chunk *linnet_ws_new(uint64_t cap) {
  linnet_ws_chunk *c = NULL;
  if (posix_memalign((void **)&c, 64, sizeof(linnet_ws_chunk) + cap) != 0 || !c) {
    fprintf(stderr, "linnet: out of memory: cannot take %llu bytes of workspace\n",
            (unsigned long long)cap);
    abort();
  }
  c->below = c->above = NULL;
  c->cap = cap;
  c->used = 0;
  pthread_mutex_lock(&linnet_ws_lock);
  c->all = linnet_ws_chunks;
  linnet_ws_chunks = c;
  ++linnet_ws_allocs;
  linnet_ws_bytes += cap;
  pthread_mutex_unlock(&linnet_ws_lock);
  return c;
}
/* Called by the library's own code only. */
__attribute__((visibility("hidden"))) void *linnet_workspace_push(int64_t bytes) {
  uint64_t n = ((uint64_t)bytes + 63) & ~(uint64_t)63;
  linnet_ws_chunk *c = linnet_ws_top;
  if (!c || c->used + n > c->cap) {
    linnet_ws_chunk *up = c ? c->above : NULL;
    if (!up || up->cap < n) {
      uint64_t cap = c ? 2 * c->cap : 0;
      if (cap < n)
        cap = n;
      if (cap < (64u << 10))
        cap = 64u << 10;
      linnet_ws_chunk *fresh = linnet_ws_new(cap);
      /* A chunk above that was too small stays on the library's list,
         unused, until it is unloaded. */
      fresh->below = c;
      if (c)
        c->above = fresh;
      up = fresh;
    }
    c = linnet_ws_top = up;
  }
  void *p = (char *)(c + 1) + c->used;
  c->used += n;
  linnet_ws_inuse += n;
  uint64_t seen = __atomic_load_n(&linnet_ws_peak, __ATOMIC_RELAXED);
  while (linnet_ws_inuse > seen &&
         !__atomic_compare_exchange_n(&linnet_ws_peak, &seen, linnet_ws_inuse, 1,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return p;
}
__attribute__((visibility("hidden"))) void linnet_workspace_pop(void *p) {
  linnet_ws_chunk *c = linnet_ws_top;
  uint64_t used = (uint64_t)((char *)p - (char *)(c + 1));
  linnet_ws_inuse -= c->used - used;
  c->used = used;
  if (used == 0 && c->below)
    linnet_ws_top = c->below;
}
/* The most workspace one thread held since the last reset, and the chunks
   (count, bytes) allocated since the library was loaded. */
void linnet_workspace_stats(uint64_t *peak, uint64_t *chunks, uint64_t *bytes, int reset) {
  pthread_mutex_lock(&linnet_ws_lock);
  *peak = __atomic_load_n(&linnet_ws_peak, __ATOMIC_RELAXED);
  *chunks = linnet_ws_allocs;
  *bytes = linnet_ws_bytes;
  if (reset)
    __atomic_store_n(&linnet_ws_peak, 0, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&linnet_ws_lock);
}
__attribute__((destructor)) static void linnet_ws_unload(void) {
  for (linnet_ws_chunk *c = linnet_ws_chunks, *next; c; c = next) {
    next = c->all;
    free(c);
  }
  linnet_ws_chunks = NULL;
}
)c";
}

const char *profileShimSource() {
  // One event per timer call, in a static buffer (bss: untouched pages cost
  // nothing); calls beyond it are counted, not recorded. Instrumented code
  // calls the timers from the thread that runs the entry, outside parallel
  // regions, so the buffer needs no lock.
  return R"c(
#include <stdint.h>
#include <time.h>
typedef struct { uint32_t task, end; uint64_t ns; } linnet_prof_event;
enum { LINNET_PROF_CAPACITY = 1 << 20 };
static linnet_prof_event linnet_prof_events[LINNET_PROF_CAPACITY];
static uint64_t linnet_prof_count;
static inline uint64_t linnet_prof_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
static inline void linnet_prof_record(int64_t task, uint32_t end) {
  uint64_t ns = linnet_prof_now();
  if (linnet_prof_count < LINNET_PROF_CAPACITY) {
    linnet_prof_events[linnet_prof_count].task = (uint32_t)task;
    linnet_prof_events[linnet_prof_count].end = end;
    linnet_prof_events[linnet_prof_count].ns = ns;
  }
  ++linnet_prof_count;
}
void linnet_prof_begin(int64_t task) { linnet_prof_record(task, 0); }
void linnet_prof_end(int64_t task) { linnet_prof_record(task, 1); }
/* The events recorded since the last take (at most the capacity); the
   total, dropped ones included, in *calls. Starts a new recording. */
const linnet_prof_event *linnet_profile_take(uint64_t *count, uint64_t *calls) {
  *calls = linnet_prof_count;
  *count = linnet_prof_count < LINNET_PROF_CAPACITY ? linnet_prof_count : LINNET_PROF_CAPACITY;
  linnet_prof_count = 0;
  return linnet_prof_events;
}
)c";
}

} // namespace linnet::cpu

llvm::Expected<std::string>
linnet::cpu::compileToSharedLibraryBytes(ModuleOp module, const CodegenOptions &options,
                                         std::vector<ImplementationChoice> *choices) {
  linnet::support::TimingStage stage("codegen");
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("linnet-link", dir))
    return llvm::createStringError(ec, "cannot create a temporary directory to link in");
  llvm::SmallString<128> lib(dir);
  llvm::sys::path::append(lib, "model.so");
  llvm::Error e = compileToSharedLibrary(module, lib, options, choices);
  std::string bytes;
  if (!e) {
    auto buf = llvm::MemoryBuffer::getFile(lib, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (buf)
      bytes = (*buf)->getBuffer().str();
    else
      e = llvm::createStringError(buf.getError(), "cannot read the linked library");
  }
  llvm::sys::fs::remove_directories(dir);
  if (e)
    return std::move(e);
  return bytes;
}

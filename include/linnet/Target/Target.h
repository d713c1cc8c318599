//===- Target.h - What a compilation target supplies -------------*- C++ -*-===//
//
// A compilation (linnet/Compiler/Compiler.h) runs the gf passes once, with
// the target's schedule contract, and the plans and the code generator both
// read that one Task IR module. A target supplies the rest: its schedule
// contract, the dialects and interfaces its pipeline needs, the code
// generator from Task IR to a library, and what the artifact records of it
// (the runtime ABI the runtime loads it with, the libraries it needs).
// Targets are immutable: every option of a build travels in its request.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TARGET_TARGET_H
#define LINNET_TARGET_TARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace linnet::target {

/// How one kernel of a library is implemented: the code generator's choice,
/// which the concrete plan records as the kernel's ImplementationRef.
struct KernelChoice {
  std::string function; // the func.func it is in
  std::string op;       // "linalg.matmul", "linalg.generic", ...
  std::string role;     // "matmul" | "batch-matmul" | "matvec" | "elementwise" | "other"
  std::string kind;     // "generated" | "library"
  std::string routine;  // the library routine (a library entry point) or the schedule's name
  /// With kind "library": the library the routine is bound to, as the
  /// concrete plan names it, and the soname the artifact loads (the target
  /// decides both).
  std::string library, soname;
  /// A product dispatched on its rows at run time (ImplementationRef's
  /// few-rows branch): at most `fewRowsAtMost` rows run `fewRowsRoutine`,
  /// reading W once per `fewRowsPerPass` rows (0: no such branch).
  int64_t fewRowsAtMost = 0, fewRowsPerPass = 0;
  std::string fewRowsRoutine;
};

/// One code generation: a Task IR module to a library.
struct CodegenRequest {
  bool parallel = true;             // threads where the target has them
  std::string implementation = "auto"; // auto | generated | blas
  /// --matmul-precision: "tf32" permits f32 products bound to tensor-core
  /// routines to round their operands to TF32; a target may ignore it.
  std::string matmulPrecision = "highest";
  /// --block-products: "int8" permits products against block-quantized weights
  /// to quantize their f32 activations to q8_0; a target may ignore it.
  std::string blockProducts = "exact";
  /// `linnet build --dump-ir`: where each later stage's IR is written
  /// (empty: nowhere), numbered from `firstDumpStage`.
  std::string dumpIRDir;
  unsigned firstDumpStage = 0;
  /// Keep the IR of the target's first stage after bufferization as text
  /// (`linnet build --emit-mlir`: model.loops.mlir).
  bool keepBufferizedIR = false;
  /// Timers at the boundaries of every op tagged with its task
  /// (`linnet.task`, set by the planner): `linnet build --profile`.
  bool profile = false;
  /// Relation kernels through the distributed hook: `linnet build --ranks N`.
  bool distributed = false;
  /// A target whose kernels can also run on the host CPU (the CUDA target:
  /// grid and block as loops) builds that execution as the artifact's
  /// library, in the CPU runtime ABI, for tests: `linnet build --emulate`.
  bool emulate = false;
  /// The CUDA target also writes `kernels.host.so`: its kernels compiled
  /// for this CPU, which the CUDA driver emulator runs in place of the
  /// cubin, so the real CUDA runtime is tested without a GPU
  /// (`linnet build --host-kernels`, docs/cuda-abi.md).
  bool hostKernels = false;
  /// Inserted before the extension of every file the target adds
  /// (GeneratedLibrary::files): a variant's library `.v1` gets kernels.v1.ptx.
  std::string fileSuffix;
  /// The CPU host code is generated for (the target file's `abi.cpu`): an
  /// LLVM CPU name such as `x86-64-v3`; empty for the build host's CPU with
  /// all its extensions (`native`). runtime.json's `cpu` records the
  /// extensions that implies, and the runtime refuses a host without them.
  std::string cpu;
};

struct GeneratedLibrary {
  std::string bytes;                 // the library file's contents
  std::vector<KernelChoice> choices; // in program order
  /// Sonames the library loads besides libc (libomp.so.5, ...).
  std::vector<std::string> runtimeLibraries;
  std::string bufferizedIR; // with CodegenRequest::keepBufferizedIR
  /// With CodegenRequest::profile: the task each timer id stands for.
  std::vector<std::string> profiledTasks;
  /// With CodegenRequest::distributed: each relation kernel (by hook id)
  /// and the role of each of its arguments.
  struct DistributedKernel {
    std::string name;
    std::vector<std::string> roles;
    std::vector<int64_t> ranks, elemBytes; // per argument: memref rank, element size
    /// The halo of each field read through the `src` role: the kernel
    /// argument it is and its generated pack/unpack functions.
    struct Halo {
      std::string field, pack, unpack;
      int64_t arg = -1;
    };
    std::vector<Halo> halos;
  };
  std::vector<DistributedKernel> distributedKernels;
  /// Further files of the artifact the target writes (kernels.ptx, ...),
  /// in order; the manifest lists each with its digest.
  std::vector<std::pair<std::string, std::string>> files;
  /// MachineIR's code sections the target fills, by section name, with the
  /// artifact file each one is (".text" -> model.so on CPU).
  struct Section {
    std::string name, kind, file; // MachineIR's section, its kind, the artifact file
  };
  std::vector<Section> sections;
  /// The runtime ABI this library is loaded with, when it differs from the
  /// target's (an emulated CUDA build runs in the CPU ABI).
  std::string runtimeAbi;
  /// Members the target adds to runtime.json (the CUDA kernel table).
  std::vector<std::pair<std::string, std::string>> runtimeMembers; // name, JSON text
};

class Target {
public:
  virtual ~Target();
  /// The `kind` of the target files (docs/targets/*.json) it serves: cpu, cuda.
  virtual llvm::StringRef kind() const = 0;
  /// -gf-select-kernel-schedule's contract for this target.
  virtual llvm::StringRef scheduleContract() const = 0;
  /// The runtime ABI an artifact of this target is loaded with; empty for a
  /// target that plans but has no code generator yet.
  virtual llvm::StringRef runtimeAbi() const = 0;
  bool generatesCode() const { return !runtimeAbi().empty(); }
  /// What this target's code is made for besides the compiler itself: the
  /// host CPU and the features it is generated for, a GPU's architecture.
  /// An artifact cache keys on it (an entry built on another machine is
  /// never reused); empty for a target that generates no code.
  virtual std::string codeIdentity() const { return {}; }
  /// Empty when the target can build `request`; otherwise why not, naming
  /// the option (the build stops before any work with that message). The
  /// default refuses `emulate` (a target with no kernels to run on the CPU).
  virtual std::string unsupported(const CodegenRequest &request) const;
  /// The most chunks the importer may split a comprehension element's long
  /// fold into (flash-decoding: ImportOptions::foldChunks); 0 where one
  /// thread walking the axis is the better code (the CPU's).
  virtual unsigned foldChunks() const { return 0; }
  /// Keys per block of std.nn's online softmax (ImportOptions::softmaxBlock):
  /// each block's scores first, then their weights and the weighted values;
  /// 0 folds key by key (where a thread has no room for a block's scores).
  virtual unsigned softmaxBlock() const { return 0; }
  /// Dialects and external interface models the target's pipeline needs,
  /// registered in a compilation's context before the model is imported.
  virtual void registerDialects(mlir::DialectRegistry &registry) const;
  /// The gf passes, Domain IR to Task IR, scheduled for this target
  /// (`linnet-opt -linnet-gf-to-tasks=target-contract=...`). `ranks` > 0
  /// places relations without a mesh on that many parts (--ranks N).
  void buildTaskPipeline(mlir::OpPassManager &pm, int64_t ranks = 0) const;
  /// A Task IR module (tensors, as the importer and the task pipeline left
  /// it) to a library; the module is consumed. Errors say which stage failed.
  virtual llvm::Expected<GeneratedLibrary> generateCode(mlir::ModuleOp module,
                                                        const CodegenRequest &request) const;
};

/// Writes `module` with its locations (as `linnet-opt --mlir-print-debuginfo`
/// prints it) to DIR/NN-name: one stage of `linnet build --dump-ir`. The
/// error reads "cannot write 'PATH': why".
llvm::Error dumpStage(llvm::StringRef dir, unsigned stage, llvm::StringRef name, mlir::ModuleOp module);

/// The gf passes up to Task IR with `contract` (Target::buildTaskPipeline).
void buildTaskPipeline(mlir::OpPassManager &pm, llvm::StringRef contract, int64_t ranks = 0);
/// Registers -linnet-gf-to-tasks (for linnet-opt).
void registerTaskPipeline();

/// The targets linked into this program, by the `kind` of the target files
/// they serve (TargetRegistry.cpp). A target registers itself once, from
/// registerAllTargets (AllTargets.h): adding one is its folder under
/// lib/Target and that one line.
void registerTarget(const Target &target);
/// The target for `kind`, or null when none is registered.
const Target *lookupTarget(llvm::StringRef kind);
/// Every registered target, in registration order.
std::vector<const Target *> registeredTargets();

/// A target that plans but has no code generator (yet): its contract only.
class PlanningOnlyTarget final : public Target {
public:
  PlanningOnlyTarget(std::string kind, std::string contract)
      : kind_(std::move(kind)), contract_(std::move(contract)) {}
  llvm::StringRef kind() const override { return kind_; }
  llvm::StringRef scheduleContract() const override { return contract_; }
  llvm::StringRef runtimeAbi() const override { return {}; }

private:
  std::string kind_, contract_;
};

} // namespace linnet::target

#endif // LINNET_TARGET_TARGET_H

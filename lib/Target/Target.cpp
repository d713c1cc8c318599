//===- Target.cpp - The Target interface and the gf task pipeline ---------===//
#include "linnet/Target/Target.h"

#include "linnet/Dialect/Gf/Transforms/Passes.h"
#include "linnet/Support/AtomicFile.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace linnet::target {

Target::~Target() = default;

void Target::registerDialects(DialectRegistry &) const {}

std::string Target::unsupported(const CodegenRequest &request) const {
  if (request.emulate)
    return "--emulate runs a GPU target's kernels on the CPU; the " + kind().str() + " target has none";
  if (request.hostKernels)
    return "--host-kernels builds a GPU target's kernels for the driver emulator; the " + kind().str() +
           " target has none";
  return "";
}

llvm::Expected<GeneratedLibrary> Target::generateCode(ModuleOp, const CodegenRequest &) const {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "the " + kind().str() +
                                     " target has no code generator yet: plan for it with --emit");
}

void Target::buildTaskPipeline(OpPassManager &pm, int64_t ranks) const {
  target::buildTaskPipeline(pm, scheduleContract(), ranks);
}

void buildTaskPipeline(OpPassManager &pm, llvm::StringRef contract, int64_t ranks) {
  pm.addPass(gf::createGfExpandPagedRelations());
  pm.addPass(gf::createGfBuildRelations());
  pm.addPass(gf::createGfLowerDomainToIter());
  pm.addPass(gf::createGfLowerIterToKernel());
  gf::GfSelectKernelScheduleOptions schedule;
  schedule.targetContract = contract.str();
  pm.addPass(gf::createGfSelectKernelSchedule(schedule));
  gf::GfPlanDistributedTasksOptions distribute;
  distribute.ranks = ranks;
  pm.addPass(gf::createGfPlanDistributedTasks(distribute));
}

llvm::Error dumpStage(llvm::StringRef dir, unsigned stage, llvm::StringRef name, ModuleOp module) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, (stage < 10 ? "0" : "") + llvm::Twine(stage) + "-" + name);
  std::string text;
  llvm::raw_string_ostream os(text);
  // Locations are part of what the next stage reads.
  module->print(os, OpPrintingFlags().enableDebugInfo());
  os << "\n";
  // Through the output guard: a planted link is refused, not written through.
  std::string err;
  if (!support::prepareOutputDir(dir.str(), err) || !support::writeFileAtomic(path.str().str(), text, err))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot write '" + path.str() + "': " + err);
  return llvm::Error::success();
}

namespace {
struct TaskPipelineOptions : public PassPipelineOptions<TaskPipelineOptions> {
  Option<std::string> targetContract{
      *this, "target-contract",
      llvm::cl::desc("the schedule contract: cpu-simd-v1 (linnet build --target cpu) or "
                     "provider-neutral-v1"),
      llvm::cl::init("cpu-simd-v1")};
  Option<int64_t> ranks{*this, "ranks",
                        llvm::cl::desc("place relations without a mesh on this many parts "
                                       "(linnet build --ranks N)"),
                        llvm::cl::init(0)};
};
} // namespace

void registerTaskPipeline() {
  PassPipelineRegistration<TaskPipelineOptions>(
      "linnet-gf-to-tasks",
      "linnet build's stage 01: gf Domain IR to Task IR, scheduled for a target's contract "
      "(-gf-lower-domain-to-iter, -gf-lower-iter-to-kernel, -gf-select-kernel-schedule, "
      "-gf-plan-distributed-tasks); the plans and the code generator both read its result",
      [](OpPassManager &pm, const TaskPipelineOptions &o) { buildTaskPipeline(pm, o.targetContract, o.ranks); });
}

} // namespace linnet::target

//===- CpuTarget.cpp - The CPU target -------------------------------------===//
#include "linnet/Target/CPU/CpuTarget.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace linnet::cpu {

void CpuTarget::registerDialects(DialectRegistry &registry) const {
  registerCPUCodegenDialects(registry);
  registerBufferizationInterfaces(registry);
}

llvm::Expected<target::GeneratedLibrary> CpuTarget::generateCode(ModuleOp module,
                                                                 const target::CodegenRequest &request) const {
  CodegenOptions options;
  options.parallel = request.parallel;
  options.cpu = request.cpu;
  if (!parseImplementationPolicy(request.implementation, options.implementation))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "implementation policy: expected auto, generated or blas, found '" +
                                       request.implementation + "'");
  options.runTaskPipeline = false; // the compilation ran it
  options.profile = request.profile;
  options.linalgTarget.int8BlockProducts = request.blockProducts == "int8";
  options.distributed = request.distributed;
  options.dumpIRDir = request.dumpIRDir;
  options.firstDumpStage = request.firstDumpStage + 1;
  {
    // Bufferization reports through the context; keep the first message.
    std::string first;
    ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
      if (first.empty() && d.getSeverity() == DiagnosticSeverity::Error)
        llvm::raw_string_ostream(first) << d;
      return success();
    });
    if (failed(bufferize(module)))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "bufferization of the Task IR failed" +
                                         (first.empty() ? std::string() : ": " + first));
  }
  std::string bufferizedIR;
  if (request.keepBufferizedIR)
    llvm::raw_string_ostream(bufferizedIR) << module;
  if (!request.dumpIRDir.empty())
    if (llvm::Error e = target::dumpStage(request.dumpIRDir, request.firstDumpStage, "bufferized.mlir", module))
      return std::move(e);
  std::vector<ImplementationChoice> choices;
  llvm::Expected<std::string> bytes = compileToSharedLibraryBytes(module, options, &choices);
  if (!bytes)
    return bytes.takeError();
  target::GeneratedLibrary lib;
  lib.bytes = std::move(*bytes);
  lib.bufferizedIR = std::move(bufferizedIR);
  if (auto kernels = module->getAttrOfType<ArrayAttr>("linnet.distributed.kernels"))
    for (Attribute a : kernels) {
      auto d = cast<DictionaryAttr>(a);
      target::GeneratedLibrary::DistributedKernel k;
      k.name = cast<StringAttr>(d.get("name")).getValue().str();
      for (Attribute r : cast<ArrayAttr>(d.get("roles")))
        k.roles.push_back(cast<StringAttr>(r).getValue().str());
      for (Attribute r : cast<ArrayAttr>(d.get("ranks")))
        k.ranks.push_back(cast<IntegerAttr>(r).getInt());
      for (Attribute r : cast<ArrayAttr>(d.get("elem_bytes")))
        k.elemBytes.push_back(cast<IntegerAttr>(r).getInt());
      lib.distributedKernels.push_back(std::move(k));
    }
  if (auto halos = module->getAttrOfType<ArrayAttr>("linnet.distributed.halo"))
    for (Attribute a : halos) {
      auto d = cast<DictionaryAttr>(a);
      auto str = [&](StringRef key) {
        auto s = d.getAs<StringAttr>(key);
        return s ? s.getValue().str() : std::string();
      };
      for (target::GeneratedLibrary::DistributedKernel &k : lib.distributedKernels)
        if (k.name == str("kernel"))
          k.halos.push_back({str("field"), str("pack"), str("unpack"), d.getAs<IntegerAttr>("arg").getInt()});
    }
  if (auto tasks = module->getAttrOfType<ArrayAttr>("linnet.profile.tasks"))
    for (Attribute t : tasks)
      lib.profiledTasks.push_back(cast<StringAttr>(t).getValue().str());
  for (const ImplementationChoice &c : choices) {
    bool library = c.kind == "library";
    lib.choices.push_back({c.function, c.op, c.role, c.kind, c.routine, library ? "openblas" : "",
                           library ? "libopenblas.so.0" : "", c.fewRowsAtMost, c.fewRowsPerPass,
                           c.fewRowsRoutine});
  }
  if (std::optional<std::string> w = workspaceJson(module))
    lib.runtimeMembers.push_back({"workspace", *w});
  if (std::optional<std::string> l = layoutsJson(module))
    lib.runtimeMembers.push_back({"layouts", *l});
  lib.sections.push_back({".text", "code", "model.so"});
  lib.runtimeMembers.push_back({"cpu", codeCpuJson(options)});
  if (options.parallel && openMPAvailable())
    lib.runtimeLibraries.push_back("libomp.so.5");
  return lib;
}

} // namespace linnet::cpu

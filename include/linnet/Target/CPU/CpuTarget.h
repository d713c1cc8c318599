//===- CpuTarget.h - The CPU target -------------------------------*- C++ -*-===//
//
// Task IR on tensors -> -linnet-bufferize -> -linnet-cpu-lower-to-loops ->
// -linnet-cpu-lower-to-llvm -> LLVM IR -> object -> model.so, loaded by the
// runtime through the packed entry ABI (docs/runtime-abi.md).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TARGET_CPU_CPUTARGET_H
#define LINNET_TARGET_CPU_CPUTARGET_H

#include "linnet/Target/CPU/CPUCodegen.h"
#include "linnet/Target/Target.h"

namespace linnet::cpu {

/// The runtime ABI of CPU artifacts.
inline constexpr const char *kRuntimeAbi = "linnet-cpu-packed-v1";

class CpuTarget final : public target::Target {
public:
  llvm::StringRef kind() const override { return "cpu"; }
  llvm::StringRef scheduleContract() const override { return kScheduleContract; }
  llvm::StringRef runtimeAbi() const override { return kRuntimeAbi; }
  std::string codeIdentity() const override { return hostCodeIdentity(); }
  unsigned softmaxBlock() const override { return 64; }
  void registerDialects(mlir::DialectRegistry &registry) const override;
  llvm::Expected<target::GeneratedLibrary> generateCode(mlir::ModuleOp module,
                                                        const target::CodegenRequest &request) const override;
};

} // namespace linnet::cpu

#endif // LINNET_TARGET_CPU_CPUTARGET_H

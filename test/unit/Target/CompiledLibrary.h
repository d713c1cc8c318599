//===- CompiledLibrary.h - compile MLIR to a .so and dlopen it (tests) ----===//
//
// Shared by the CPU code generator's execution tests: parse MLIR source,
// compile it in-process with compileToSharedLibrary into a temporary .so,
// load it, and unload and delete it with the object.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TEST_UNIT_TARGET_COMPILEDLIBRARY_H
#define LINNET_TEST_UNIT_TARGET_COMPILEDLIBRARY_H

#include "linnet/Target/CPU/CPUCodegen.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"

#include <dlfcn.h>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

namespace linnet::cpu::test {

struct CompiledLibrary {
  CompiledLibrary() = default;
  CompiledLibrary(const CompiledLibrary &) = delete;
  ~CompiledLibrary() {
    if (handle)
      dlclose(handle);
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
  void *symbol(const std::string &name) const {
    return handle ? dlsym(handle, name.c_str()) : nullptr;
  }
  /// The C interface of function `name` (`_mlir_ciface_<name>`).
  template <typename F> F *fn(const std::string &name) const {
    return reinterpret_cast<F *>(symbol("_mlir_ciface_" + name));
  }
  void *handle = nullptr;
  std::string path, error; // error: empty on success
  std::vector<ImplementationChoice> choices;
};

inline std::unique_ptr<CompiledLibrary> compileLibrary(const std::string &source,
                                                       const CodegenOptions &options = {}) {
  auto lib = std::make_unique<CompiledLibrary>();
  mlir::DialectRegistry registry;
  registerCPUCodegenDialects(registry);
  mlir::MLIRContext context(registry);
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    os << d << "\n";
    return mlir::success();
  });
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module) {
    lib->error = "parse error: " + diagnostics;
    return lib;
  }
  llvm::SmallString<128> path;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("linnet-cpu-test", "so", fd, path)) {
    lib->error = "cannot create a temporary file";
    return lib;
  }
  ::close(fd);
  lib->path = path.str().str();
  if (llvm::Error e = compileToSharedLibrary(*module, lib->path, options, &lib->choices)) {
    lib->error = llvm::toString(std::move(e));
    return lib;
  }
  lib->handle = dlopen(lib->path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle)
    lib->error = dlerror();
  return lib;
}

} // namespace linnet::cpu::test

#endif

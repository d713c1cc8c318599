//===- gf-ir-fuzzer.cpp - libFuzzer target for the gf dialects' textual IR -===//
//
// Any input must parse and verify (or be refused with a diagnostic) without
// crashing, hanging or tripping a sanitizer. An input that parses and verifies
// must survive print -> parse -> verify and print the same text again: the
// custom assembly formats and the verifiers of the five gf dialects are held
// to MLIR's round-trip contract. A violation aborts, which libFuzzer reports.
//
//===----------------------------------------------------------------------===//

#include "linnet/Dialect/Gf/IR/Gf.h"
#include "linnet/Dialect/GfIter/IR/GfIter.h"
#include "linnet/Dialect/GfKernel/IR/GfKernel.h"
#include "linnet/Dialect/GfStorage/IR/GfStorage.h"
#include "linnet/Dialect/GfTask/IR/GfTask.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir;

static MLIRContext &context() {
  static MLIRContext *ctx = [] {
    DialectRegistry registry;
    registry.insert<linnet::gf::GfDialect, linnet::gf_iter::GfIterDialect,
                    linnet::gf_kernel::GfKernelDialect, linnet::gf_task::GfTaskDialect,
                    linnet::gf_storage::GfStorageDialect>();
    registry.insert<arith::ArithDialect, func::FuncDialect, math::MathDialect,
                    scf::SCFDialect, tensor::TensorDialect, memref::MemRefDialect>();
    auto *c = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    // Unknown dialects stay errors: the point is to exercise ours.
    return c;
  }();
  return *ctx;
}

static std::string print(ModuleOp module) {
  std::string out;
  llvm::raw_string_ostream os(out);
  module->print(os, OpPrintingFlags().assumeVerified());
  return out;
}

/// Inputs that crash MLIR 19 itself, outside the gf dialects, are skipped so
/// that the fuzzer keeps exploring ours:
///  - a bool dense array with an integer element, `array<i1: 0>` (also
///    spelled `i01`): the parser accepts it and AsmPrinter's
///    printDenseArrayAttr then reads through a null pointer (upstream
///    `mlir-opt --allow-unregistered-dialect` on `"a.b"() {x = array<i1: 0>}
///    : () -> ()` crashes the same way); a property conversion diagnostic
///    prints the attribute, so any op reaches it.
static bool hitsUpstreamCrash(const std::string &text) {
  for (size_t at = text.find("array<"); at != std::string::npos; at = text.find("array<", at + 1)) {
    size_t i = at + 6;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
      ++i;
    if (i >= text.size() || text[i] != 'i')
      continue;
    size_t j = ++i;
    while (j < text.size() && text[j] == '0')
      ++j;
    if (j < text.size() && text[j] == '1' && (j + 1 >= text.size() || !std::isdigit(static_cast<unsigned char>(text[j + 1]))))
      return true;
  }
  return false;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &ctx = context();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (diagnostics.size() < 4096)
      diagnostics += d.str() + "\n";
    return success();
  });
  ParserConfig config(&ctx);
  // MLIR's lexer reads up to a terminating NUL: give it a string that has one.
  std::string text(reinterpret_cast<const char *>(data), size);
  if (hitsUpstreamCrash(text))
    return 0;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config, "fuzz.mlir");
  if (!module || failed(verify(*module)))
    return 0;
  std::string first = print(*module);
  diagnostics.clear();
  OwningOpRef<ModuleOp> again = parseSourceString<ModuleOp>(first, config, "printed.mlir");
  if (!again || failed(verify(*again))) {
    std::fprintf(stderr, "printed IR does not parse and verify\n--- printed\n%s\n--- diagnostics\n%s\n",
                 first.c_str(), diagnostics.c_str());
    std::abort();
  }
  std::string second = print(*again);
  if (first != second) {
    std::fprintf(stderr, "print is not stable\n--- first\n%s\n--- second\n%s\n", first.c_str(),
                 second.c_str());
    std::abort();
  }
  return 0;
}

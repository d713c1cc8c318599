//===- linnet-cpu-compile.cpp - .mlir kernels to a host shared library ----===//
//
//   linnet-cpu-compile IN.mlir -o OUT.so [--O=3] [--serial] [--mcpu=CPU]
//                      [--emit=so|loops|llvm-dialect|llvm-ir]
//                      [--impl=auto|generated|blas] [--implementations=PATH]
//
// IN may be at any stage from Domain IR (gf.apply) to loops; the stages
// still missing are run (docs/cpu-abi.md describes the functions in OUT).
// --emit stops early and prints the module at that point, for tests.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/CPUCodegen.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::init("-"));
static cl::opt<std::string> outputFile("o", cl::desc("output file"),
                                       cl::value_desc("path"), cl::init("-"));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level"),
                                  cl::init(3));
static cl::opt<bool> serial("serial",
                            cl::desc("run row tiles serially (no OpenMP)"));
static cl::opt<std::string> mcpu("mcpu", cl::desc("target CPU (default: host)"));
static cl::opt<std::string>
    impl("impl",
         cl::desc("implementations contractions may bind to: auto (BLAS where "
                  "the CPU target's BLAS library is installed) | generated | blas"),
         cl::init("auto"));
static cl::opt<std::string> implementationsFile(
    "implementations",
    cl::desc("write the implementation chosen for each linalg op as JSON (- for stdout)"),
    cl::value_desc("path"));
static cl::opt<unsigned> vectorBits(
    "vector-bits", cl::desc("vector width the linalg schedules assume (0: host)"),
    cl::init(0));
static cl::opt<int64_t> l2Bytes(
    "l2-bytes", cl::desc("L2 bytes per core the linalg schedules assume (0: host)"),
    cl::init(0));
static cl::opt<int64_t> prefetchRows(
    "prefetch-rows",
    cl::desc("rows ahead streamed products prefetch W (0: none; -1: as tuned for the host's CPU)"),
    cl::init(-1));
static cl::opt<std::string> blockProducts(
    "block-products", cl::desc("exact | int8: products against block-quantized weights may quantize x to q8_0"),
    cl::init("exact"));
static cl::opt<int> int8Dot(
    "int8-dot",
    cl::desc("integer block products with AVX-512 VNNI's vpdpbusd: 1, 0 (AVX2's pmaddubsw/pmaddwd), -1 (as the "
             "code's CPU has it)"),
    cl::init(-1));
static cl::opt<unsigned> threads(
    "linalg-threads", cl::desc("threads the linalg outer tiles are split over"), cl::init(2));
static cl::opt<int64_t> minParallelMacs(
    "linalg-min-parallel-macs",
    cl::desc("multiply-adds under which a contraction runs on one thread"), cl::init(int64_t(1) << 22));
static cl::opt<std::string>
    emit("emit", cl::desc("so | loops | llvm-dialect | llvm-ir"), cl::init("so"));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "linnet CPU code generator\n");

  mlir::DialectRegistry registry;
  linnet::cpu::registerCPUCodegenDialects(registry);
  mlir::MLIRContext context(registry);
  std::string error;
  auto file = mlir::openInputFile(inputFile, &error);
  if (!file) {
    errs() << "linnet-cpu-compile: " << error << "\n";
    return 1;
  }
  SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(file), SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sources, &context);
  auto module = mlir::parseSourceFile<mlir::ModuleOp>(sources, &context);
  if (!module)
    return 1;

  linnet::cpu::CodegenOptions options;
  options.optLevel = optLevel;
  options.parallel = !serial;
  options.cpu = mcpu;
  if (!linnet::cpu::parseImplementationPolicy(impl, options.implementation)) {
    errs() << "linnet-cpu-compile: unknown --impl=" << impl
           << " (auto | generated | blas)\n";
    return 1;
  }
  options.linalgTarget.vectorBits = vectorBits;
  options.linalgTarget.l2Bytes = l2Bytes;
  options.linalgTarget.threads = threads;
  options.linalgTarget.prefetchRows = prefetchRows;
  options.linalgTarget.int8BlockProducts = blockProducts == "int8";
  options.linalgTarget.int8Dot = int8Dot;
  options.linalgTarget.minParallelMacs = minParallelMacs;
  std::vector<linnet::cpu::ImplementationChoice> choices;
  auto writeChoices = [&]() -> bool {
    if (implementationsFile.empty())
      return true;
    std::string err;
    auto f = mlir::openOutputFile(implementationsFile, &err);
    if (!f) {
      errs() << "linnet-cpu-compile: " << err << "\n";
      return false;
    }
    f->os() << "[";
    for (size_t i = 0; i < choices.size(); ++i)
      f->os() << (i ? ",\n " : "") << linnet::cpu::toJSON(choices[i]);
    f->os() << "]\n";
    f->keep();
    return true;
  };

  if (emit == "so") {
    if (outputFile == "-") {
      errs() << "linnet-cpu-compile: a shared library needs -o PATH\n";
      return 1;
    }
    if (Error e = linnet::cpu::compileToSharedLibrary(*module, outputFile,
                                                      options, &choices)) {
      errs() << "linnet-cpu-compile: " << toString(std::move(e)) << "\n";
      return 1;
    }
    return writeChoices() ? 0 : 1;
  }

  auto out = mlir::openOutputFile(outputFile, &error);
  if (!out) {
    errs() << "linnet-cpu-compile: " << error << "\n";
    return 1;
  }
  if (failed(linnet::cpu::lowerToLoops(*module, options, &choices)) ||
      !writeChoices())
    return 1;
  if (emit != "loops" &&
      failed(linnet::cpu::lowerLoopsToLLVMDialect(*module, options)))
    return 1;
  if (emit == "loops" || emit == "llvm-dialect") {
    module->print(out->os());
  } else if (emit == "llvm-ir") {
    LLVMContext llvmContext;
    auto llvmModule = linnet::cpu::translateAndOptimize(*module, llvmContext, options);
    if (!llvmModule) {
      errs() << "linnet-cpu-compile: " << toString(llvmModule.takeError()) << "\n";
      return 1;
    }
    (*llvmModule)->print(out->os(), nullptr);
  } else {
    errs() << "linnet-cpu-compile: unknown --emit=" << emit << "\n";
    return 1;
  }
  out->keep();
  return 0;
}

//===- linnet-translate.cpp - A JSON plan to the imported MLIR module -----===//
//
// mlir-translate for linnet: `--import-plan` reads a plan (JSON v1, what
// `linnet plan MODEL.ln -D ...` prints) through the plan reader and prints
// the plan importer's module, which is what `linnet build --emit-mlir` writes
// as model.mlir before any pass runs. It links the plan reader and the
// importer only, so importer tests need neither the front end nor a target.
//
//   linnet-translate --import-plan plan.json -o model.mlir
//   linnet plan model.ln -D N=4 | linnet-translate --import-plan
//
// Exit status as for linnet: 0 success, 1 errors in the input, 2 usage.
//
//===----------------------------------------------------------------------===//

#include "linnet/Import/PlanImporter.h"
#include "linnet/Plan/PlanReader.h"
#include "linnet/Support/Input.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <exception>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cl = llvm::cl;
using namespace linnet;

namespace {

cl::OptionCategory translateCategory("linnet-translate options");

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<input file>"), cl::init("-"),
                                   cl::cat(translateCategory));
cl::opt<std::string> outputFilename("o", cl::desc("Output filename"), cl::value_desc("filename"),
                                    cl::init("-"), cl::cat(translateCategory));

// The translations, one flag each as in mlir-translate.
cl::opt<bool> importPlanFlag("import-plan",
                             cl::desc("Translate a JSON plan (version 1) to the plan importer's "
                                      "MLIR module (func, linalg, tensor, scf, gf)"),
                             cl::cat(translateCategory));

// ImportOptions, and the presence set a build takes from its weights.
cl::opt<bool> runtimeChecks("runtime-checks",
                            cl::desc("Compile the run-time checks (data-dependent indices, "
                                     "integer divisors); default on, as in linnet build"),
                            cl::init(true), cl::cat(translateCategory));
cl::opt<unsigned> foldChunks("fold-chunks",
                             cl::desc("Split a long fold with an associative user reducer into up "
                                      "to N chunks, as a target may (Target::foldChunks); 0: "
                                      "every fold in order, as for the CPU"),
                             cl::init(0), cl::cat(translateCategory));
cl::opt<unsigned> softmaxBlock("softmax-block",
                               cl::desc("Fold std.nn's online softmax in blocks of N keys "
                                        "(Target::softmaxBlock; 64 as for the CPU); 0: key by key"),
                               cl::init(64), cl::cat(translateCategory));
cl::list<std::string> presentTensors("present",
                                     cl::desc("Optional tensors present, as weights would provide "
                                              "them (expanded paths, comma separated); default none"),
                                     cl::CommaSeparated, cl::value_desc("path,..."),
                                     cl::cat(translateCategory));


/// Reads the plan: `-` is stdin; a file must be a regular file. Both within
/// LINNET_MAX_JSON_BYTES, as every plan the tools read.
bool readInput(const std::string &path, std::string &text, std::string &error) {
  if (path != "-")
    return input::readFile(path, input::maxJsonBytes(), "LINNET_MAX_JSON_BYTES", text, error);
  uint64_t limit = input::maxJsonBytes();
  char chunk[65536];
  while (std::cin.read(chunk, sizeof chunk) || std::cin.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(std::cin.gcount()));
    if (text.size() > limit) {
      error = fmt::format("larger than the {} byte limit (set LINNET_MAX_JSON_BYTES to raise it)",
                          limit);
      return false;
    }
  }
  if (std::cin.bad()) {
    error = "cannot read standard input";
    return false;
  }
  return true;
}

int importPlanMain(const std::string &name) {
  std::string text, error;
  if (!readInput(inputFilename, text, error)) {
    llvm::errs() << fmt::format("linnet-translate: error: cannot read '{}': {}\n", name, error);
    return 1;
  }
  // Each problem with its JSON path, as `linnet plan PLAN.json` reports them.
  std::vector<ir::Problem> problems;
  std::optional<plan::Plan> p = plan::readPlanText(text, problems);
  if (!p) {
    for (const ir::Problem &pr : problems)
      llvm::errs() << fmt::format("{}: error: {}\n", name, pr.str());
    if (problems.empty())
      llvm::errs() << fmt::format("{}: error: not a valid plan\n", name);
    return 1;
  }

  // The optional tensors --present names must be the plan's.
  std::set<std::string> present(presentTensors.begin(), presentTensors.end());
  std::vector<import::ModelTensor> all = import::expandManifest(*p, {}, error);
  if (!error.empty()) {
    llvm::errs() << fmt::format("{}: error: {}\n", name, error);
    return 1;
  }
  for (const std::string &path : present) {
    bool known = false;
    for (const import::ModelTensor &t : all)
      known = known || (t.optional && t.path == path);
    if (!known) {
      llvm::errs() << fmt::format("linnet-translate: error: --present: '{}' is not an optional "
                                  "tensor of {}\n",
                                  path, name);
      return 2;
    }
  }
  std::vector<import::ModelTensor> tensors = import::expandManifest(*p, present, error);
  if (!error.empty()) {
    llvm::errs() << fmt::format("{}: error: {}\n", name, error);
    return 1;
  }

  // As linnet build imports: no threads (the import is serial).
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  support::Diag importError;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      import::importPlan(*p, tensors, context, importError, {runtimeChecks, foldChunks, softmaxBlock});
  if (!module) {
    // Located at the model's source, else about the plan file.
    if (!importError.located())
      importError.file = name;
    llvm::errs() << support::renderText(importError, "");
    return 1;
  }

  // Written only now: a failed translation leaves no output file.
  std::string openError;
  std::unique_ptr<llvm::ToolOutputFile> out = mlir::openOutputFile(outputFilename, &openError);
  if (!out) {
    llvm::errs() << fmt::format("linnet-translate: error: {}\n", openError);
    return 1;
  }
  module->print(out->os());
  out->os().flush();
  if (out->os().has_error()) {
    llvm::errs() << fmt::format("linnet-translate: error: cannot write '{}': {}\n",
                                outputFilename.getValue(), out->os().error().message());
    out->os().clear_error();
    return 1;
  }
  out->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // The printer's options (--mlir-print-debuginfo gives each op its source
  // line, as `linnet build --dump-ir` prints them).
  mlir::registerAsmPrinterCLOptions();
  if (!cl::ParseCommandLineOptions(argc, argv, "linnet translation driver\n", &llvm::errs()))
    return 2;
  if (!importPlanFlag) {
    llvm::errs() << "linnet-translate: error: no translation given (--import-plan)\n";
    return 2;
  }
  std::string name = inputFilename == "-" ? "<stdin>" : inputFilename.getValue();
  try {
    return importPlanMain(name);
  } catch (const std::exception &e) {
    // The reader and the importer report what they refuse; anything else
    // escaping them (a plan the reader let through that the importer reads
    // as another type) is their bug, but no crash of the tool.
    llvm::errs() << fmt::format("{}: error: the plan could not be imported: {} (an importer "
                                "bug)\n",
                                name, e.what());
    return 1;
  }
}

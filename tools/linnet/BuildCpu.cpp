//===- BuildCpu.cpp - `linnet build MODEL.ln --target cpu` ----------------===//
//
// source -> Sema -> plan (JSON v1) -> plan reader -> plan importer (MLIR on
// tensors) -> bufferization and loops -> CPU code generator -> model.so,
// with runtime.json and plan.json next to it.
//
//===----------------------------------------------------------------------===//
#include "FrontEnd.h"
#include "BuildCpu.h"

#include "linnet/Import/PlanImporter.h"
#include "linnet/Plan/Binding.h"
#include "linnet/Plan/PlanReader.h"
#include "linnet/Plan/PlanWriter.h"
#include "linnet/Runtime/Artifact.h"
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Support/AtomicFile.h"
#include "linnet/Support/Digest.h"
#include "linnet/Support/Timing.h"
#include "linnet/Sema/Instantiate.h"
#include "linnet/Sema/Sema.h"
#include "linnet/Syntax/Diagnostics.h"
#include "linnet/Syntax/SourceManager.h"
#include "linnet/Target/CPU/CPUCodegen.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/thread.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>

namespace linnet::tool {

BuildCpuOptions &buildCpuOptions() {
  static BuildCpuOptions opts;
  return opts;
}

void addBuildCpuOptions(CLI::App *c, BuildCpuOptions &o) {
  c->add_option("--root", o.root, "Root block of a .ln model (default: its only pub block)");
  c->add_option("-D", o.defines, "Bind a root generic of a .ln model: -D Name=value")
      ->allow_extra_args(false);
  c->add_option("-I", o.includeDirs, "Add a module search root")->allow_extra_args(false);
  c->add_option("--weights", o.weights,
                "Weights (.safetensors) that decide which optional tensors are present");
  c->add_option("--binding", o.binding, "Binding manifest mapping canonical paths to weight names");
  c->add_flag("--serial", o.serial, "No OpenMP: run every loop in the calling thread");
  c->add_flag("--emit-mlir", o.emitMlir, "Also write model.mlir and model.loops.mlir");
  c->add_option("--dump-ir", o.dumpIR,
                "Write the primary library's IR after each stage into DIR: 00-imported.mlir, "
                "01-bufferized.mlir, 02-loops.mlir, 03-llvm.mlir (linnet-opt's -linnet-bufferize, "
                "-linnet-cpu-lower-to-loops, -linnet-cpu-lower-to-llvm reproduce each from the one "
                "before) and 04-model.ll (optimized LLVM IR)")
      ->type_name("DIR");
  c->add_option("--runtime-checks", o.runtimeChecks,
                "on (default): indices read from data and integer divisors are checked at run "
                "time; off: unchecked, to measure what the checks cost")
      ->transform(CLI::IsMember(std::map<std::string, bool>{{"on", true}, {"off", false}}));
  c->add_option("--impl", o.impl,
                 "Contractions: auto (BLAS where installed), generated (libraries disabled), blas")
      ->check(CLI::IsMember({"auto", "generated", "blas"}));
  c->add_option("--variants", o.variants,
                "Without --weights, which presences of the optional tensors get a library (the "
                "weights choose one at load time): auto (none or all present), each (every "
                "combination), none (all absent)")
      ->check(CLI::IsMember({"auto", "each", "none"}));
}

namespace {

/// manifest.json for a build with no planning manifest writer: the files
/// and their digests, which is all the runtime reads.
int writeFilesManifest(ArtifactOutputs &out) {
  nlohmann::json files = nlohmann::json::array();
  for (const ArtifactOutputs::File &f : out.files)
    files.push_back({{"path", f.path}, {"sha256", f.sha256}, {"bytes", f.bytes}});
  nlohmann::json m = {{"schema", rt::kArtifactManifestSchema},
                      {"abi", {{"runtime_abi", rt::kCpuRuntimeAbi}}},
                      {"library", "model.so"},
                      {"files", files}};
  std::string text = m.dump(2) + "\n", err;
  if (!support::writeFileAtomic(out.dir + "/manifest.json", text, err)) {
    std::cerr << fmt::format("linnet build: error: cannot write '{}/manifest.json': {}\n", out.dir, err);
    return 1;
  }
  return 0;
}

/// A library of an artifact's optional-tensor variant, built on a worker.
struct VariantBuild {
  llvm::thread worker;
  bool ok = false;
  std::string library, runtime; // model.vK.so's and runtime.vK.json's bytes
};
/// Deep programs recurse in the importer: the CLI's command stack size.
constexpr unsigned kVariantStackBytes = 256u << 20;

std::optional<nlohmann::json> planOf(const BuildCpuOptions &o) {
  SourceManager sm;
  std::string err;
  std::optional<uint32_t> buf = sm.addFile(o.file, err);
  if (!buf) {
    std::cerr << fmt::format("linnet: error: cannot read '{}': {}\n", o.file, err);
    return std::nullopt;
  }
  std::optional<std::map<std::string, std::string>> defines = parseDefines(o.defines, "build");
  if (!defines)
    return std::nullopt;
  support::TimingStage stage("parse and check");
  DiagnosticEngine diag(sm, &std::cerr);
  sema::SemaOptions so = semaOptions(o.includeDirs);
  std::unique_ptr<sema::Program> prog = sema::analyze(sm, *buf, o.file, diag, so);
  if (diag.hasErrors())
    return std::nullopt;
  const sema::BlockInfo *root = sema::findRootBlock(*prog, o.root, diag);
  if (!root)
    return std::nullopt;
  // What the CPU back end cannot build yet, said at the source.
  for (const sema::GenericParam &g : root->generics)
    if (g.kind == ast::GenericKind::Shape)
      diag.error(g.loc, fmt::format("root generic '{}': a shape generic on the root block is not "
                                    "supported by the CPU back end yet (give the block a dim "
                                    "generic per axis)",
                                    g.name));
  if (diag.hasErrors())
    return std::nullopt;
  std::optional<sema::Instantiation> inst = sema::instantiate(*root, *defines, diag);
  if (!inst)
    return std::nullopt;
  stage.next("plan");
  try {
    return plan::buildPlan(*prog, &*inst);
  } catch (const std::exception &e) {
    std::cerr << "linnet: " << e.what() << "\n";
    return std::nullopt;
  }
}

} // namespace

bool ArtifactOutputs::write(const std::string &name, std::string_view bytes) {
  support::TimingStage stage("write the artifact");
  std::string err;
  if (!support::writeFileAtomic(dir + "/" + name, bytes, err)) {
    std::cerr << fmt::format("linnet build: error: cannot write '{}/{}': {}\n", dir, name, err);
    return false;
  }
  files.push_back({name, support::sha256Hex(bytes), static_cast<int64_t>(bytes.size())});
  return true;
}

std::optional<ImportedModel> importModel(const BuildCpuOptions &o, mlir::MLIRContext &context,
                                         const std::set<std::string> *presentOverride) {
  std::optional<nlohmann::json> doc = planOf(o);
  if (!doc)
    return std::nullopt;
  std::vector<ir::Problem> problems;
  std::optional<plan::Plan> p = plan::readPlan(*doc, problems);
  if (!p) {
    for (const ir::Problem &pr : problems)
      std::cerr << fmt::format("linnet build: error: {}: plan: {}\n", o.file, pr.str());
    return std::nullopt;
  }

  // Optional tensors are present when the weights hold them.
  std::set<std::string> present;
  if (presentOverride) {
    present = *presentOverride;
  } else if (!o.weights.empty()) {
    std::string err;
    auto w = rt::SafeTensorsFile::open(o.weights, err);
    if (!w) {
      std::cerr << "linnet build: error: " << err << "\n";
      return std::nullopt;
    }
    std::map<std::string, std::string> external;
    if (!o.binding.empty()) {
      std::ifstream in(o.binding);
      nlohmann::json bdoc = nlohmann::json::parse(in, nullptr, false);
      std::vector<ir::Problem> bp;
      std::optional<plan::Binding> b = bdoc.is_discarded() ? std::nullopt
                                                           : plan::checkBinding(bdoc, p->manifest, bp);
      if (!b) {
        std::cerr << fmt::format("linnet build: error: {}: not a valid binding manifest\n", o.binding);
        for (const ir::Problem &pr : bp)
          std::cerr << "  " << pr.str() << "\n";
        return std::nullopt;
      }
      external = b->names;
    }
    std::string err2;
    for (const import::ModelTensor &t : import::expandManifest(*p, {}, err2)) {
      auto it = external.find(t.path);
      if (w->find(it == external.end() ? t.path : it->second))
        present.insert(t.path);
    }
  }
  ImportedModel m;
  m.doc = std::move(*doc);
  m.plan = std::move(*p);
  if (!importPresence(o, m, present, context))
    return std::nullopt;
  return m;
}

bool importPresence(const BuildCpuOptions &o, ImportedModel &m, const std::set<std::string> &present,
                    mlir::MLIRContext &context) {
  std::string err;
  std::vector<import::ModelTensor> tensors = import::expandManifest(m.plan, present, err);
  if (!err.empty()) {
    std::cerr << fmt::format("linnet build: error: {}: {}\n", o.file, err);
    return false;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = import::importPlan(m.plan, tensors, context, err, {o.runtimeChecks});
  if (!module) {
    // A located error already reads `file:line:col: error: ...`.
    if (err.find(": error: ") != std::string::npos)
      std::cerr << err << "\n";
    else
      std::cerr << fmt::format("linnet build: error: {}: {}\n", o.file, err);
    return false;
  }
  m.tensors = std::move(tensors);
  m.module = std::move(module);
  return true;
}

std::vector<std::set<std::string>> optionalVariants(const plan::Plan &p, const std::string &mode,
                                                    std::string &error) {
  if (mode == "none")
    return {};
  // One unit per optional manifest entry that weights can hold (state is
  // never in the weights): all of a layer array's copies of an entry go
  // together, as a checkpoint has a bias everywhere or nowhere.
  std::vector<std::vector<std::string>> units;
  std::string err;
  std::vector<import::ModelTensor> all = import::expandManifest(p, {}, err);
  size_t next = 0;
  for (const plan::ManifestEntry &e : p.manifest) {
    size_t copies = 1;
    for (const nlohmann::json &r : e.repeat)
      copies *= r.is_number_integer() ? static_cast<size_t>(std::max<int64_t>(r.get<int64_t>(), 0)) : 0;
    if (next + copies > all.size())
      return {};
    if (e.optional && e.kind != "state") {
      std::vector<std::string> paths;
      for (size_t i = 0; i < copies; ++i)
        paths.push_back(all[next + i].path);
      units.push_back(std::move(paths));
    }
    next += copies;
  }
  if (units.empty())
    return {};
  if (mode == "each" && units.size() > kMaxOptionalUnitsForEach) {
    error = fmt::format("--variants each: the model has {} optional tensors (or arrays of them), "
                        "more than the {} whose {} combinations an artifact may carry; use "
                        "--variants auto (none or all present) or build with --weights",
                        units.size(), kMaxOptionalUnitsForEach, size_t(1) << kMaxOptionalUnitsForEach);
    return {};
  }
  // auto: all of them present besides none (a checkpoint with or without
  // biases); each: every combination, while there are few.
  std::vector<std::set<std::string>> sets;
  size_t combos = mode == "each" ? size_t(1) << units.size() : 2;
  for (size_t mask = 1; mask < combos; ++mask) {
    std::set<std::string> s;
    for (size_t u = 0; u < units.size(); ++u)
      if (mode != "each" || (mask >> u & 1))
        s.insert(units[u].begin(), units[u].end());
    sets.push_back(std::move(s));
  }
  return sets;
}

int buildCpuArtifact(const BuildCpuOptions &o) {
  if (o.output.empty() || o.output == "-") {
    std::cerr << "linnet build: error: building a .ln model needs -o DIR (the artifact directory)\n";
    return 2;
  }
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  std::optional<ImportedModel> im = importModel(o, context);
  if (!im)
    return 1;
  // Built beside the destination and moved into place whole (AtomicFile.h).
  std::string err;
  support::StagingDir staging(o.output, err);
  if (staging.path().empty()) {
    std::cerr << fmt::format("linnet build: error: {}\n", err);
    return 1;
  }
  ArtifactOutputs out;
  out.dir = staging.path();
  mlir::OwningOpRef<mlir::ModuleOp> &module = im->module;
  const std::vector<import::ModelTensor> &tensors = im->tensors;
  const plan::Plan *p = &im->plan;
  const nlohmann::json *doc = &im->doc;
  // The planning pipeline reads the module as imported (before
  // bufferization): keep a copy for the manifest.
  mlir::OwningOpRef<mlir::ModuleOp> imported = o.writeManifest ? module->clone() : nullptr;
  auto dump = [&](const std::string &name) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return out.write(name, text);
  };
  if (o.emitMlir && !dump("model.mlir"))
    return 1;
  // --dump-ir: numbered stages of the primary library, outside the artifact.
  auto dumpStage = [&](mlir::ModuleOp m, const std::string &name) {
    if (o.dumpIR.empty())
      return true;
    std::error_code ec = llvm::sys::fs::create_directories(o.dumpIR);
    std::string path = o.dumpIR + "/" + name;
    if (!ec) {
      llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
      if (!ec) {
        // As `linnet-opt --mlir-print-debuginfo` prints it: locations are
        // part of what the next stage reads.
        m->print(os, mlir::OpPrintingFlags().enableDebugInfo());
        os << "\n";
      }
    }
    if (ec)
      std::cerr << fmt::format("linnet build: error: cannot write '{}': {}\n", path, ec.message());
    return !ec;
  };
  if (!dumpStage(*module, "00-imported.mlir"))
    return 1;
  cpu::CodegenOptions cg;
  cg.parallel = !o.serial;
  if (!cpu::parseImplementationPolicy(o.impl, cg.implementation)) {
    std::cerr << fmt::format("linnet build: error: --impl expects auto, generated or blas, found '{}'\n",
                             o.impl);
    return 2;
  }
  // The imported module to model.so's bytes and the runtime description's
  // check table (read before lowering erases it).
  auto compile = [&](mlir::ModuleOp m, nlohmann::json &checks, std::vector<cpu::ImplementationChoice> *choices,
                     const std::string &what) -> std::optional<std::string> {
    checks = import::runtimeChecks(m);
    if (mlir::failed(import::lowerImportedToLoops(m))) {
      std::cerr << fmt::format("linnet build: error: {}: bufferization of the imported model{} failed\n",
                               o.file, what);
      return std::nullopt;
    }
    if (o.emitMlir && what.empty() && !dump("model.loops.mlir"))
      return std::nullopt;
    cpu::CodegenOptions stageOptions = cg;
    if (what.empty()) {
      if (!dumpStage(m, "01-bufferized.mlir"))
        return std::nullopt;
      stageOptions.dumpIRDir = o.dumpIR;
    }
    llvm::Expected<std::string> lib = cpu::compileToSharedLibraryBytes(m, stageOptions, choices);
    if (!lib) {
      std::cerr << fmt::format("linnet build: error: {}{}: {}\n", o.file, what, llvm::toString(lib.takeError()));
      return std::nullopt;
    }
    return std::move(*lib);
  };
  // Without weights, optional tensors are bound at load time: besides the
  // primary library (every optional tensor absent) the artifact carries one
  // variant per presence set (optionalVariants), and the runtime loads the
  // one the weights select (docs/runtime-abi.md, "Optional tensors"). Each
  // variant is imported and compiled in a context of its own on a worker
  // thread while the primary one compiles here; the files are written in a
  // fixed order afterwards, so the artifact does not depend on timing.
  std::vector<std::set<std::string>> variants;
  if (o.weights.empty()) {
    std::string why;
    variants = optionalVariants(*p, o.variants, why);
    if (!why.empty()) {
      std::cerr << fmt::format("linnet build: error: {}: {}\n", o.file, why);
      return 2;
    }
  }
  std::vector<VariantBuild> variantBuilds(variants.size());
  std::atomic<size_t> nextVariant{0};
  auto variantWorker = [&] {
    for (size_t k; (k = nextVariant.fetch_add(1)) < variants.size();) {
      VariantBuild &v = variantBuilds[k];
      std::string what = fmt::format(" (variant {}: with optional tensors {})", k + 1,
                                     fmt::join(variants[k], ", "));
      mlir::MLIRContext vcontext(mlir::MLIRContext::Threading::DISABLED);
      ImportedModel vm;
      vm.plan = im->plan;
      if (!importPresence(o, vm, variants[k], vcontext))
        continue;
      nlohmann::json vchecks;
      std::optional<std::string> vlib = compile(*vm.module, vchecks, nullptr, what);
      if (!vlib)
        continue;
      nlohmann::json vrt = import::runtimeJson(vm.plan, vm.tensors, vchecks);
      vrt["library"] = fmt::format("model.v{}.so", k + 1);
      v.library = std::move(*vlib);
      v.runtime = vrt.dump(2) + "\n";
      v.ok = true;
    }
  };
  // The primary library compiles on this thread: the workers take the
  // other hardware threads (the CLI's own stack size: deep programs).
  unsigned hw = llvm::hardware_concurrency().compute_thread_count();
  size_t workers = std::min<size_t>(variants.size(), hw > 1 ? hw - 1 : 1);
  for (size_t i = 0; i < workers; ++i)
    variantBuilds[i].worker = llvm::thread(std::optional<unsigned>(kVariantStackBytes), variantWorker);
  auto joinVariants = llvm::make_scope_exit([&] {
    for (VariantBuild &v : variantBuilds)
      if (v.worker.joinable())
        v.worker.join();
  });
  nlohmann::json checks;
  std::vector<cpu::ImplementationChoice> choices;
  std::optional<std::string> lib = compile(*module, checks, &choices, "");
  if (!lib)
    return 1;
  out.library = std::move(*lib);

  // Without weights, optional tensors are bound at load time: besides the
  // primary library (every optional tensor absent) the artifact carries one
  // variant per presence set (optionalVariants), and the runtime loads the
  // one the weights select (docs/runtime-abi.md, "Optional tensors").
  nlohmann::json runtime = import::runtimeJson(*p, tensors, checks);
  if (!variants.empty()) {
    nlohmann::json names = nlohmann::json::array();
    for (size_t k = 1; k <= variants.size(); ++k)
      names.push_back(fmt::format("runtime.v{}.json", k));
    runtime["variants"] = names;
  }
  if (!out.write("model.so", out.library) || !out.write("runtime.json", runtime.dump(2) + "\n") ||
      !out.write("plan.json", plan::printPlan(*doc)))
    return 1;
  for (size_t k = 1; k <= variants.size(); ++k) {
    VariantBuild &v = variantBuilds[k - 1];
    if (v.worker.joinable())
      v.worker.join();
    if (!v.ok)
      return 1;
    if (!out.write(fmt::format("model.v{}.so", k), v.library) ||
        !out.write(fmt::format("runtime.v{}.json", k), v.runtime))
      return 1;
  }
  if (int rc = o.writeManifest ? o.writeManifest(*imported, choices, out) : writeFilesManifest(out))
    return rc;
  if (!staging.commit(err)) {
    std::cerr << fmt::format("linnet build: error: {}\n", err);
    return 1;
  }
  return 0;
}

} // namespace linnet::tool

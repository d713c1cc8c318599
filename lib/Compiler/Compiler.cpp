//===- Compiler.cpp - One compilation, source to artifact -----------------===//
#include "linnet/Compiler/Compiler.h"

#include "linnet/Config.h"
#include "linnet/Dialect/Gf/Transforms/Passes.h"
#include "linnet/Plan/Binding.h"
#include "linnet/Plan/FrontEnd.h"
#include "linnet/Plan/PlanWriter.h"
#include "linnet/Planning/FromTaskIR.h"
#include "linnet/Planning/Products.h"
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Sema/Instantiate.h"
#include "linnet/Support/AtomicFile.h"
#include "linnet/Support/Digest.h"
#include "linnet/Support/Input.h"
#include "linnet/Support/DiagError.h"
#include "linnet/Support/MlirDiagnostics.h"
#include "linnet/Support/Timing.h"
#include "linnet/Syntax/Diagnostics.h"
#include "linnet/Syntax/SourceManager.h"
#include "linnet/Target/AllTargets.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/thread.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <ostream>
#include <set>

namespace linnet::compiler {

using planning::Diagnostics;
using support::Diag;

const target::Target &targetForKind(const std::string &kind) {
  target::registerAllTargets();
  if (const target::Target *t = target::lookupTarget(kind))
    return *t;
  // A target file of a kind no code generator serves still plans.
  static const target::PlanningOnlyTarget otherTarget("other", "provider-neutral-v1");
  return otherTarget;
}

PlanningInputs loadPlanningInputs(const std::string &target, const std::string &deployment,
                                  const std::string &implementationPolicy,
                                  const std::string &evidencePolicy, const std::string &simulationPolicy) {
  using namespace planning;
  std::string dir = defaultTargetsDir();
  auto load = [](const std::string &file, auto parse) {
    try {
      return parse(readJsonFile(file));
    } catch (const SchemaError &e) {
      throw SchemaError(e.path, file + ": " + e.what());
    }
  };
  auto orDefault = [&](const std::string &given, const std::string &name) {
    return given.empty() ? dir + "/policies/" + name : given;
  };
  PlanningInputs in;
  in.target = load(resolveTargetFile(target, dir), targetFromJson);
  in.deployment = load(deployment.empty() ? defaultDeploymentFile(in.target, dir) : deployment, deploymentFromJson);
  in.implementations = load(orDefault(implementationPolicy, "implementation-default.json"), implementationPolicyFromJson);
  in.evidence = load(orDefault(evidencePolicy, "evidence-default.json"), evidencePolicyFromJson);
  in.simulation = load(orDefault(simulationPolicy, "simulation-default.json"), simulationPolicyFromJson);
  return in;
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

namespace {

/// The files of an artifact being built, written into its staging
/// directory: each file's digest is taken from the bytes written, never
/// read back from disk.
struct ArtifactOutputs {
  struct File {
    std::string path, sha256;
    int64_t bytes = 0;
  };
  std::string dir;
  std::vector<File> files;
};

/// A library of an artifact's optional-tensor variant, built on a worker.
struct VariantBuild {
  llvm::thread worker;
  bool ok = false;
  std::string library, runtime; // model.vK.so's and runtime.vK.json's bytes
  std::vector<std::pair<std::string, std::string>> files; // the target's (kernels.vK.ptx, ...)
};
/// A function of the imported module: what MachineIR's symbols derive from.
struct FunctionSymbol {
  std::string name;
  bool isPrivate = false, isExternal = false;
  std::vector<std::string> callees; // the functions it calls
};

/// Deep programs recurse in the importer: the CLI's command stack size.
constexpr unsigned kVariantStackBytes = 256u << 20;

/// The source's text for the plan's provenance (already read once, with
/// the same limits, by the front end); empty if it cannot be read.
std::string readText(const std::string &path) {
  std::string text, why;
  if (!input::readFile(path, input::maxSourceBytes(), "LINNET_MAX_SOURCE_BYTES", text, why))
    text.clear();
  return text;
}

/// runtime.json's `distributed` member (docs/distributed.md): each relation
/// kernel's arguments and the commands of the plan one call of it runs, in
/// their order. The tasks are the ones `-gf-plan-distributed-tasks` planned
/// for kernel F.k<i>; a kernel the plan did not partition is an error.
std::optional<nlohmann::json> distributedJson(const target::GeneratedLibrary &lib, int64_t ranks,
                                              const planning::PortablePlan &plan, std::string &err) {
  std::set<std::string> tasks;
  for (const planning::Task &t : plan.tasks)
    tasks.insert(t.id);
  nlohmann::json kernels = nlohmann::json::array();
  for (const target::GeneratedLibrary::DistributedKernel &k : lib.distributedKernels) {
    // The command of task `task.<kernel>.<what>`, "" when the plan has none.
    auto command = [&](const std::string &what) {
      return tasks.count("task." + k.name + "." + what) ? "cmd." + k.name + "." + what : std::string();
    };
    nlohmann::json commands = nlohmann::json::object();
    for (const char *what : {"interior", "boundary"})
      if (std::string c = command(what); !c.empty())
        commands[what] = c;
    nlohmann::json halos = nlohmann::json::array();
    for (const auto &h : k.halos) {
      nlohmann::json steps = {{"field", h.field}, {"arg", h.arg}};
      for (auto [step, symbol] : {std::pair<std::string, std::string>{"pack", h.pack},
                                  {"exchange", ""}, {"unpack", h.unpack}}) {
        std::string c = command("halo-" + step + "." + h.field);
        if (c.empty()) {
          err = fmt::format("the plan has no halo {} task for field '{}' of kernel {}", step, h.field, k.name);
          return std::nullopt;
        }
        steps[step] = symbol.empty() ? nlohmann::json{{"command", c}}
                                     : nlohmann::json{{"command", c}, {"symbol", "_mlir_ciface_" + symbol}};
      }
      halos.push_back(std::move(steps));
    }
    if (!commands.contains("interior") || (!halos.empty() && !commands.contains("boundary"))) {
      err = fmt::format("the plan does not partition kernel {} (no interior/boundary tasks for it)", k.name);
      return std::nullopt;
    }
    kernels.push_back({{"name", k.name},
                       {"symbol", "_mlir_ciface_" + k.name},
                       {"roles", k.roles},
                       {"ranks", k.ranks},
                       {"elem_bytes", k.elemBytes},
                       {"commands", commands},
                       {"halo", halos}});
  }
  return nlohmann::json{{"ranks", ranks}, {"kernels", kernels}};
}

} // namespace

struct Compiler::Impl {
  Options o;
  support::DiagSink &sink;
  Impl(Options opts, support::DiagSink &s) : o(std::move(opts)), sink(s) {}

  int report(const Diagnostics &diags) {
    for (const planning::Diagnostic &d : diags)
      sink.report(planning::toDiag(d, o.file));
    return diags.empty() ? 0 : 1;
  }
  /// An error of the build about the model file, "FILE: message".
  void error(const std::string &code, const std::string &message) {
    sink.report(Diag::error(code, fmt::format("{}: {}", o.file, message)));
  }

  /// The flags the plans and the manifest record.
  std::vector<std::string> flags() const {
    std::vector<std::string> f = {"--target=" + o.target};
    for (const auto &[name, value] : o.defines)
      f.push_back("-D" + name + "=" + value);
    if (o.serial)
      f.push_back("--serial");
    if (o.profile)
      f.push_back("--profile");
    if (o.ranks > 0)
      f.push_back("--ranks=" + std::to_string(o.ranks));
    if (o.emulate)
      f.push_back("--emulate");
    if (o.hostKernels)
      f.push_back("--host-kernels");
    if (o.numerics != support::NumericsPolicy::AsWritten)
      f.push_back(std::string("--numerics=") + support::toString(o.numerics));
    if (o.matmulPrecision != support::MatmulPrecision::Highest)
      f.push_back(std::string("--matmul-precision=") + support::toString(o.matmulPrecision));
    if (o.blockProducts != support::BlockProducts::Exact)
      f.push_back(std::string("--block-products=") + support::toString(o.blockProducts));
    return f;
  }

  std::optional<nlohmann::json> planDocument();
  bool importPresence(ImportedModel &m, const std::set<std::string> &present, mlir::MLIRContext &context);
  /// The target's ImportOptions::foldChunks, set before the model is imported.
  unsigned foldChunks = 0;
  /// The target's ImportOptions::softmaxBlock.
  unsigned softmaxBlock = 0;
  bool runTaskPipeline(const target::Target &t, mlir::ModuleOp module);
  int writeManifest(const target::Target &t, const PlanningInputs &in, const planning::PortablePlan &portable,
                    const std::vector<FunctionSymbol> &functions, const target::GeneratedLibrary &lib,
                    ArtifactOutputs &out);
  bool write(ArtifactOutputs &out, const std::string &name, std::string_view bytes);
};

Compiler::Compiler(Options options, support::DiagSink &diags)
    : impl_(std::make_unique<Impl>(std::move(options), diags)) {}
Compiler::~Compiler() = default;

bool Compiler::Impl::write(ArtifactOutputs &out, const std::string &name, std::string_view bytes) {
  support::TimingStage stage("write the artifact");
  std::string err;
  if (!support::writeFileAtomic(out.dir + "/" + name, bytes, err)) {
    sink.report(Diag::error("io", fmt::format("cannot write '{}/{}': {}", out.dir, name, err)));
    return false;
  }
  out.files.push_back({name, support::sha256Hex(bytes), static_cast<int64_t>(bytes.size())});
  return true;
}

std::optional<nlohmann::json> Compiler::Impl::planDocument() {
  support::TimingStage stage("parse and check");
  plan::SourceRequest r;
  r.file = o.file;
  r.root = o.root;
  r.defines = std::map<std::string, std::string>(o.defines.begin(), o.defines.end());
  r.sema = o.sema;
  r.constants = o.constants;
  r.refuseRootShapeGenerics = true;
  std::optional<plan::CheckedSource> checked = plan::checkSource(r, sink);
  if (!checked)
    return std::nullopt;
  stage.next("plan");
  return plan::planChecked(*checked, r, sink);
}

std::optional<ImportedModel> Compiler::importModel(mlir::MLIRContext &context,
                                                   const std::set<std::string> *presentOverride) {
  Impl &I = *impl_;
  const Options &o = I.o;
  std::optional<nlohmann::json> doc = I.planDocument();
  if (!doc)
    return std::nullopt;
  std::vector<ir::Problem> problems;
  std::optional<plan::Plan> p = plan::readPlan(*doc, problems);
  if (!p) {
    for (const ir::Problem &pr : problems)
      I.error("internal", "plan: " + pr.str());
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
      I.sink.report(Diag::error("weights", err));
      return std::nullopt;
    }
    std::map<std::string, std::string> external;
    if (!o.binding.empty()) {
      // Read as every binding manifest is: a regular file within the JSON
      // limits, parsed strictly.
      std::string btext, bwhy, bpath;
      std::optional<nlohmann::json> bdoc;
      if (!input::readFile(o.binding, input::maxJsonBytes(), "LINNET_MAX_JSON_BYTES", btext, bwhy)) {
        I.sink.report(Diag::error("io", fmt::format("{}: cannot read binding manifest: {}", o.binding, bwhy)));
        return std::nullopt;
      }
      bdoc = input::parseJson(btext, bpath, bwhy);
      std::vector<ir::Problem> bp;
      if (!bdoc)
        bp.push_back({bpath, bwhy});
      std::optional<plan::Binding> b = !bdoc ? std::nullopt : plan::checkBinding(*bdoc, p->manifest, bp);
      if (!b) {
        Diag d = Diag::inFile("binding", o.binding, "not a valid binding manifest");
        for (const ir::Problem &pr : bp)
          d.withNote(pr.str());
        I.sink.report(std::move(d));
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
  if (!I.importPresence(m, present, context))
    return std::nullopt;
  return m;
}

bool Compiler::Impl::importPresence(ImportedModel &m, const std::set<std::string> &present,
                                    mlir::MLIRContext &context) {
  std::string err;
  std::vector<import::ModelTensor> tensors = import::expandManifest(m.plan, present, err);
  if (!err.empty()) {
    error("manifest", err);
    return false;
  }
  Diag importError;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      import::importPlan(m.plan, tensors, context, importError, {o.runtimeChecks, foldChunks, softmaxBlock, o.extents});
  if (!module) {
    // Located at the model's op where it has a place there.
    if (!importError.located())
      importError.message = fmt::format("{}: {}", o.file, importError.message);
    sink.report(std::move(importError));
    return false;
  }
  // The numerics policy applies to the model as imported, before any
  // fusion moves the places where its values are kept.
  if (o.numerics == support::NumericsPolicy::F32Compute) {
    mlir::PassManager pm(module->getContext());
    pm.addPass(gf::createGfWidenHalf());
    support::DiagnosticCollector diags(module->getContext());
    if (mlir::failed(pm.run(*module))) {
      support::reportError(diags.error("the numerics policy could not be applied", "numerics"), sink, "numerics",
                           o.file + ": ");
      return false;
    }
  }
  if (o.matmulPrecision != support::MatmulPrecision::Highest)
    (*module)->setAttr("linnet.matmul_precision",
                       mlir::StringAttr::get(module->getContext(), support::toString(o.matmulPrecision)));
  if (o.blockProducts != support::BlockProducts::Exact)
    (*module)->setAttr("linnet.block_products",
                       mlir::StringAttr::get(module->getContext(), support::toString(o.blockProducts)));
  m.tensors = std::move(tensors);
  m.module = std::move(module);
  return true;
}

bool Compiler::Impl::runTaskPipeline(const target::Target &t, mlir::ModuleOp module) {
  support::TimingStage stage("gf passes to Task IR");
  support::DiagnosticCollector diags(module.getContext());
  mlir::PassManager pm(module.getContext());
  support::enablePassTiming(pm);
  // A phase plan at fixed extents: the constants reach the layer functions
  // each entry calls (sparse constant propagation across calls), so their
  // loop bounds and slices fold to the sizes one call at these extents has.
  if (!o.extents.empty()) {
    pm.addPass(mlir::createSCCPPass());
    pm.addPass(mlir::createCanonicalizerPass());
  }
  t.buildTaskPipeline(pm, o.ranks);
  if (mlir::succeeded(pm.run(module)))
    return true;
  support::reportError(
      diags.error(fmt::format("the gf passes (Domain to Task IR, contract {}) failed", t.scheduleContract().str()),
                  "passes"),
      sink, "passes", o.file + ": ");
  return false;
}

std::optional<planning::PortablePlan> Compiler::portablePlan(Diagnostics &diags) {
  Impl &I = *impl_;
  PlanningInputs in;
  try {
    in = loadPlanningInputs(I.o.target, I.o.deployment, I.o.implementationPolicy, I.o.evidencePolicy,
                            I.o.simulationPolicy);
  } catch (const planning::SchemaError &e) {
    diags.push_back({"input.schema", e.path, e.what()});
    return std::nullopt;
  }
  const target::Target &t = targetForKind(in.target.kind);
  mlir::DialectRegistry registry;
  t.registerDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  I.foldChunks = t.foldChunks();
  I.softmaxBlock = t.softmaxBlock();
  std::optional<ImportedModel> im = importModel(context);
  if (!im || !I.runTaskPipeline(t, *im->module)) {
    diags.push_back({"input.import", "", "the model could not be imported (errors above)"});
    return std::nullopt;
  }
  return planning::buildPortablePlanFromTasks(*im->module, I.o.file, readText(I.o.file), diags);
}

/// The CPU artifact's manifest.json (and portable/concrete/machine.json
/// beside it): the portable plan of the build's Task IR bound for the
/// target; the code generator's choices become the contraction tasks'
/// ImplementationRefs; MachineIR's code section is the library (size and
/// digest) with the exported entry symbols; the manifest lists every file
/// with the digest of the bytes written, which the runtime checks.
int Compiler::Impl::writeManifest(const target::Target &t, const PlanningInputs &in,
                                  const planning::PortablePlan &portable,
                                  const std::vector<FunctionSymbol> &functions,
                                  const target::GeneratedLibrary &lib, ArtifactOutputs &out) {
  using namespace planning;
  support::TimingStage stage("plans and manifest");
  // A dtype the target lacks is said at the source of the first task that
  // reads or computes it (`x[i] as f32` of an f16 input), before the
  // binding gate refuses the plan for it.
  for (const std::string &dtype : portable.requirements.dtypes) {
    if (std::count(in.target.dtypes.begin(), in.target.dtypes.end(), dtype))
      continue;
    for (const Task &task : portable.tasks)
      if (std::count(task.resources.dtypes.begin(), task.resources.dtypes.end(), dtype) &&
          !task.provenance.location.empty()) {
        sink.report(Diag::atLocation("target", task.provenance.location,
                                     fmt::format("the {} target does not support {} tensors yet (its dtypes: "
                                                 "{}): this op reads or computes {} values",
                                                 in.target.id, dtype, fmt::join(in.target.dtypes, ", "), dtype)));
        return 1;
      }
  }
  Diagnostics diags;
  std::vector<std::string> fl = flags();
  std::optional<Products> prod = buildProducts({portable, in.target, in.deployment, in.implementations, in.evidence,
                                                in.simulation, LINNET_VERSION, LINNET_GIT_COMMIT, fl},
                                               diags);
  if (!prod)
    return report(diags);
  // Every task's implementation is what the library contains. A function's
  // linalg work is generated into that function (an entry's into its C
  // interface, docs/cpu-abi.md), except contractions the code generator
  // bound to a library routine: the contraction tasks of each function, in
  // program order, take its choices for the matmul-like ops in the same
  // order. A relation kernel is the function `F.k<i>` of the i-th launch
  // of F (-linnet-outline-relation-kernels), its task `task.F.k<i>.*`.
  std::map<std::string, const FunctionSymbol *> byName;
  for (const FunctionSymbol &f : functions)
    byName[f.name] = &f;
  auto fnSymbol = [&](const std::string &fn) {
    auto f = byName.find(fn);
    return f != byName.end() && !f->second->isPrivate ? "_mlir_ciface_" + fn : fn;
  };
  std::map<std::string, std::vector<const target::KernelChoice *>> byFn;
  for (const target::KernelChoice &c : lib.choices)
    if (c.role == "matmul" || c.role == "batch-matmul" || c.role == "matvec")
      byFn[c.function].push_back(&c);
  std::map<std::string, size_t> used;
  ConcretePlan &concrete = prod->concrete;
  std::map<std::string, ImplementationRef *> implOf;
  for (ImplementationRef &r : concrete.implementations)
    implOf[r.id] = &r;
  for (const Task &task : prod->portable.tasks) {
    auto ref = implOf.find("impl." + task.id.substr(5));
    if (ref == implOf.end() || task.provenance.lineage.empty())
      continue;
    ImplementationRef &r = *ref->second;
    std::string fn = task.provenance.lineage.front().substr(5);
    // A distributed library exports its kernels and halo functions through
    // their C interfaces, which the distributed runtime calls.
    std::string exported = lib.distributedKernels.empty() ? "" : "_mlir_ciface_";
    if (task.kernel) {
      size_t k = task.id.find(".k", 5 + fn.size());
      size_t end = task.id.find('.', k + 2);
      r.kind = "generated";
      r.symbol = exported + task.id.substr(5, end == std::string::npos ? std::string::npos : end - 5);
      continue;
    }
    // Halo pack/unpack are generated under the planner's symbol
    // (-linnet-cpu-generate-halo-kernels); the exchange is the collective
    // the gate bound.
    if (task.kind == "halo-pack" || task.kind == "halo-unpack") {
      r.symbol = exported + r.symbol;
      continue;
    }
    if (task.kind == "halo-exchange")
      continue;
    const target::KernelChoice *c = nullptr;
    if (task.facts.derivation.rfind("contraction", 0) == 0) {
      size_t &k = used[fn];
      auto it = byFn.find(fn);
      if (it != byFn.end() && k < it->second.size())
        c = it->second[k++];
    }
    if (c) {
      r.fewRowsAtMost = c->fewRowsAtMost;
      r.fewRowsPerPass = c->fewRowsPerPass;
      r.fewRowsRoutine = c->fewRowsRoutine;
    }
    if (c && c->kind == "library") {
      r.spec = t.kind().str() + "-linalg." + c->role;
      r.kind = "library";
      r.capability = "library-class.gemm";
      r.routine = c->routine;
      r.symbol = "";
      r.library = c->library;
      r.soname = c->soname;
      continue;
    }
    if (c)
      r.spec = t.kind().str() + "-linalg." + c->role;
    r.kind = "generated";
    r.capability = "generated.dense-row";
    r.routine = c ? c->routine : "";
    r.symbol = fnSymbol(fn);
    r.library = "";
    r.soname = "";
  }
  MachineIR machine = lowerToMachine(concrete, in.target);
  std::string libDigest = "sha256:" + sha256Hex(lib.bytes);
  // The code sections are the files the target says they are; the
  // library's functions are symbols of the one that is model.so.
  std::string hostSection = ".text";
  for (const target::GeneratedLibrary::Section &ls : lib.sections) {
    auto sec = std::find_if(machine.sections.begin(), machine.sections.end(),
                            [&](const Section &s) { return s.name == ls.name; });
    if (sec == machine.sections.end()) {
      machine.sections.push_back({ls.name, ls.kind, "pending-codegen", 0, ""});
      sec = machine.sections.end() - 1;
    }
    for (const ArtifactOutputs::File &f : out.files)
      if (f.path == ls.file) {
        sec->state = "present";
        sec->bytes = f.bytes;
        sec->digest = "sha256:" + f.sha256;
      }
    if (ls.file == "model.so")
      hostSection = ls.name;
  }
  // Generated kernels are inlined into their function, which is their
  // symbol (for an entry, its C interface: see below).
  std::set<std::string> have;
  std::vector<Symbol> unique;
  for (const Symbol &sy : machine.symbols)
    if (have.insert(sy.name).second)
      unique.push_back(sy);
  machine.symbols = std::move(unique);
  // The plan travels as concrete.json, not as data in the library.
  machine.symbols.erase(std::remove_if(machine.symbols.begin(), machine.symbols.end(),
                                       [](const Symbol &sy) { return sy.kind == "data"; }),
                        machine.symbols.end());
  // One entry point per entry of the model, the exported symbol the runtime
  // calls, with the commands of every task in the functions it reaches.
  machine.entryPoints.clear();
  std::map<std::string, std::string> taskFn;
  for (const Task &task : prod->portable.tasks)
    if (!task.provenance.lineage.empty())
      taskFn[task.id] = task.provenance.lineage.front().substr(5);
  for (const FunctionSymbol &f : functions) {
    if (f.isPrivate || f.isExternal)
      continue;
    std::set<std::string> reach = {f.name};
    std::vector<std::string> todo = {f.name};
    while (!todo.empty()) {
      std::string n = todo.back();
      todo.pop_back();
      if (auto it = byName.find(n); it != byName.end())
        for (const std::string &c : it->second->callees)
          if (reach.insert(c).second)
            todo.push_back(c);
    }
    EntryPoint e;
    e.name = "linnet_entry_" + f.name;
    for (const Command &cmd : concrete.commands)
      if (auto it = taskFn.find(cmd.portableTask); it != taskFn.end() && reach.count(it->second))
        e.commands.push_back(cmd.id);
    machine.entryPoints.push_back(std::move(e));
  }
  // A private function (a layer body called once per layer) is a local
  // symbol; an entry exports its interfaces, into which it is inlined.
  for (const FunctionSymbol &fn : functions) {
    if (fn.isExternal)
      continue;
    const std::string &name = fn.name;
    std::vector<std::string> syms = {name};
    if (!fn.isPrivate)
      syms = {"_mlir_ciface_" + name, "linnet_entry_" + name};
    for (const std::string &sym : syms)
      if (have.insert(sym).second)
        machine.symbols.push_back({sym, hostSection, "function", ""});
  }
  if (report(verifyMachine(machine, &concrete, &in.target)))
    return 1;
  ProgramManifest m = artifactManifest({prod->portable, concrete, machine, in.target, in.deployment,
                                        LINNET_VERSION, LINNET_GIT_COMMIT, fl});
  m.runtimeAbi = lib.runtimeAbi.empty() ? t.runtimeAbi().str() : lib.runtimeAbi;
  m.runtimeLibraries.insert(m.runtimeLibraries.end(), lib.runtimeLibraries.begin(), lib.runtimeLibraries.end());
  std::sort(m.runtimeLibraries.begin(), m.runtimeLibraries.end());
  m.runtimeLibraries.erase(std::unique(m.runtimeLibraries.begin(), m.runtimeLibraries.end()),
                           m.runtimeLibraries.end());
  m.libraryFile = "model.so";
  m.libraryDigest = libDigest;
  if (!write(out, "portable.json", canonicalDump(toJson(prod->portable))) ||
      !write(out, "concrete.json", canonicalDump(toJson(concrete))) ||
      !write(out, "machine.json", canonicalDump(toJson(machine))))
    return 1;
  for (const ArtifactOutputs::File &f : out.files)
    m.files.push_back({f.path, f.sha256, f.bytes});
  std::string err;
  if (!support::writeFileAtomic(out.dir + "/manifest.json", canonicalDump(toJson(m)), err)) {
    sink.report(Diag::error("io", fmt::format("cannot write '{}/manifest.json': {}", out.dir, err)));
    return 1;
  }
  return 0;
}

int Compiler::buildArtifact() {
  Impl &I = *impl_;
  const Options &o = I.o;
  support::DiagSink &sink = I.sink;
  if (o.output.empty() || o.output == "-") {
    sink.report(Diag::error("usage", "building a .ln model needs -o DIR (the artifact directory)"));
    return 2;
  }
  PlanningInputs in;
  try {
    in = loadPlanningInputs(o.target, o.deployment, o.implementationPolicy, o.evidencePolicy, o.simulationPolicy);
  } catch (const planning::SchemaError &e) {
    return I.report({{"input.schema", e.path, e.what()}});
  }
  const target::Target &t = targetForKind(in.target.kind);
  if (!t.generatesCode()) {
    sink.report(Diag::error("target", fmt::format("--target {}: the {} target has no code generator yet "
                                                  "(use --emit to plan for it)",
                                                  o.target, in.target.kind)));
    return 2;
  }
  {
    // What the target cannot build is refused before any work.
    target::CodegenRequest asked;
    asked.profile = o.profile;
    asked.distributed = o.ranks > 0;
    asked.emulate = o.emulate;
    asked.hostKernels = o.hostKernels;
    if (std::string why = t.unsupported(asked); !why.empty()) {
      sink.report(Diag::error("target", fmt::format("--target {}: {}", o.target, why)));
      return 2;
    }
  }
  mlir::DialectRegistry registry;
  t.registerDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  I.foldChunks = t.foldChunks();
  I.softmaxBlock = t.softmaxBlock();
  std::optional<ImportedModel> im = importModel(context);
  if (!im)
    return 1;
  mlir::ModuleOp module = *im->module;
  // --dump-ir: numbered stages of the primary library, outside the artifact.
  auto dump = [&](unsigned stage, const char *name) {
    if (o.dumpIR.empty())
      return true;
    if (llvm::Error e = target::dumpStage(o.dumpIR, stage, name, module)) {
      support::reportError(std::move(e), sink, "io");
      return false;
    }
    return true;
  };
  auto text = [](mlir::ModuleOp m) {
    std::string s;
    llvm::raw_string_ostream os(s);
    m->print(os);
    return s;
  };
  std::string importedText = o.emitMlir ? text(module) : "";
  if (!dump(0, "imported.mlir") || !I.runTaskPipeline(t, module) || !dump(1, "tasks.mlir"))
    return 1;
  // The plans read the Task IR the code is generated from.
  Diagnostics diags;
  std::optional<planning::PortablePlan> portable =
      planning::buildPortablePlanFromTasks(module, o.file, readText(o.file), diags, o.profile);
  if (!portable)
    return I.report(diags);
  // The functions as imported, for MachineIR (code generation consumes the module).
  std::vector<FunctionSymbol> functions;
  for (auto fn : module.getOps<mlir::func::FuncOp>()) {
    FunctionSymbol f{fn.getSymName().str(), fn.isPrivate(), fn.isExternal(), {}};
    fn.walk([&](mlir::func::CallOp call) { f.callees.push_back(call.getCallee().str()); });
    functions.push_back(std::move(f));
  }

  // Built beside the destination and moved into place whole (AtomicFile.h).
  std::string err;
  support::StagingDir staging(o.output, err);
  if (staging.path().empty()) {
    sink.report(Diag::error("io", err));
    return 1;
  }
  ArtifactOutputs out;
  out.dir = staging.path();
  if (o.emitMlir && !I.write(out, "model.mlir", importedText))
    return 1;

  target::CodegenRequest request;
  request.parallel = !o.serial;
  request.cpu = in.target.abi.cpu == "native" ? "" : in.target.abi.cpu;
  request.implementation = o.impl;
  request.matmulPrecision = support::toString(o.matmulPrecision);
  request.blockProducts = support::toString(o.blockProducts);
  request.profile = o.profile;
  request.distributed = o.ranks > 0;
  request.emulate = o.emulate;
  request.hostKernels = o.hostKernels;
  // A variant's library compiles the same way, without the dumps.
  target::CodegenRequest variantRequest = request;
  request.dumpIRDir = o.dumpIR;
  request.firstDumpStage = 2;
  request.keepBufferizedIR = o.emitMlir;

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
    variants = optionalVariants(im->plan, o.variants, why);
    if (!why.empty()) {
      I.error("usage", why);
      return 2;
    }
  }
  std::vector<VariantBuild> variantBuilds(variants.size());
  std::atomic<size_t> nextVariant{0};
  auto variantWorker = [&] {
    for (size_t k; (k = nextVariant.fetch_add(1)) < variants.size();) {
      VariantBuild &v = variantBuilds[k];
      std::string what = fmt::format(" (variant {}: with optional tensors {})", k + 1, fmt::join(variants[k], ", "));
      mlir::MLIRContext vcontext(registry, mlir::MLIRContext::Threading::DISABLED);
      ImportedModel vm;
      vm.plan = im->plan;
      if (!I.importPresence(vm, variants[k], vcontext) || !I.runTaskPipeline(t, *vm.module))
        continue;
      if (o.profile) {
        // The variant's ops tagged with their tasks, as the primary's.
        Diagnostics vdiags;
        if (!planning::buildPortablePlanFromTasks(*vm.module, o.file, "", vdiags, true))
          continue;
      }
      nlohmann::json vchecks = import::runtimeChecks(*vm.module);
      target::CodegenRequest vrequest = variantRequest;
      vrequest.fileSuffix = fmt::format(".v{}", k + 1);
      llvm::Expected<target::GeneratedLibrary> vlib = t.generateCode(*vm.module, vrequest);
      if (!vlib) {
        support::reportError(vlib.takeError(), sink, "codegen", o.file + what + ": ");
        continue;
      }
      nlohmann::json vrt = import::runtimeJson(vm.plan, vm.tensors, vchecks);
      vrt["abi"] = vlib->runtimeAbi.empty() ? t.runtimeAbi().str() : vlib->runtimeAbi;
      for (const auto &[name, json] : vlib->runtimeMembers)
        vrt[name] = nlohmann::json::parse(json);
      vrt["library"] = fmt::format("model.v{}.so", k + 1);
      if (!vlib->profiledTasks.empty())
        vrt["profile"] = {{"tasks", vlib->profiledTasks}};
      if (o.ranks > 0) {
        std::string why;
        std::optional<nlohmann::json> d = distributedJson(*vlib, o.ranks, *portable, why);
        if (!d) {
          sink.report(Diag::error("distributed", o.file + what + ": " + why));
          continue;
        }
        vrt["distributed"] = std::move(*d);
      }
      v.library = std::move(vlib->bytes);
      v.files = std::move(vlib->files);
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
  // The check table is read before code generation erases it.
  nlohmann::json checks = import::runtimeChecks(module);
  llvm::Expected<target::GeneratedLibrary> lib = t.generateCode(module, request);
  if (!lib) {
    support::reportError(lib.takeError(), sink, "codegen", o.file + ": ");
    return 1;
  }
  if (o.emitMlir && !I.write(out, "model.loops.mlir", lib->bufferizedIR))
    return 1;

  nlohmann::json runtime = import::runtimeJson(im->plan, im->tensors, checks);
  runtime["abi"] = lib->runtimeAbi.empty() ? t.runtimeAbi().str() : lib->runtimeAbi;
  if (!lib->profiledTasks.empty())
    runtime["profile"] = {{"tasks", lib->profiledTasks}};
  if (o.ranks > 0) {
    std::string why;
    std::optional<nlohmann::json> d = distributedJson(*lib, o.ranks, *portable, why);
    if (!d) {
      I.error("distributed", why);
      return 1;
    }
    runtime["distributed"] = std::move(*d);
  }
  if (!variants.empty()) {
    nlohmann::json names = nlohmann::json::array();
    for (size_t k = 1; k <= variants.size(); ++k)
      names.push_back(fmt::format("runtime.v{}.json", k));
    runtime["variants"] = names;
  }
  for (const auto &[name, json] : lib->runtimeMembers)
    runtime[name] = nlohmann::json::parse(json);
  if (!I.write(out, "model.so", lib->bytes) || !I.write(out, "runtime.json", runtime.dump(2) + "\n") ||
      !I.write(out, "plan.json", plan::printPlan(im->doc)))
    return 1;
  for (const auto &[name, bytes] : lib->files)
    if (!I.write(out, name, bytes))
      return 1;
  // Every worker may have built any variant: all are joined before any is read.
  joinVariants.release();
  for (VariantBuild &v : variantBuilds)
    if (v.worker.joinable())
      v.worker.join();
  for (size_t k = 1; k <= variants.size(); ++k) {
    VariantBuild &v = variantBuilds[k - 1];
    if (!v.ok)
      return 1;
    if (!I.write(out, fmt::format("model.v{}.so", k), v.library) ||
        !I.write(out, fmt::format("runtime.v{}.json", k), v.runtime))
      return 1;
    for (const auto &[name, bytes] : v.files)
      if (!I.write(out, name, bytes))
        return 1;
  }
  if (int rc = I.writeManifest(t, in, *portable, functions, *lib, out))
    return rc;
  if (!staging.commit(err)) {
    sink.report(Diag::error("io", err));
    return 1;
  }
  return 0;
}

} // namespace linnet::compiler

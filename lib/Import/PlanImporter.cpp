//===- PlanImporter.cpp - A linnet plan to MLIR on tensors ----------------===//
//
// The importer's driver: importPlan and the walk itself. Each root entry's
// Core IR is walked once, as an abstract interpreter that emits MLIR
// (ImporterImpl.h); a region's ops are imported in order, calls are inlined
// (or outlined, Entries.cpp) and work a loop body does not depend on is
// hoisted out of it. What each op becomes is in the files beside this one,
// one concern each. docs/importer.md describes the mapping.
//
//===----------------------------------------------------------------------===//
#include "ImporterImpl.h"

#include "linnet/Dialect/Gf/IR/Gf.h"
#include "linnet/Support/MlirDiagnostics.h"
#include "linnet/Support/Timing.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace linnet::import::detail {

std::optional<Location> Importer::sourceLoc(const std::string &loc) {
  size_t c2 = loc.rfind(':'), c1 = c2 == std::string::npos || c2 == 0 ? c2 : loc.rfind(':', c2 - 1);
  if (c1 == std::string::npos || c1 == 0)
    return std::nullopt;
  unsigned line = 0, col = 0;
  if (llvm::StringRef(loc).substr(c1 + 1, c2 - c1 - 1).getAsInteger(10, line) ||
      llvm::StringRef(loc).substr(c2 + 1).getAsInteger(10, col))
    return std::nullopt;
  return FileLineColLoc::get(&ctx_, loc.substr(0, c1), line, col);
}

FileLineColLoc Importer::sourceLoc() const { return dyn_cast<FileLineColLoc>(loc_); }

std::string Importer::sourcePrefix() const {
  if (auto l = sourceLoc())
    return fmt::format("{}:{}:{}: ", l.getFilename().str(), l.getLine(), l.getColumn());
  return "";
}

OwningOpRef<ModuleOp> Importer::run() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc_);
  b_.setInsertionPointToEnd(module->getBody());
  for (const plan::Function &f : plan_.functions)
    if (f.kind == "entry" && f.block && plan_.root.is_object() &&
        *f.block == plan_.root.value("name", ""))
      entry(f);
  if (!checks_.empty())
    (*module)->setAttr("linnet.checks", b_.getStringAttr(json(checks_).dump()));
  return module;
}

//===----------------------------------------------------------------------===//
// Regions and calls
//===----------------------------------------------------------------------===//

/// Binds a region's arguments. An unsigned integer (u8, ...) is signless
/// bits in MLIR: its dtype says how it converts and compares, so a value
/// given to a region as an argument of such a type is marked unsigned.
void Importer::bindArgs(const ir::Region &r, Frame &f, const std::vector<V> &args) {
  for (size_t i = 0; i < args.size(); ++i) {
    V v = args[i];
    if ((v.k == V::Scalar || v.k == V::Tensor) && !v.uns)
      v.uns = isUnsigned(r.args[i].type, f);
    f.env[r.args[i].id] = v;
  }
}

std::vector<V> Importer::region(const ir::Region &r, Frame &f, const std::vector<V> &args,
                                const ir::Op *until) {
  if (args.size() != r.args.size())
    fail(fmt::format("{}: a region takes {} arguments, {} given", where_, r.args.size(),
                     args.size()));
  bindArgs(r, f, args);
  for (const ir::Value &a : r.args)
    if (!a.name.empty())
      names_[a.id] = a.name;
  for (const ir::Op &op : r.ops) {
    if (&op == until)
      return {};
    if (op.kind == ir::kind::Yield || op.kind == ir::kind::Return) {
      std::vector<V> out;
      for (ir::ValueId id : op.operands)
        out.push_back(get(f, id));
      return out;
    }
    bindOrEvaluate(op, f);
  }
  return {};
}

void Importer::bindOrEvaluate(const ir::Op &op, Frame &f) {
  if (auto pre = preset_.find(&op); pre != preset_.end()) {
    V v = pre->second;
    if (v.k == V::Scalar || v.k == V::Tensor)
      v.uns = isUnsigned(op.results[0].type, f);
    f.env[op.results[0].id] = v;
    return;
  }
  evaluate(op, f);
}

/// Every value an op reads, its nested regions' included.
static void readsOf(const ir::Op &op, std::set<ir::ValueId> &ids) {
  ids.insert(op.operands.begin(), op.operands.end());
  for (const ir::Region &r : op.regions)
    for (const ir::Op &o : r.ops)
      readsOf(o, ids);
}

std::vector<bool> Importer::neededOps(const ir::Region &r, size_t k) {
  if (r.ops.empty() || r.ops.back().kind != ir::kind::Yield || k >= r.ops.back().operands.size())
    fail(fmt::format("{}: a region yields no value {}", where_, k));
  // The ops the k-th yielded value depends on, walking back from it.
  std::set<ir::ValueId> needed{r.ops.back().operands[k]};
  std::vector<bool> keep(r.ops.size(), false);
  for (size_t i = r.ops.size() - 1; i-- > 0;) {
    for (const ir::Value &res : r.ops[i].results)
      keep[i] = keep[i] || needed.count(res.id);
    if (keep[i])
      readsOf(r.ops[i], needed);
  }
  return keep;
}

void Importer::bindRegionArgs(const ir::Region &r, Frame &f, const std::vector<V> &args) {
  if (args.size() != r.args.size())
    fail(fmt::format("{}: a region takes {} arguments, {} given", where_, r.args.size(),
                     args.size()));
  bindArgs(r, f, args);
}

V Importer::regionPart(const ir::Region &r, Frame &f, const std::vector<V> &args, size_t k) {
  std::vector<bool> keep = neededOps(r, k);
  bindRegionArgs(r, f, args);
  for (size_t i = 0; i + 1 < r.ops.size(); ++i)
    if (keep[i])
      bindOrEvaluate(r.ops[i], f);
  return get(f, r.ops.back().operands[k]);
}

std::vector<V> Importer::evaluate(const ir::Op &op, Frame &f) {
  std::string saved = where_;
  where_ = fmt::format("{}: {} '{}'", f.fn, op.kind,
                       op.results.empty() ? std::string() : op.results[0].name);
  if (op.results.size() && op.results[0].name.empty())
    where_ = fmt::format("{}: {}", f.fn, op.kind);
  Location savedLoc = loc_;
  Location savedUserLoc = userLoc_;
  if (std::optional<Location> l = sourceLoc(op.loc)) {
    loc_ = *l; // left in place when an error unwinds: importPlan reports it
    if (!llvm::StringRef(op.loc).starts_with("std/"))
      userLoc_ = *l;
  }
  std::vector<V> rs = operation(op, f);
  loc_ = savedLoc;
  userLoc_ = savedUserLoc;
  where_ = saved;
  for (size_t i = 0; i < op.results.size() && i < rs.size(); ++i) {
    if (rs[i].k == V::Scalar || rs[i].k == V::Tensor)
      rs[i].uns = isUnsigned(op.results[i].type, f);
    f.env[op.results[i].id] = rs[i];
  }
  nameValues(op);
  return rs;
}

//===----------------------------------------------------------------------===//
// Loop-invariant work
//===----------------------------------------------------------------------===//

bool Importer::writesState(const std::string &callee) {
  if (auto it = writesState_.find(callee); it != writesState_.end())
    return it->second;
  writesState_[callee] = true; // recursion: assume the worst meanwhile
  auto fn = fns_.find(callee);
  bool w = fn == fns_.end() || writesState(fn->second->body);
  return writesState_[callee] = w;
}

bool Importer::writesState(const ir::Region &r) {
  for (const ir::Op &o : r.ops) {
    if (o.kind == ir::kind::StateWrite)
      return true;
    if (o.kind == ir::kind::Call && writesState(o.attrs["callee"].get<std::string>()))
      return true;
    for (const ir::Region &nested : o.regions)
      if (writesState(nested))
        return true;
  }
  return false;
}

void Importer::reads(const ir::Op &op, std::vector<ir::ValueId> &out) {
  out.insert(out.end(), op.operands.begin(), op.operands.end());
  for (const ir::Region &r : op.regions)
    for (const ir::Op &o : r.ops)
      reads(o, out);
}

std::vector<const ir::Op *> Importer::invariantWork(const ir::Op &loop) {
  std::set<ir::ValueId> inner; // defined in the loop, depending on an index
  std::vector<const ir::Op *> invariant;
  std::map<ir::ValueId, const ir::Op *> producer;
  std::function<void(const ir::Region &)> walk = [&](const ir::Region &r) {
    for (const ir::Value &a : r.args)
      inner.insert(a.id);
    for (const ir::Op &o : r.ops) {
      std::vector<ir::ValueId> in;
      reads(o, in);
      bool movable = o.results.size() == 1 && !preset_.count(&o) &&
                     o.kind != ir::kind::Yield && o.kind != ir::kind::Return &&
                     o.kind != ir::kind::StateWrite && o.kind != ir::kind::While &&
                     !(o.kind == ir::kind::Call &&
                       writesState(o.attrs["callee"].get<std::string>())) &&
                     !llvm::any_of(o.regions, [&](const ir::Region &x) { return writesState(x); }) &&
                     llvm::none_of(in, [&](ir::ValueId id) { return inner.count(id) != 0; });
      if (movable) {
        invariant.push_back(&o);
        producer[o.results[0].id] = &o;
        continue;
      }
      for (const ir::Value &v : o.results)
        inner.insert(v.id);
      bool loopBody = o.kind == ir::kind::Comprehension ||
                      (o.kind == ir::kind::Reduce && !o.attrs.value("filter", false));
      if (loopBody)
        for (const ir::Region &nested : o.regions)
          walk(nested);
    }
  };
  if (loop.kind == ir::kind::Reduce && loop.attrs.value("filter", false))
    return {};
  for (const ir::Region &r : loop.regions)
    walk(r);
  // What is worth moving, and the invariant ops it reads.
  std::set<const ir::Op *> keep;
  std::function<void(const ir::Op *)> need = [&](const ir::Op *o) {
    if (!keep.insert(o).second)
      return;
    std::vector<ir::ValueId> in;
    reads(*o, in);
    for (ir::ValueId id : in)
      if (auto p = producer.find(id); p != producer.end())
        need(p->second);
  };
  for (const ir::Op *o : invariant) {
    const json &t = o->results[0].type;
    bool heavy = !o->regions.empty() || o->kind == ir::kind::Call ||
                 (t.value("kind", "") == "tensor" && !namesTensor(*o));
    if (heavy)
      need(o);
  }
  std::vector<const ir::Op *> out;
  for (const ir::Op *o : invariant)
    if (keep.count(o))
      out.push_back(o);
  return out;
}

std::unique_ptr<Importer::Hoisted> Importer::hoistInvariantWork(const ir::Op &loop, Frame &f) {
  auto h = std::make_unique<Hoisted>(Hoisted{preset_, {}});
  for (const ir::Op *o : invariantWork(loop)) {
    std::vector<V> rs = evaluate(*o, f);
    if (rs.empty())
      continue;
    preset_[o] = rs[0];
    h->ops.push_back(o);
  }
  return h;
}

std::vector<V> Importer::planResults(std::vector<V> rs, const plan::Function &fn) {
  if (rs.size() == 1 && fn.results.size() > 1 && rs[0].k == V::Agg && rs[0].names.empty() &&
      rs[0].elems.size() == fn.results.size())
    return std::move(rs[0].elems);
  return rs;
}

V Importer::get(Frame &f, ir::ValueId id) {
  auto it = f.env.find(id);
  if (it == f.env.end())
    fail(fmt::format("{}: value %{} is not defined", where_, id));
  return it->second;
}

void Importer::bindSubstitution(const json &subst, Frame &caller, Frame &callee) {
  for (auto it = subst.begin(); it != subst.end(); ++it) {
    const json &v = it.value();
    if (v.is_string() || (v.is_object() && v.contains("var")))
      callee.dtypes[it.key()] = dtypeName(v, caller);
    else if (v.is_array()) {
      std::vector<DimV> pack;
      for (const json &d : v)
        pack.push_back(dim(d, caller));
      callee.packs[it.key()] = std::move(pack);
    }
    else if (!v.is_null())
      callee.dims[it.key()] = dim(v, caller);
  }
}

std::vector<V> Importer::call(const plan::Function &fn, Frame callee, const std::vector<V> &args) {
  callee.fn = fn.name;
  std::string saved = where_;
  std::vector<V> rs = region(fn.body, callee, args);
  where_ = saved;
  return rs;
}

} // namespace linnet::import::detail

namespace linnet::import {

void registerImportDialects(DialectRegistry &registry) {
  registry.insert<gf::GfDialect, arith::ArithDialect, bufferization::BufferizationDialect,
                  func::FuncDialect, LLVM::LLVMDialect, linalg::LinalgDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect, tensor::TensorDialect>();
}

OwningOpRef<ModuleOp> importPlan(const plan::Plan &p, const std::vector<ModelTensor> &tensors,
                                 MLIRContext &context, support::Diag &error,
                                 const ImportOptions &options) {
  linnet::support::TimingStage stage("import");
  DialectRegistry registry;
  registerImportDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  if (!p.root.is_object()) {
    error = support::Diag::error("import", "the plan has no root block (a --functions plan cannot be built)");
    return {};
  }
  detail::Importer imp(p, tensors, context);
  imp.checks = options.runtimeChecks;
  imp.foldChunks = options.foldChunks;
  imp.softmaxBlock = options.softmaxBlock;
  imp.extents = options.extents;
  try {
    OwningOpRef<ModuleOp> m = imp.run();
    for (const auto &[name, value] : options.extents)
      if (!imp.extentsUsed.count(name)) {
        error = support::Diag::error(
            "import", fmt::format("extent {}={}: no entry has a dim generic or an integer scalar input named '{}'",
                                  name, value, name));
        return {};
      }
    // Whatever the verifier finds is the importer's to fix, but the user
    // reads where in their model it happened, not an MLIR dump.
    support::DiagnosticCollector diags(&context, "internal");
    if (failed(verify(*m))) {
      const support::Diag *first = diags.firstError();
      error = first ? *first : support::Diag::error("internal", "the imported module does not verify");
      error.message += " (an importer bug: the model is valid, the IR built for it is not)";
      return {};
    }
    return m;
  } catch (const detail::ImportError &e) {
    // Located at the plan op being imported.
    error = support::Diag::error("import", e.what());
    if (auto l = imp.sourceLoc()) {
      error.file = l.getFilename().str();
      error.line = l.getLine();
      error.column = l.getColumn();
    }
    return {};
  }
}

} // namespace linnet::import

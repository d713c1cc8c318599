//===- PlanImporter.cpp - A linnet plan to MLIR on tensors ----------------===//
//
// Walks each root entry's Core IR once, as an abstract interpreter that
// emits MLIR: block instances, optionals, structs and arrays of sub blocks
// are resolved at import time (they have no runtime representation), while
// scalars and tensors become SSA values. Integers known at build time are
// tracked next to their SSA values, which is what unrolls `while l < Layers`
// over an array of sub blocks. docs/importer.md describes the mapping.
//
//===----------------------------------------------------------------------===//
#include "linnet/Import/PlanImporter.h"

#include "linnet/Dialect/Gf/IR/Gf.h"
#include "linnet/ir/reducers.hpp"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fmt/ranges.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "linnet/Support/MlirDiagnostics.h"
#include "linnet/Support/Timing.h"

using namespace mlir;
using json = nlohmann::json;

namespace linnet::import {
namespace {

/// An error in the model that this importer cannot compile; caught at the
/// API boundary (never thrown through MLIR callbacks).
struct ImportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string &msg) { throw ImportError(msg); }

/// A dim: known at build time, or an index SSA value (entry generics).
struct DimV {
  std::optional<int64_t> c;
  Value v;
};

/// An imported Core IR value.
struct V {
  enum Kind { None, Scalar, Tensor, Block, Blocks, Opt, Agg, Rel } k = None;
  Value v;                        // Scalar, Tensor
  std::optional<int64_t> c;       // Scalar: an integer known at build time
  std::string path;               // Block, Blocks: canonical path ("" = root)
  bool present = false;           // Opt
  std::vector<V> elems;           // Opt (one), Agg (fields / tuple elements)
  std::vector<std::string> names; // Agg field names
  Value rowPtr, colIdx;           // Rel (CSR, destination-major)
  DimV numDst;
  DimV numSrc;                    // Rel
  std::string relName;            // Rel: the input's name (gf.relation's relation_id)
  bool uns = false;               // Scalar, Tensor: an unsigned integer (u8, ...) in signless bits

  static V scalar(Value v, std::optional<int64_t> c = std::nullopt) {
    V r;
    r.k = Scalar;
    r.v = v;
    r.c = c;
    return r;
  }
  static V tensor(Value v) {
    V r;
    r.k = Tensor;
    r.v = v;
    return r;
  }
};

struct Frame {
  std::string fn; // function name, for errors
  std::map<std::string, DimV> dims;
  std::map<std::string, std::vector<DimV>> packs; // shape generics (`S: shape`), as dims
  std::map<std::string, std::string> dtypes;
  std::optional<std::string> self; // canonical path of the receiver
  std::unordered_map<ir::ValueId, V> env;
};

std::string joinPath(const std::string &a, const std::string &b) {
  return a.empty() ? b : a + "." + b;
}

bool isFloat(Type t) { return isa<FloatType>(t); }
bool isIntLike(Type t) { return isa<IntegerType, IndexType>(t); }

class Importer {
public:
  Importer(const plan::Plan &p, const std::vector<ModelTensor> &tensors, MLIRContext &ctx)
      : plan_(p), tensors_(tensors), ctx_(ctx), b_(&ctx), loc_(UnknownLoc::get(&ctx)) {
    for (const plan::Function &f : p.functions)
      fns_[f.name] = &f;
    for (const plan::Constant &c : p.constants)
      consts_[c.name] = &c;
    for (const ModelTensor &t : tensors)
      byPath_[t.path] = &t;
  }

  /// An op's `loc` ("file:line:col") as an MLIR FileLineColLoc.
  std::optional<Location> sourceLoc(const std::string &loc) {
    size_t c2 = loc.rfind(':'), c1 = c2 == std::string::npos || c2 == 0 ? c2 : loc.rfind(':', c2 - 1);
    if (c1 == std::string::npos || c1 == 0)
      return std::nullopt;
    unsigned line = 0, col = 0;
    if (llvm::StringRef(loc).substr(c1 + 1, c2 - c1 - 1).getAsInteger(10, line) ||
        llvm::StringRef(loc).substr(c2 + 1).getAsInteger(10, col))
      return std::nullopt;
    return FileLineColLoc::get(&ctx_, loc.substr(0, c1), line, col);
  }
  /// The source location of the op being imported ("file:line:col: "), or
  /// empty when it has none.
  std::string sourcePrefix() const {
    if (auto l = dyn_cast<FileLineColLoc>(loc_))
      return fmt::format("{}:{}:{}: ", l.getFilename().str(), l.getLine(), l.getColumn());
    return "";
  }

  bool checks = true;       // ImportOptions::runtimeChecks
  unsigned foldChunks = 0;  // ImportOptions::foldChunks

  OwningOpRef<ModuleOp> run() {
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

private:
  const plan::Plan &plan_;
  const std::vector<ModelTensor> &tensors_;
  MLIRContext &ctx_;
  OpBuilder b_;
  Location loc_;
  std::map<std::string, const plan::Function *> fns_;
  std::map<std::string, const plan::Constant *> consts_;
  std::map<std::string, const ModelTensor *> byPath_;
  // Run-time checks emitted so far (runtime.json `checks`), and the
  // function that reports a failed one.
  std::vector<json> checks_;
  bool statusGlobal_ = false;
  std::map<ir::ValueId, std::string> names_;
  // Per entry: the tensor value of every present model tensor, and the
  // current value of every state tensor (writes replace it).
  std::map<std::string, Value> tensorVal_;
  std::map<std::string, Value> stateVal_;
  // Per function: the memref of every present model tensor, and for each
  // state the value equal to its memref's contents (no write pending).
  std::map<std::string, Value> memrefVal_;
  std::map<std::string, Value> stateBase_;
  // Outlined methods of array elements (docs/importer.md "Arrays of sub
  // blocks"): the canonical paths of the elements `index` produced, and the
  // function built for each specialization key.
  std::set<std::string> elementPaths_;
  std::map<std::string, std::string> outlined_;
  // Per function: the states whose current value has been read (it may
  // still be used after a call that updates the state's memref in place).
  std::set<std::string> observed_;
  std::string where_; // "function F, op K (name)" for errors
  int nest_ = 0;      // > 0 inside a loop body or a linalg.generic body
  // Values given to specific ops instead of evaluating them: the block
  // arguments of a linalg.generic standing for its inputs' elements.
  std::map<const ir::Op *, V> preset_;
  // Whether a function may write state (writesState), by name.
  std::map<std::string, bool> writesState_;

  //===--------------------------------------------------------------===//
  // Types and dims
  //===--------------------------------------------------------------===//

  Type elemType(const std::string &name) {
    if (name == "f32") return b_.getF32Type();
    if (name == "f64") return b_.getF64Type();
    if (name == "f16") return b_.getF16Type();
    if (name == "bf16") return b_.getBF16Type();
    if (name == "i64" || name == "u64") return b_.getI64Type();
    if (name == "i32" || name == "u32") return b_.getI32Type();
    if (name == "i16" || name == "u16") return b_.getI16Type();
    if (name == "i8" || name == "u8") return b_.getI8Type();
    if (name == "bool") return b_.getI1Type();
    if (name == "index") return b_.getIndexType();
    fail(fmt::format("{}: dtype '{}' is not supported by the CPU backend yet", where_, name));
  }

  std::string dtypeName(const json &d, Frame &f) {
    if (d.is_string())
      return d.get<std::string>();
    if (d.is_object() && d.contains("var")) {
      auto it = f.dtypes.find(d["var"].get<std::string>());
      if (it == f.dtypes.end())
        fail(fmt::format("{}: dtype generic '{}' is not bound", where_, d.value("name", "?")));
      return it->second;
    }
    fail(fmt::format("{}: unexpected dtype {}", where_, d.dump()));
  }

  Value cIndex(int64_t v) { return b_.create<arith::ConstantIndexOp>(loc_, v); }

  //===--------------------------------------------------------------===//
  // Run-time checks (docs/runtime-abi.md, "Run-time checks")
  //===--------------------------------------------------------------===//

  /// Names for messages: a `let` name, or the member a read names.
  void nameValues(const ir::Op &op) {
    for (size_t i = 0; i < op.results.size(); ++i) {
      std::string n = op.results[i].name;
      if (n.empty() && i == 0 && op.attrs.is_object())
        for (const char *k : {"name", "member", "path"})
          if (op.attrs.contains(k) && op.attrs[k].is_string()) {
            n = op.attrs[k].get<std::string>();
            break;
          }
      if (!n.empty())
        names_[op.results[i].id] = n;
    }
  }
  std::string valueName(ir::ValueId id) const {
    auto it = names_.find(id);
    return it == names_.end() ? "a tensor" : it->second;
  }

  /// The location of the op being imported as "file:line:col", or "".
  std::string locText() const {
    std::string p = sourcePrefix();
    return p.size() >= 2 ? p.substr(0, p.size() - 2) : p;
  }

  /// @linnet_report(id, value, bound): the first failed check of a call wins
  /// the library's `linnet_status` (id, value, bound); the runtime reads it
  /// after the call and clears it. Atomic: kernels may run on threads.
  /// The status word the runtime reads after each call: `linnet_status`,
  /// int64_t[4] = {check id, value, bound, failure count}.
  MemRefType statusType() { return MemRefType::get({4}, b_.getI64Type()); }
  void ensureStatusGlobal() {
    if (statusGlobal_)
      return;
    statusGlobal_ = true;
    ModuleOp module = b_.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
    OpBuilder::InsertionGuard g(b_);
    b_.setInsertionPointToStart(module.getBody());
    Type i64 = b_.getI64Type();
    b_.create<memref::GlobalOp>(
        UnknownLoc::get(&ctx_), "linnet_status", b_.getStringAttr("public"), statusType(),
        DenseElementsAttr::get(RankedTensorType::get({4}, i64), b_.getI64IntegerAttr(0)),
        /*constant=*/false, /*alignment=*/nullptr);
  }

  /// Reports check `c` (a row of runtime.json's `checks`) when `failed`
  /// holds, with `value` and `bound` (any integer or index type). Inline,
  /// not a helper function: it may sit in any kernel body, and every
  /// function of the module is a task for the planner.
  void report(Value failed, json c, Value value, Value bound) {
    if (!checks)
      return;
    int64_t id = static_cast<int64_t>(checks_.size()) + 1;
    c["id"] = id;
    c["loc"] = locText();
    checks_.push_back(std::move(c));
    ensureStatusGlobal();
    auto ifo = b_.create<scf::IfOp>(loc_, failed, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b_);
    b_.setInsertionPointToStart(&ifo.getThenRegion().front());
    Type i64 = b_.getI64Type();
    auto asI64 = [&](Value v) -> Value {
      if (v.getType().isIndex())
        return b_.create<arith::IndexCastOp>(loc_, i64, v);
      if (v.getType().getIntOrFloatBitWidth() < 64)
        return b_.create<arith::ExtSIOp>(loc_, i64, v);
      return v;
    };
    // First failure wins: an atomic add on the count (region-free, which
    // buffer deallocation requires); the thread that finds it 0 records.
    Value m = b_.create<memref::GetGlobalOp>(loc_, statusType(), "linnet_status");
    Value prev = b_.create<memref::AtomicRMWOp>(loc_, arith::AtomicRMWKind::addi,
                                                b_.create<arith::ConstantIntOp>(loc_, 1, 64), m,
                                                ValueRange{cIndex(3)});
    Value won = b_.create<arith::CmpIOp>(loc_, arith::CmpIPredicate::eq, prev,
                                         b_.create<arith::ConstantIntOp>(loc_, 0, 64));
    auto first = b_.create<scf::IfOp>(loc_, won, /*withElseRegion=*/false);
    b_.setInsertionPointToStart(&first.getThenRegion().front());
    Value vals[3] = {b_.create<arith::ConstantIntOp>(loc_, id, 64), asI64(value), asI64(bound)};
    for (int k = 0; k < 3; ++k)
      b_.create<memref::StoreOp>(loc_, vals[k], m, ValueRange{cIndex(k)});
  }

  /// `i` (index) checked against `size` (index): out of range reports check
  /// `c` and reads at 0 instead, so that nothing outside the tensor is read.
  Value checkedIndex(Value i, Value size, json c) {
    if (auto ci = getConstantIntValue(i), cs = getConstantIntValue(size); ci && cs && *ci >= 0 && *ci < *cs)
      return i;
    Value ok = b_.create<arith::CmpIOp>(loc_, arith::CmpIPredicate::ult, i, size);
    Value bad = b_.create<arith::XOrIOp>(loc_, ok, b_.create<arith::ConstantIntOp>(loc_, 1, 1));
    report(bad, std::move(c), i, size);
    return b_.create<arith::SelectOp>(loc_, ok, i, cIndex(0));
  }

  Value dimValue(const DimV &d) { return d.c ? cIndex(*d.c) : d.v; }

  /// A dim that sizes an axis or a loop: negative with the build's
  /// generics, it is refused where it is written.
  DimV extent(const json &d, Frame &f) {
    DimV v = dim(d, f);
    if (v.c && *v.c < 0)
      fail(fmt::format("{}: the extent {} is {} with the build's generics (negative)", where_,
                       ir::dimStr(d), *v.c));
    return v;
  }

  DimV dim(const json &d, Frame &f) {
    if (d.is_number_integer())
      return {d.get<int64_t>(), {}};
    if (d.is_object() && d.contains("sym")) {
      auto it = f.dims.find(d["sym"].get<std::string>());
      if (it == f.dims.end())
        fail(fmt::format("{}: dim generic '{}' is not bound", where_, d.value("name", "?")));
      return it->second;
    }
    if (d.is_object() && d.contains("op")) {
      std::string op = d["op"];
      std::vector<DimV> xs;
      for (const json &a : d["args"])
        xs.push_back(dim(a, f));
      DimV acc = xs[0];
      for (size_t i = 1; i < xs.size(); ++i) {
        const DimV &y = xs[i];
        if ((op == "floordiv" || op == "mod") && y.c && *y.c == 0)
          fail(fmt::format("{}: dim {} divides by zero", where_, ir::dimStr(d)));
        if (acc.c && y.c) {
          int64_t a = *acc.c, bb = *y.c;
          if (op == "add") acc.c = a + bb;
          else if (op == "mul") acc.c = a * bb;
          else if (op == "floordiv") acc.c = a / bb - ((a % bb != 0) && ((a < 0) != (bb < 0)));
          else if (op == "mod") acc.c = a - bb * (a / bb - ((a % bb != 0) && ((a < 0) != (bb < 0))));
          else if (op == "min") acc.c = std::min(a, bb);
          else if (op == "max") acc.c = std::max(a, bb);
          else fail(fmt::format("{}: unknown dim operator '{}'", where_, op));
          continue;
        }
        Value a = dimValue(acc), bb = dimValue(y), r;
        if (op == "add") r = b_.create<arith::AddIOp>(loc_, a, bb);
        else if (op == "mul") r = b_.create<arith::MulIOp>(loc_, a, bb);
        // Floored, as every other evaluator of dims (a zero divisor is a
        // run-time error): the integer `/` and `%` of the language.
        else if (op == "floordiv") r = binary("div", a, bb, b_.getIndexType());
        else if (op == "mod") r = binary("mod", a, bb, b_.getIndexType());
        else if (op == "min") r = b_.create<arith::MinSIOp>(loc_, a, bb);
        else if (op == "max") r = b_.create<arith::MaxSIOp>(loc_, a, bb);
        else fail(fmt::format("{}: unknown dim operator '{}'", where_, op));
        acc = {std::nullopt, r};
      }
      return acc;
    }
    fail(fmt::format("{}: shape packs ({}) are not supported by the CPU backend yet", where_,
                     ir::dimStr(d)));
  }

  /// The MLIR type of a plan scalar or tensor type; `dynDims` receives the
  /// SSA values of the dynamic dims of a tensor.
  Type type(const json &t, Frame &f, SmallVectorImpl<Value> *dynDims = nullptr) {
    std::string kind = t.value("kind", "");
    if (kind == "scalar")
      return elemType(dtypeName(t["dtype"], f));
    if (kind == "index")
      return b_.getIndexType();
    if (kind == "tensor") {
      SmallVector<int64_t> shape;
      auto add = [&](const DimV &d) {
        shape.push_back(d.c ? *d.c : ShapedType::kDynamic);
        if (!d.c && dynDims)
          dynDims->push_back(d.v);
      };
      for (const json &u : t["shape"]) {
        // A shape generic (`Tensor[S...; T]`) stands for the dims it was
        // bound to at the call.
        if (u.is_object() && u.contains("pack")) {
          auto p = f.packs.find(u["pack"].get<std::string>());
          if (p == f.packs.end())
            fail(fmt::format("{}: shape generic '{}' is not bound", where_, u.value("name", "?")));
          for (const DimV &d : p->second)
            add(d);
          continue;
        }
        add(extent(u, f));
      }
      return RankedTensorType::get(shape, elemType(dtypeName(t["dtype"], f)));
    }
    fail(fmt::format("{}: a value of type {} has no runtime representation in the CPU backend",
                     where_, ir::typeStr(t)));
  }

  //===--------------------------------------------------------------===//
  // Scalars
  //===--------------------------------------------------------------===//

  Value constant(Type t, double v) {
    if (isFloat(t))
      return b_.create<arith::ConstantOp>(loc_, t, b_.getFloatAttr(t, v));
    if (isa<IndexType>(t))
      return cIndex(static_cast<int64_t>(v));
    return b_.create<arith::ConstantOp>(loc_, t, b_.getIntegerAttr(t, static_cast<int64_t>(v)));
  }

  Value infinity(Type t, bool negative) {
    auto ft = cast<FloatType>(t);
    return b_.create<arith::ConstantOp>(
        loc_, t, b_.getFloatAttr(t, APFloat::getInf(ft.getFloatSemantics(), negative)));
  }

  /// `v as uN` (§6.9): truncation toward zero, saturating at [0, 2^N - 1],
  /// NaN to 0.
  Value floatToUnsigned(Value v, IntegerType to) {
    Type f64 = b_.getF64Type();
    unsigned w = to.getWidth();
    if (w > 32)
      fail(fmt::format("{}: a cast to a {}-bit unsigned integer is not supported by the CPU backend yet",
                       where_, w));
    auto fconst = [&](double x) {
      return b_.create<arith::ConstantOp>(loc_, f64, b_.getFloatAttr(f64, x)).getResult();
    };
    Value x = v.getType().getIntOrFloatBitWidth() < 64 ? b_.create<arith::ExtFOp>(loc_, f64, v).getResult() : v;
    Value c = b_.create<arith::MinimumFOp>(loc_, b_.create<arith::MaximumFOp>(loc_, x, fconst(0.0)),
                                           fconst(std::ldexp(1.0, int(w)) - 1));
    Value r = b_.create<arith::FPToUIOp>(loc_, to, c);
    Value nan = b_.create<arith::CmpFOp>(loc_, arith::CmpFPredicate::UNO, x, x);
    return b_.create<arith::SelectOp>(loc_, nan,
                                      b_.create<arith::ConstantOp>(loc_, to, b_.getIntegerAttr(to, 0)), r);
  }

  /// Whether a plan type is an unsigned integer (u8, u16, u32, u64):
  /// signless in MLIR, so the ops whose meaning depends on the sign
  /// (casts, comparisons, division, min/max) take it from here.
  bool isUnsigned(const json &t, Frame &f) {
    if (!t.is_object() || !t.contains("dtype"))
      return false;
    const json &d = t["dtype"];
    std::string name;
    if (d.is_string())
      name = d.get<std::string>();
    else if (d.is_object() && d.contains("var")) {
      auto it = f.dtypes.find(d["var"].get<std::string>());
      if (it == f.dtypes.end())
        return false;
      name = it->second;
    }
    return name == "u8" || name == "u16" || name == "u32" || name == "u64";
  }

  /// `v as iN` (§6.9): truncation toward zero, saturating at the type's
  /// range, NaN to 0 (LLVM's fptosi alone is poison there); `as bool` is
  /// `v != 0`. The clamp is exact in f64 for N <= 32; for i64 the largest
  /// f64 below 2^63 is clamped to and 2^63 and above select the maximum.
  Value floatToInt(Value v, IntegerType to) {
    Type f64 = b_.getF64Type();
    auto fconst = [&](double x, Type t) {
      return b_.create<arith::ConstantOp>(loc_, t, b_.getFloatAttr(t, x)).getResult();
    };
    if (to.getWidth() == 1)
      return b_.create<arith::CmpFOp>(loc_, arith::CmpFPredicate::UNE, v, fconst(0.0, v.getType()));
    unsigned w = to.getWidth();
    Value x = v.getType().getIntOrFloatBitWidth() < 64 ? b_.create<arith::ExtFOp>(loc_, f64, v).getResult() : v;
    double lo = -std::ldexp(1.0, int(w) - 1);
    double top = std::ldexp(1.0, int(w) - 1); // the first value out of range above
    double hi = w <= 32 ? top - 1 : std::nextafter(top, 0.0);
    Value c = b_.create<arith::MinimumFOp>(loc_, b_.create<arith::MaximumFOp>(loc_, x, fconst(lo, f64)),
                                           fconst(hi, f64));
    Value r = b_.create<arith::FPToSIOp>(loc_, to, c);
    auto iconst = [&](const APInt &a) {
      return b_.create<arith::ConstantOp>(loc_, to, b_.getIntegerAttr(to, a)).getResult();
    };
    if (w > 32) {
      Value above = b_.create<arith::CmpFOp>(loc_, arith::CmpFPredicate::OGE, x, fconst(top, f64));
      r = b_.create<arith::SelectOp>(loc_, above, iconst(APInt::getSignedMaxValue(w)), r);
    }
    // minimumf/maximumf propagate NaN: select 0 for it.
    Value nan = b_.create<arith::CmpFOp>(loc_, arith::CmpFPredicate::UNO, x, x);
    return b_.create<arith::SelectOp>(loc_, nan, iconst(APInt(w, 0)), r);
  }

  Value convert(Value v, Type to) {
    Type from = v.getType();
    if (from == to)
      return v;
    if (isa<IndexType>(from) && isa<IntegerType>(to))
      return b_.create<arith::IndexCastOp>(loc_, to, v);
    if (isa<IntegerType>(from) && isa<IndexType>(to))
      return b_.create<arith::IndexCastOp>(loc_, to, from.isInteger(1) ? convert(v, b_.getI64Type()) : v);
    if (isa<IndexType>(from) && isFloat(to))
      return b_.create<arith::SIToFPOp>(loc_, to, convert(v, b_.getI64Type()));
    if (isa<IntegerType>(from) && isFloat(to))
      return from.isInteger(1) ? b_.create<arith::UIToFPOp>(loc_, to, v).getResult()
                               : b_.create<arith::SIToFPOp>(loc_, to, v).getResult();
    if (isFloat(from) && isa<IndexType>(to))
      return convert(floatToInt(v, b_.getI64Type()), to);
    if (isFloat(from) && isa<IntegerType>(to))
      return floatToInt(v, cast<IntegerType>(to));
    if (isFloat(from) && isFloat(to)) {
      // Two formats of one width (bf16 and f16) convert through f32, which
      // holds both exactly.
      if (from.getIntOrFloatBitWidth() == to.getIntOrFloatBitWidth())
        return b_.create<arith::TruncFOp>(loc_, to, b_.create<arith::ExtFOp>(loc_, b_.getF32Type(), v));
      return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
                 ? b_.create<arith::ExtFOp>(loc_, to, v).getResult()
                 : b_.create<arith::TruncFOp>(loc_, to, v).getResult();
    }
    if (isa<IntegerType>(from) && isa<IntegerType>(to)) {
      if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
        return from.isInteger(1) ? b_.create<arith::ExtUIOp>(loc_, to, v).getResult()
                                 : b_.create<arith::ExtSIOp>(loc_, to, v).getResult();
      return b_.create<arith::TruncIOp>(loc_, to, v);
    }
    if (isa<RankedTensorType>(from) && isa<RankedTensorType>(to))
      return b_.create<tensor::CastOp>(loc_, to, v);
    std::string a, c;
    llvm::raw_string_ostream(a) << from;
    llvm::raw_string_ostream(c) << to;
    fail(fmt::format("{}: cannot convert a value of type {} to {}", where_, a, c));
  }

  /// The common type of two scalar operands of a mixed index/int operation.
  Type common(Type a, Type b) {
    if (a == b) return a;
    if (isFloat(a)) return a;
    if (isFloat(b)) return b;
    if (isa<IndexType>(a)) return b;
    return a;
  }

  arith::FastMathFlagsAttr reassoc() {
    return arith::FastMathFlagsAttr::get(&ctx_, arith::FastMathFlags::reassoc |
                                                   arith::FastMathFlags::contract);
  }

  Value binary(const std::string &op, Value a, Value c, Type t, bool fast = false, bool uns = false) {
    a = convert(a, t);
    c = convert(c, t);
    if (isFloat(t)) {
      auto fm = fast ? reassoc() : arith::FastMathFlagsAttr::get(&ctx_, arith::FastMathFlags::contract);
      if (op == "add") return b_.create<arith::AddFOp>(loc_, a, c, fm);
      if (op == "sub") return b_.create<arith::SubFOp>(loc_, a, c, fm);
      if (op == "mul") return b_.create<arith::MulFOp>(loc_, a, c, fm);
      if (op == "div") return b_.create<arith::DivFOp>(loc_, a, c, fm);
      if (op == "mod") return b_.create<arith::RemFOp>(loc_, a, c);
      if (op == "max") return b_.create<arith::MaximumFOp>(loc_, a, c);
      if (op == "min") return b_.create<arith::MinimumFOp>(loc_, a, c);
      if (op == "pow") return b_.create<math::PowFOp>(loc_, a, c);
    } else {
      if (op == "add") return b_.create<arith::AddIOp>(loc_, a, c);
      if (op == "sub") return b_.create<arith::SubIOp>(loc_, a, c);
      if (op == "mul") return b_.create<arith::MulIOp>(loc_, a, c);
      // Integer `/` and `%` floor (docs/language/06-expressions.md), as
      // dims do: -7 / 2 == -4, -7 % 2 == 1. A zero divisor is a run-time
      // error (the division goes on with 1 so that it cannot trap).
      if (op == "div" || op == "mod")
        if (auto k = getConstantIntValue(c); !k || *k == 0) {
          Value zero = b_.create<arith::ConstantOp>(loc_, t, b_.getZeroAttr(t));
          Value isZero = b_.create<arith::CmpIOp>(loc_, arith::CmpIPredicate::eq, c, zero);
          report(isZero, {{"kind", "division"}}, c, zero);
          c = b_.create<arith::SelectOp>(
              loc_, isZero, b_.create<arith::ConstantOp>(loc_, t, b_.getIntegerAttr(t, 1)), c);
        }
      // Unsigned (u8, ...): plain unsigned division and remainder.
      if (uns && op == "div") return b_.create<arith::DivUIOp>(loc_, a, c);
      if (uns && op == "mod") return b_.create<arith::RemUIOp>(loc_, a, c);
      if (uns && op == "max") return b_.create<arith::MaxUIOp>(loc_, a, c);
      if (uns && op == "min") return b_.create<arith::MinUIOp>(loc_, a, c);
      if (op == "div") return b_.create<arith::FloorDivSIOp>(loc_, a, c);
      if (op == "mod") {
        Value r = b_.create<arith::RemSIOp>(loc_, a, c);
        Value zero = b_.create<arith::ConstantOp>(loc_, t, b_.getZeroAttr(t));
        Value nonzero = b_.create<arith::CmpIOp>(loc_, arith::CmpIPredicate::ne, r, zero);
        Value rneg = b_.create<arith::CmpIOp>(loc_, arith::CmpIPredicate::slt, r, zero);
        Value cneg = b_.create<arith::CmpIOp>(loc_, arith::CmpIPredicate::slt, c, zero);
        Value differ = b_.create<arith::XOrIOp>(loc_, rneg, cneg);
        Value fix = b_.create<arith::AndIOp>(loc_, nonzero, differ);
        return b_.create<arith::SelectOp>(loc_, fix, b_.create<arith::AddIOp>(loc_, r, c), r);
      }
      if (op == "max") return b_.create<arith::MaxSIOp>(loc_, a, c);
      if (op == "min") return b_.create<arith::MinSIOp>(loc_, a, c);
      if (op == "and") return b_.create<arith::AndIOp>(loc_, a, c);
      if (op == "or") return b_.create<arith::OrIOp>(loc_, a, c);
    }
    fail(fmt::format("{}: operator '{}' is not supported on this type yet", where_, op));
  }

  static std::optional<int64_t> fold(const std::string &op, int64_t a, int64_t c) {
    if (op == "add") return a + c;
    if (op == "sub") return a - c;
    if (op == "mul") return a * c;
    if ((op == "div" || op == "mod") && c) {
      int64_t q = a / c, m = a % c;
      if (m != 0 && ((m < 0) != (c < 0))) {
        --q;
        m += c;
      }
      return op == "div" ? q : m;
    }
    if (op == "div" || op == "mod") return std::nullopt;
    if (op == "and") return a && c;
    if (op == "or") return a || c;
    if (op == "max") return std::max(a, c);
    if (op == "min") return std::min(a, c);
    return std::nullopt;
  }

  // A rank-0 tensor is a scalar (§5.1: `f32` and `Tensor[; f32]` are one
  // type): a param, buffer or state of rank 0 is bound as a tensor<T> and
  // read as its element, and a scalar goes where a rank-0 tensor is wanted.
  V scalarOf(const V &v) {
    if (v.k == V::Tensor)
      if (auto tt = dyn_cast<RankedTensorType>(v.v.getType()); tt && tt.getRank() == 0) {
        V r = V::scalar(b_.create<tensor::ExtractOp>(loc_, v.v, ValueRange{}));
        r.uns = v.uns;
        return r;
      }
    if (v.k != V::Scalar)
      fail(fmt::format("{}: expected a scalar operand", where_));
    return v;
  }

  /// The body block of `gen`: one argument per input's element and the
  /// output's, the builder at its start (the caller holds the guard).
  Block *genericBody(linalg::GenericOp gen, ValueRange inputs, Type outElem) {
    SmallVector<Type> argTypes;
    SmallVector<Location> locs;
    for (Value in : inputs) {
      argTypes.push_back(cast<RankedTensorType>(in.getType()).getElementType());
      locs.push_back(loc_);
    }
    argTypes.push_back(outElem);
    locs.push_back(loc_);
    Block *blk = b_.createBlock(&gen.getRegion(), {}, argTypes, locs);
    b_.setInsertionPointToStart(blk);
    return blk;
  }

  /// `resT` computed element by element: `body` gets each operand's element
  /// (a tensor operand's at the position, a scalar operand as it is) and
  /// returns the result's. Tensor operands have `resT`'s shape.
  V elementwise(RankedTensorType resT, const std::vector<V> &xs,
                const std::function<Value(ArrayRef<Value>)> &body) {
    int64_t n = resT.getRank();
    SmallVector<Value> inputs, dyn;
    for (const V &x : xs)
      if (x.k == V::Tensor && cast<RankedTensorType>(x.v.getType()).getRank() == n)
        inputs.push_back(x.v);
    if (inputs.empty())
      fail(fmt::format("{}: an elementwise operation without a tensor operand", where_));
    for (int64_t i = 0; i < n; ++i)
      if (resT.isDynamicDim(i))
        dyn.push_back(b_.create<tensor::DimOp>(loc_, inputs[0], i));
    Value init = b_.create<tensor::EmptyOp>(loc_, resT.getShape(), resT.getElementType(), dyn);
    AffineMap id = AffineMap::getMultiDimIdentityMap(n, &ctx_);
    SmallVector<AffineMap> maps(inputs.size() + 1, id);
    SmallVector<utils::IteratorType> its(n, utils::IteratorType::parallel);
    auto gen = b_.create<linalg::GenericOp>(loc_, TypeRange{resT}, inputs, ValueRange{init}, maps, its);
    OpBuilder::InsertionGuard g(b_);
    Block *blk = genericBody(gen, inputs, resT.getElementType());
    SmallVector<Value> elems;
    size_t next = 0;
    for (const V &x : xs)
      elems.push_back(x.k == V::Tensor && cast<RankedTensorType>(x.v.getType()).getRank() == n
                          ? blk->getArgument(next++)
                          : scalarOf(x).v);
    Value y = body(elems);
    b_.create<linalg::YieldOp>(loc_, convert(y, resT.getElementType()));
    return V::tensor(gen.getResult(0));
  }

  Value tensorOf(const V &v) {
    if (v.k == V::Scalar)
      return b_.create<tensor::FromElementsOp>(loc_, RankedTensorType::get({}, v.v.getType()),
                                               ValueRange{v.v});
    if (v.k != V::Tensor)
      fail(fmt::format("{}: expected a tensor operand", where_));
    return v.v;
  }

  /// A member's or state's tensor as a value: its element when it has rank 0.
  V valueOf(Value t) {
    V v = V::tensor(t);
    return cast<RankedTensorType>(t.getType()).getRank() == 0 ? scalarOf(v) : v;
  }

  //===--------------------------------------------------------------===//
  // Entries
  //===--------------------------------------------------------------===//

  /// Whether a dim refers to one of `syms` (an entry generic: its value is
  /// known only at run time).
  static bool mentions(const json &d, const std::set<std::string> &syms) {
    if (d.is_object() && d.contains("sym"))
      return syms.count(d["sym"].get<std::string>()) > 0;
    if (d.is_object() && d.contains("args"))
      for (const json &a : d["args"])
        if (mentions(a, syms))
          return true;
    return false;
  }

  void entry(const plan::Function &fn) {
    Frame f;
    f.fn = fn.name;
    f.self = "";
    where_ = "entry " + fn.name;
    for (const json &g : plan_.root["generics"]) {
      std::string kind = g.value("kind", "");
      if (kind == "dim")
        f.dims[g["sym"]] = {g["value"].get<int64_t>(), {}};
      else if (kind == "dtype")
        f.dtypes[g["var"]] = g["value"].get<std::string>();
      else
        fail(fmt::format("root generic '{}': shape generics are not supported by the CPU "
                         "backend yet",
                         g.value("name", "?")));
    }
    std::string name = fn.name.substr(fn.name.rfind('.') + 1);

    // Argument types. Entry generics are dynamic here and bound below from
    // the first input axis that names them.
    std::set<std::string> entryGenerics;
    for (const json &g : fn.generics) {
      if (g.value("kind", "") != "dim")
        fail(fmt::format("entry {}: generic '{}': only dim generics are supported on entries",
                         fn.name, g.value("name", "?")));
      entryGenerics.insert(g["sym"].get<std::string>());
    }
    auto memrefOf = [&](const json &t) -> MemRefType {
      std::string kind = t.value("kind", "");
      if (kind == "scalar")
        return MemRefType::get({}, elemType(dtypeName(t["dtype"], f)));
      if (kind != "tensor")
        fail(fmt::format("entry {}: an input or result of type {} cannot cross the runtime ABI",
                         fn.name, ir::typeStr(t)));
      SmallVector<int64_t> shape;
      for (const json &u : t["shape"]) {
        if (mentions(u, entryGenerics))
          shape.push_back(ShapedType::kDynamic);
        else
          shape.push_back(*dim(u, f).c);
      }
      return MemRefType::get(shape, elemType(dtypeName(t["dtype"], f)));
    };
    SmallVector<Type> argTypes;
    struct InputSlot {
      int first;
      bool relation;
    };
    std::vector<InputSlot> slots;
    for (const ir::Value &a : fn.body.args) {
      if (a.type.value("kind", "") == "relation") {
        slots.push_back({(int)argTypes.size(), true});
        argTypes.push_back(MemRefType::get({ShapedType::kDynamic}, b_.getI64Type()));
        argTypes.push_back(MemRefType::get({ShapedType::kDynamic}, b_.getI64Type()));
      } else {
        slots.push_back({(int)argTypes.size(), false});
        argTypes.push_back(memrefOf(a.type));
      }
    }
    int firstTensor = argTypes.size();
    std::vector<const ModelTensor *> present;
    for (const ModelTensor &t : tensors_)
      if (t.present) {
        present.push_back(&t);
        SmallVector<int64_t> shape(t.shape.begin(), t.shape.end());
        argTypes.push_back(MemRefType::get(shape, elemType(t.dtype)));
      }
    int firstResult = argTypes.size();
    for (const json &r : fn.results)
      argTypes.push_back(memrefOf(r));

    auto func = b_.create<func::FuncOp>(loc_, name, b_.getFunctionType(argTypes, {}));
    func->setAttr("llvm.emit_c_interface", b_.getUnitAttr());
    // The model's tensors among the arguments (params, buffers, state): the
    // portable plan lists them as PARAMETER and STATE buffers, which the
    // capacity check counts.
    SmallVector<Attribute> declared;
    for (size_t i = 0; i < present.size(); ++i)
      declared.push_back(b_.getDictionaryAttr(
          {b_.getNamedAttr("arg", b_.getI64IntegerAttr(int64_t(firstTensor + i))),
           b_.getNamedAttr("kind", b_.getStringAttr(present[i]->kind)),
           b_.getNamedAttr("path", b_.getStringAttr(present[i]->path))}));
    if (!declared.empty())
      func->setAttr("linnet.tensors", b_.getArrayAttr(declared));
    Block *body = func.addEntryBlock();
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(body);

    // State is writable: an in-place update (tensor.insert_slice of a
    // KV-cache append) then writes the state's buffer directly.
    auto toTensor = [&](Value m, bool writable = false) -> Value {
      auto mt = cast<MemRefType>(m.getType());
      return b_.create<bufferization::ToTensorOp>(
          loc_, RankedTensorType::get(mt.getShape(), mt.getElementType()), m, /*restrict=*/true,
          writable);
    };
    tensorVal_.clear();
    stateVal_.clear();
    memrefVal_.clear();
    for (size_t i = 0; i < present.size(); ++i) {
      Value t = toTensor(body->getArgument(firstTensor + i), present[i]->kind == "state");
      tensorVal_[present[i]->path] = t;
      memrefVal_[present[i]->path] = body->getArgument(firstTensor + i);
      if (present[i]->kind == "state")
        stateVal_[present[i]->path] = t;
    }
    stateBase_ = stateVal_;
    observed_.clear();

    // Inputs, and the entry generics bound from their shapes.
    std::vector<V> args;
    for (size_t i = 0; i < fn.body.args.size(); ++i) {
      const ir::Value &a = fn.body.args[i];
      if (slots[i].relation) {
        V r;
        r.k = V::Rel;
        r.rowPtr = toTensor(body->getArgument(slots[i].first));
        r.colIdx = toTensor(body->getArgument(slots[i].first + 1));
        const json &dims = a.type["dims"];
        Value rows = b_.create<tensor::DimOp>(loc_, r.rowPtr, 0);
        Value m = b_.create<arith::SubIOp>(loc_, rows, cIndex(1));
        Value e = b_.create<tensor::DimOp>(loc_, r.colIdx, 0);
        auto bindG = [&](const json &u, Value v) {
          if (u.is_object() && u.contains("sym") && entryGenerics.count(u["sym"].get<std::string>()) &&
              !f.dims.count(u["sym"].get<std::string>()))
            f.dims[u["sym"].get<std::string>()] = {std::nullopt, v};
        };
        bindG(dims[1], m);
        bindG(dims[2], e);
        args.push_back(r);
        continue;
      }
      Value m = body->getArgument(slots[i].first);
      if (a.type.value("kind", "") == "scalar") {
        args.push_back(V::scalar(b_.create<memref::LoadOp>(loc_, m, ValueRange{})));
        continue;
      }
      Value t = toTensor(m);
      const json &shape = a.type["shape"];
      for (size_t k = 0; k < shape.size(); ++k) {
        const json &u = shape[k];
        if (u.is_object() && u.contains("sym") && entryGenerics.count(u["sym"].get<std::string>()) &&
            !f.dims.count(u["sym"].get<std::string>()))
          f.dims[u["sym"].get<std::string>()] = {std::nullopt,
                                                 b_.create<tensor::DimOp>(loc_, t, k).getResult()};
      }
      args.push_back(V::tensor(t));
    }
    for (const std::string &g : entryGenerics)
      if (!f.dims.count(g))
        fail(fmt::format("entry {}: generic '{}' appears in no input shape, so it cannot be "
                         "bound at run time",
                         fn.name, g.substr(g.rfind(':') + 1)));
    // Relations whose num_src/num_dst generics were bound only now.
    for (size_t i = 0; i < fn.body.args.size(); ++i)
      if (slots[i].relation) {
        args[i].numDst = dim(fn.body.args[i].type["dims"][1], f);
        args[i].numSrc = dim(fn.body.args[i].type["dims"][0], f);
        args[i].relName = fn.body.args[i].name;
      }

    std::vector<V> results = planResults(region(fn.body, f, args), fn);
    if (results.size() != fn.results.size())
      fail(fmt::format("entry {}: returns {} values, its signature says {}", fn.name,
                       results.size(), fn.results.size()));
    // State writes, in the order the state tensors are listed, then results.
    for (size_t i = 0; i < present.size(); ++i) {
      const std::string &p = present[i]->path;
      if (present[i]->kind != "state" || stateVal_[p] == stateBase_[p])
        continue;
      Value m = body->getArgument(firstTensor + i);
      Value v = convert(stateVal_[p], RankedTensorType::get(cast<MemRefType>(m.getType()).getShape(),
                                                            cast<MemRefType>(m.getType()).getElementType()));
      auto mat = b_.create<bufferization::MaterializeInDestinationOp>(loc_, v, m);
      mat.setWritable(true);
      mat.setRestrict(true);
    }
    for (size_t i = 0; i < results.size(); ++i) {
      Value m = body->getArgument(firstResult + i);
      auto mt = cast<MemRefType>(m.getType());
      // A scalar result (a user reducer's finalize) as the rank-0 tensor
      // the ABI's result buffer holds.
      Value v = results[i].k == V::Scalar && mt.getRank() == 0
                    ? b_.create<tensor::FromElementsOp>(loc_, RankedTensorType::get({}, mt.getElementType()),
                                                        ValueRange{convert(results[i].v, mt.getElementType())})
                          .getResult()
                    : tensorOf(results[i]);
      v = convert(v, RankedTensorType::get(mt.getShape(), mt.getElementType()));
      auto mat = b_.create<bufferization::MaterializeInDestinationOp>(loc_, v, m);
      mat.setWritable(true);
      mat.setRestrict(true);
    }
    b_.create<func::ReturnOp>(loc_);
  }

  //===--------------------------------------------------------------===//
  // Regions and calls
  //===--------------------------------------------------------------===//

  /// Evaluates a region with its arguments bound; returns what its
  /// `yield`/`return` yields.
  /// Evaluates `r` with `args` and returns what it yields; with `until`,
  /// stops before that op (its operands evaluated) and returns nothing.
  std::vector<V> region(const ir::Region &r, Frame &f, const std::vector<V> &args,
                        const ir::Op *until = nullptr) {
    if (args.size() != r.args.size())
      fail(fmt::format("{}: a region takes {} arguments, {} given", where_, r.args.size(),
                       args.size()));
    for (size_t i = 0; i < args.size(); ++i)
      f.env[r.args[i].id] = args[i];
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
      if (auto pre = preset_.find(&op); pre != preset_.end()) {
        V v = pre->second;
        if (v.k == V::Scalar || v.k == V::Tensor)
          v.uns = isUnsigned(op.results[0].type, f);
        f.env[op.results[0].id] = v;
        continue;
      }
      evaluate(op, f);
    }
    return {};
  }

  /// Imports one op of a region at the builder's point, binding its results
  /// in the frame; returns them.
  std::vector<V> evaluate(const ir::Op &op, Frame &f) {
    std::string saved = where_;
    where_ = fmt::format("{}: {} '{}'", f.fn, op.kind,
                         op.results.empty() ? std::string() : op.results[0].name);
    if (op.results.size() && op.results[0].name.empty())
      where_ = fmt::format("{}: {}", f.fn, op.kind);
    Location savedLoc = loc_;
    if (std::optional<Location> l = sourceLoc(op.loc))
      loc_ = *l; // left in place when an error unwinds: importPlan reports it
    std::vector<V> rs = operation(op, f);
    loc_ = savedLoc;
    where_ = saved;
    for (size_t i = 0; i < op.results.size() && i < rs.size(); ++i) {
      if (rs[i].k == V::Scalar || rs[i].k == V::Tensor)
        rs[i].uns = isUnsigned(op.results[i].type, f);
      f.env[op.results[i].id] = rs[i];
    }
    nameValues(op);
    return rs;
  }

  //===--------------------------------------------------------------===//
  // Loop-invariant work
  //===--------------------------------------------------------------===//

  /// Whether calling `callee` may write state (a `state.write` in its body
  /// or in anything it calls): such a call is never moved.
  bool writesState(const std::string &callee) {
    if (auto it = writesState_.find(callee); it != writesState_.end())
      return it->second;
    writesState_[callee] = true; // recursion: assume the worst meanwhile
    auto fn = fns_.find(callee);
    bool w = fn == fns_.end() || writesState(fn->second->body);
    return writesState_[callee] = w;
  }
  bool writesState(const ir::Region &r) {
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

  /// Every value `op` reads: its operands and those of the ops nested in it
  /// (including values its regions define, which are not outside it).
  static void reads(const ir::Op &op, std::vector<ir::ValueId> &out) {
    out.insert(out.end(), op.operands.begin(), op.operands.end());
    for (const ir::Region &r : op.regions)
      for (const ir::Op &o : r.ops)
        reads(o, out);
  }

  /// The ops of a loop's body (a comprehension's, or an unfiltered
  /// reduction's, and the loops nested in it) that do not depend on any of
  /// its indices, such as `linear1.forward(h)` in `[t: N, k: F]
  /// relu(linear1.forward(h)[t, k])`: work that would otherwise run once
  /// per element. Returns the ones worth moving (a call, a tensor, an op
  /// with regions) with the invariant ops they read, in order. Ops inside
  /// a branch stay where they are (they may not run at all), as does a call
  /// that may write state.
  std::vector<const ir::Op *> invariantWork(const ir::Op &loop) {
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

  /// Evaluates a loop's invariant work (invariantWork) once, before the
  /// loop, and presets the body's ops to its values until destroyed.
  struct Hoisted {
    std::map<const ir::Op *, V> &preset;
    std::vector<const ir::Op *> ops;
    ~Hoisted() {
      for (const ir::Op *o : ops)
        preset.erase(o);
    }
  };
  std::unique_ptr<Hoisted> hoistInvariantWork(const ir::Op &loop, Frame &f) {
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

  /// A function's returned values as its plan lists them: a returned tuple
  /// is one Core IR value, the plan gives each of its elements a result.
  static std::vector<V> planResults(std::vector<V> rs, const plan::Function &fn) {
    if (rs.size() == 1 && fn.results.size() > 1 && rs[0].k == V::Agg && rs[0].names.empty() &&
        rs[0].elems.size() == fn.results.size())
      return std::move(rs[0].elems);
    return rs;
  }

  V get(Frame &f, ir::ValueId id) {
    auto it = f.env.find(id);
    if (it == f.env.end())
      fail(fmt::format("{}: value %{} is not defined", where_, id));
    return it->second;
  }

  /// Binds a callee's generics from a call's `substitution` (values in the
  /// caller's terms).
  void bindSubstitution(const json &subst, Frame &caller, Frame &callee) {
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

  std::vector<V> call(const plan::Function &fn, Frame callee, const std::vector<V> &args) {
    callee.fn = fn.name;
    std::string saved = where_;
    std::vector<V> rs = region(fn.body, callee, args);
    where_ = saved;
    return rs;
  }

  //===--------------------------------------------------------------===//
  // Outlined methods of array elements
  //===--------------------------------------------------------------===//

  static std::string typeText(Type t) {
    std::string s;
    llvm::raw_string_ostream(s) << t;
    return s;
  }

  /// A method called on an element of an array of sub blocks (`layers[l]
  /// .forward(h, start)`) becomes a private function, built once per
  /// specialization and called once per element with that element's tensors
  /// as memref arguments, so the layer body is compiled once rather than
  /// once per layer. The specialization key holds everything the body's
  /// import depends on besides those tensors: the callee, its generics
  /// (constants, or dynamic and passed as index arguments), the element's
  /// tensors relative to its path (kind, dtype, shape, presence), and the
  /// arguments' types and build-time integers (a known integer is bound
  /// inside, not passed, so `start = 0` still folds in prefill's layers).
  /// Tensors cross as memrefs in destination-passing style: inputs read
  /// through `to_tensor restrict`, results written into buffers the caller
  /// allocates, state read and written in place through the element's state
  /// memrefs (the KV-cache append stays in place). Returns nullopt, having
  /// emitted nothing the caller keeps, when the call cannot be outlined
  /// (block, optional, aggregate or relation arguments or results; the
  /// caller has read the element's state) or the body fails to import
  /// outlined; the caller then inlines it.
  std::optional<std::vector<V>> callOutlined(const plan::Function &fn, const Frame &callee,
                                             const std::vector<V> &args) {
    const std::string self = *callee.self;
    // Calls are emitted at a function's top level only (not inside a loop,
    // an scf.if or a linalg body). A shape generic's dims are not part of
    // the specialization key: such a call is inlined.
    if (!isa<func::FuncOp>(b_.getBlock()->getParentOp()) || !callee.packs.empty())
      return std::nullopt;
    for (const V &a : args)
      if (a.k != V::Scalar && a.k != V::Tensor)
        return std::nullopt;
    if (!fn.results.is_array())
      return std::nullopt;
    for (const json &r : fn.results)
      if (r.value("kind", "") != "tensor" && r.value("kind", "") != "scalar")
        return std::nullopt;
    std::vector<const ModelTensor *> own;
    std::string key = fn.name;
    for (const ModelTensor &t : tensors_) {
      if (t.path.rfind(self + ".", 0) != 0)
        continue;
      key += fmt::format("|{} {} {} [{}] {}", t.path.substr(self.size()), t.kind, t.dtype,
                         fmt::join(t.shape, ","), t.present);
      if (t.present)
        own.push_back(&t);
    }
    // The body updates the element's state in its memref, in place: the
    // caller's value of that state must be the memref's contents (no write
    // pending) and unread so far (a read value may be used after the call,
    // and must not see the update). Otherwise the call is inlined.
    for (const ModelTensor *t : own)
      if (t->kind == "state" &&
          (observed_.count(t->path) || stateVal_[t->path] != stateBase_[t->path]))
        return std::nullopt;
    std::vector<std::string> dynDims;
    for (const auto &[sym, d] : callee.dims) {
      key += fmt::format("|{}={}", sym, d.c ? std::to_string(*d.c) : "?");
      if (!d.c)
        dynDims.push_back(sym);
    }
    for (const auto &[var, t] : callee.dtypes)
      key += fmt::format("|{}:{}", var, t);
    for (const V &a : args)
      key += fmt::format("|{}{}", typeText(a.v.getType()),
                         a.k == V::Scalar && a.c ? "=" + std::to_string(*a.c) : "");

    // The result buffers' types, in the caller's terms (its dynamic dims).
    Frame inCaller = callee;
    std::vector<MemRefType> resultTypes;
    std::vector<SmallVector<Value>> resultDyn;
    try {
      for (const json &r : fn.results) {
        SmallVector<Value> dyn;
        Type t = type(r, inCaller, &dyn);
        if (auto tt = dyn_cast<RankedTensorType>(t))
          resultTypes.push_back(MemRefType::get(tt.getShape(), tt.getElementType()));
        else
          resultTypes.push_back(MemRefType::get({}, t));
        resultDyn.push_back(dyn);
      }
    } catch (const ImportError &) {
      return std::nullopt;
    }

    auto it = outlined_.find(key);
    if (it == outlined_.end()) {
      std::optional<std::string> name = buildOutlined(fn, callee, args, own, dynDims, resultTypes);
      if (!name)
        return std::nullopt;
      it = outlined_.emplace(key, *name).first;
    }

    SmallVector<Value> operands;
    for (const V &a : args) {
      if (a.k == V::Scalar) {
        if (!a.c)
          operands.push_back(a.v);
        continue;
      }
      auto tt = cast<RankedTensorType>(a.v.getType());
      operands.push_back(b_.create<bufferization::ToMemrefOp>(
          loc_, MemRefType::get(tt.getShape(), tt.getElementType()), a.v, /*read_only=*/true));
    }
    for (const std::string &sym : dynDims)
      operands.push_back(callee.dims.at(sym).v);
    for (const ModelTensor *t : own)
      operands.push_back(memrefVal_.at(t->path));
    SmallVector<Value> outs;
    for (size_t i = 0; i < resultTypes.size(); ++i)
      outs.push_back(b_.create<memref::AllocOp>(loc_, resultTypes[i], resultDyn[i],
                                                b_.getI64IntegerAttr(64)));
    operands.append(outs.begin(), outs.end());
    b_.create<func::CallOp>(loc_, it->second, TypeRange{}, operands);

    // The element's state is now its memrefs' contents: a later read sees
    // the update (a fresh, so far unread, value).
    for (const ModelTensor *t : own)
      if (t->kind == "state") {
        Value m = memrefVal_.at(t->path);
        auto mt = cast<MemRefType>(m.getType());
        Value v = b_.create<bufferization::ToTensorOp>(
            loc_, RankedTensorType::get(mt.getShape(), mt.getElementType()), m,
            /*restrict=*/true, /*writable=*/true);
        tensorVal_[t->path] = stateVal_[t->path] = stateBase_[t->path] = v;
      }
    std::vector<V> results;
    for (size_t i = 0; i < outs.size(); ++i) {
      if (resultTypes[i].getRank() == 0 && fn.results[i].value("kind", "") == "scalar") {
        results.push_back(V::scalar(b_.create<memref::LoadOp>(loc_, outs[i], ValueRange{})));
        continue;
      }
      results.push_back(V::tensor(b_.create<bufferization::ToTensorOp>(
          loc_, RankedTensorType::get(resultTypes[i].getShape(), resultTypes[i].getElementType()),
          outs[i], /*restrict=*/true, /*writable=*/true)));
    }
    return results;
  }

  /// Builds the function of callOutlined's specialization; its arguments:
  /// the call's runtime scalars and tensors, the dynamic generics, the
  /// element's present tensors (manifest order), the result buffers.
  std::optional<std::string> buildOutlined(const plan::Function &fn, const Frame &callee,
                                           const std::vector<V> &args,
                                           const std::vector<const ModelTensor *> &own,
                                           const std::vector<std::string> &dynDims,
                                           const std::vector<MemRefType> &resultTypes) {
    SmallVector<Type> argTypes;
    for (const V &a : args) {
      if (a.k == V::Scalar) {
        if (!a.c)
          argTypes.push_back(a.v.getType());
        continue;
      }
      auto tt = cast<RankedTensorType>(a.v.getType());
      argTypes.push_back(MemRefType::get(tt.getShape(), tt.getElementType()));
    }
    for (size_t i = 0; i < dynDims.size(); ++i)
      argTypes.push_back(b_.getIndexType());
    for (const ModelTensor *t : own)
      argTypes.push_back(MemRefType::get(SmallVector<int64_t>(t->shape.begin(), t->shape.end()),
                                         elemType(t->dtype)));
    argTypes.append(resultTypes.begin(), resultTypes.end());

    // `examples.llama::LlamaDecoderLayer.forward` → @LlamaDecoderLayer.forward,
    // then .1, .2 ... for further specializations.
    std::string base = fn.name.substr(fn.name.rfind("::") == std::string::npos
                                          ? 0
                                          : fn.name.rfind("::") + 2);
    ModuleOp module = b_.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
    std::string name = base;
    for (int n = 1; module.lookupSymbol(name); ++n)
      name = fmt::format("{}.{}", base, n);

    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToEnd(module.getBody());
    auto func = b_.create<func::FuncOp>(loc_, name, b_.getFunctionType(argTypes, {}));
    func.setPrivate();
    // One body for every element: LLVM must not paste it back per call.
    // Internal, so that LLVM drops the arguments every call passes alike
    // (the static sizes, strides and offsets of the memref descriptors).
    func->setAttr("passthrough", b_.getArrayAttr({b_.getStringAttr("noinline")}));
    func->setAttr("llvm.linkage", LLVM::LinkageAttr::get(&ctx_, LLVM::Linkage::Internal));
    Block *body = func.addEntryBlock();
    b_.setInsertionPointToStart(body);

    // The function has its own tensors; the caller's are restored after.
    auto saved = std::make_tuple(std::move(tensorVal_), std::move(stateVal_),
                                 std::move(memrefVal_), std::move(stateBase_),
                                 std::move(observed_), std::move(preset_), nest_, where_, loc_);
    auto restore = [&] {
      std::tie(tensorVal_, stateVal_, memrefVal_, stateBase_, observed_, preset_, nest_, where_,
               loc_) = std::move(saved);
    };
    tensorVal_.clear();
    stateVal_.clear();
    memrefVal_.clear();
    stateBase_.clear();
    observed_.clear();
    preset_.clear();
    nest_ = 0;
    try {
      unsigned pos = 0;
      std::vector<V> inner;
      for (const V &a : args) {
        if (a.k == V::Scalar) {
          inner.push_back(a.c ? V::scalar(constant(a.v.getType(), (double)*a.c), a.c)
                              : V::scalar(body->getArgument(pos++)));
          continue;
        }
        Value m = body->getArgument(pos++);
        auto mt = cast<MemRefType>(m.getType());
        inner.push_back(V::tensor(b_.create<bufferization::ToTensorOp>(
            loc_, RankedTensorType::get(mt.getShape(), mt.getElementType()), m,
            /*restrict=*/true)));
      }
      Frame g;
      g.self = callee.self;
      g.dtypes = callee.dtypes;
      for (const auto &[sym, d] : callee.dims)
        if (d.c)
          g.dims[sym] = d;
      for (const std::string &sym : dynDims)
        g.dims[sym] = {std::nullopt, body->getArgument(pos++)};
      for (const ModelTensor *t : own) {
        Value m = body->getArgument(pos++);
        auto mt = cast<MemRefType>(m.getType());
        bool state = t->kind == "state";
        Value v = b_.create<bufferization::ToTensorOp>(
            loc_, RankedTensorType::get(mt.getShape(), mt.getElementType()), m,
            /*restrict=*/true, /*writable=*/state);
        tensorVal_[t->path] = v;
        memrefVal_[t->path] = m;
        if (state)
          stateVal_[t->path] = stateBase_[t->path] = v;
      }
      std::vector<V> results = planResults(call(fn, std::move(g), inner), fn);
      if (results.size() != resultTypes.size())
        fail(fmt::format("{}: returns {} values, its signature says {}", fn.name, results.size(),
                         resultTypes.size()));
      for (const ModelTensor *t : own)
        if (t->kind == "state" && stateVal_[t->path] != stateBase_[t->path]) {
          Value m = memrefVal_[t->path];
          auto mt = cast<MemRefType>(m.getType());
          Value v = convert(stateVal_[t->path],
                            RankedTensorType::get(mt.getShape(), mt.getElementType()));
          auto mat = b_.create<bufferization::MaterializeInDestinationOp>(loc_, v, m);
          mat.setWritable(true);
          mat.setRestrict(true);
        }
      for (size_t i = 0; i < results.size(); ++i) {
        Value m = body->getArgument(pos++);
        MemRefType mt = resultTypes[i];
        if (results[i].k == V::Scalar && mt.getRank() == 0) {
          b_.create<memref::StoreOp>(loc_, convert(results[i].v, mt.getElementType()), m,
                                     ValueRange{});
          continue;
        }
        Value v = convert(tensorOf(results[i]),
                          RankedTensorType::get(mt.getShape(), mt.getElementType()));
        auto mat = b_.create<bufferization::MaterializeInDestinationOp>(loc_, v, m);
        mat.setWritable(true);
        mat.setRestrict(true);
      }
      b_.create<func::ReturnOp>(loc_);
    } catch (const ImportError &) {
      restore();
      func.erase();
      return std::nullopt;
    }
    restore();
    return name;
  }

  //===--------------------------------------------------------------===//
  // Operations
  //===--------------------------------------------------------------===//

  std::vector<V> operation(const ir::Op &op, Frame &f) {
    const std::string &k = op.kind;
    const json &rt = op.results.empty() ? json() : op.results[0].type;
    auto operand = [&](size_t i) { return get(f, op.operands.at(i)); };

    if (k == ir::kind::Const) {
      const json &v = op.attrs["value"];
      if (v.is_null()) return {V()};
      if (rt.value("kind", "") == "literal")
        fail(fmt::format("{}: a literal whose type depends on its use", where_));
      Type t = type(rt, f);
      if (v.is_boolean())
        return {V::scalar(constant(t, v.get<bool>() ? 1 : 0), v.get<bool>() ? 1 : 0)};
      if (v.is_number_integer() && !isFloat(t))
        return {V::scalar(constant(t, (double)v.get<int64_t>()), v.get<int64_t>())};
      if (v.is_number())
        return {V::scalar(constant(t, v.get<double>()))};
      fail(fmt::format("{}: constant {} is not supported", where_, v.dump()));
    }
    if (k == ir::kind::Constant) {
      auto it = consts_.find(op.attrs["name"].get<std::string>());
      if (it == consts_.end())
        fail(fmt::format("{}: unknown constant", where_));
      return {constantValue(*it->second, type(rt, f))};
    }
    if (k == ir::kind::DimValue) {
      DimV d = dim(op.attrs["dim"], f);
      return {V::scalar(dimValue(d), d.c)};
    }
    if (k == ir::kind::Arith) {
      std::string o = op.attrs["op"];
      Type t = type(rt, f);
      // Arithmetic on whole tensors (same shape, or a tensor and a scalar,
      // which check accepts): the scalar operation at every element.
      if (auto tt = dyn_cast<RankedTensorType>(t); tt && tt.getRank() > 0) {
        std::vector<V> xs;
        for (size_t i = 0; i < op.operands.size(); ++i)
          xs.push_back(operand(i));
        bool uns = isUnsigned(rt, f);
        return {elementwise(tt, xs, [&](ArrayRef<Value> e) -> Value {
          Type et = tt.getElementType();
          if (o == "neg")
            return isFloat(et) ? Value(b_.create<arith::NegFOp>(loc_, convert(e[0], et)))
                               : Value(b_.create<arith::SubIOp>(loc_, constant(et, 0), convert(e[0], et)));
          if (o == "not")
            return b_.create<arith::XOrIOp>(loc_, convert(e[0], et), constant(et, 1));
          return binary(o, e[0], e[1], et, false, uns);
        })};
      }
      if (o == "neg" || o == "not") {
        V x = scalarOf(operand(0));
        if (o == "not")
          return {V::scalar(b_.create<arith::XOrIOp>(loc_, convert(x.v, t), constant(t, 1)),
                            x.c ? std::optional<int64_t>(!*x.c) : std::nullopt)};
        if (isFloat(t))
          return {V::scalar(b_.create<arith::NegFOp>(loc_, convert(x.v, t)))};
        return {V::scalar(b_.create<arith::SubIOp>(loc_, constant(t, 0), convert(x.v, t)),
                          x.c ? std::optional<int64_t>(-*x.c) : std::nullopt)};
      }
      V x = scalarOf(operand(0)), y = scalarOf(operand(1));
      std::optional<int64_t> c;
      if (x.c && y.c && !isFloat(t))
        c = fold(o, *x.c, *y.c);
      if (c && !isUnsigned(rt, f))
        return {V::scalar(constant(t, (double)*c), c)};
      return {V::scalar(binary(o, x.v, y.v, t, false, isUnsigned(rt, f)))};
    }
    if (k == ir::kind::Cmp) {
      if (auto tt = dyn_cast<RankedTensorType>(type(rt, f)); tt && tt.getRank() > 0) {
        std::string p = op.attrs["pred"];
        V a = operand(0), c = operand(1);
        bool uns = a.uns || c.uns;
        // Both sides are compared in the tensor operand's dtype (a scalar
        // literal adopts it, as in scalar code).
        Type et = cast<RankedTensorType>((a.k == V::Tensor ? a : c).v.getType()).getElementType();
        return {elementwise(tt, {a, c}, [&](ArrayRef<Value> e) -> Value {
          return compare(p, convert(e[0], et), convert(e[1], et), uns);
        })};
      }
      V x = scalarOf(operand(0)), y = scalarOf(operand(1));
      std::string p = op.attrs["pred"];
      if (x.c && y.c && !x.uns && !y.uns && isIntLike(x.v.getType()) && isIntLike(y.v.getType())) {
        int64_t a = *x.c, c = *y.c;
        bool r = p == "eq" ? a == c : p == "ne" ? a != c : p == "lt" ? a < c
               : p == "le" ? a <= c : p == "gt" ? a > c : a >= c;
        return {V::scalar(constant(b_.getI1Type(), r), r)};
      }
      return {V::scalar(compare(p, x.v, y.v, x.uns || y.uns))};
    }
    if (k == ir::kind::Select) {
      V c = scalarOf(operand(0));
      V x = operand(1), y = operand(2);
      if (c.c)
        return {*c.c ? x : y};
      Type t = type(rt, f);
      return {V::scalar(b_.create<arith::SelectOp>(loc_, c.v, convert(x.v, t), convert(y.v, t)))};
    }
    if (k == ir::kind::Cast) {
      V x = scalarOf(operand(0));
      Type t = type(rt, f);
      Type from = x.v.getType();
      bool toUns = isUnsigned(rt, f);
      // Unsigned sources widen and convert by value, not by sign bit.
      if (x.uns && isa<IntegerType>(from) && !from.isInteger(1)) {
        if (isFloat(t))
          return {V::scalar(b_.create<arith::UIToFPOp>(loc_, t, x.v))};
        if (isa<IntegerType>(t) && from.getIntOrFloatBitWidth() < t.getIntOrFloatBitWidth())
          return {V::scalar(b_.create<arith::ExtUIOp>(loc_, t, x.v))};
      }
      if (toUns && isFloat(from) && isa<IntegerType>(t))
        return {V::scalar(floatToUnsigned(x.v, cast<IntegerType>(t)))};
      return {V::scalar(convert(x.v, t), isFloat(t) || x.uns || toUns ? std::nullopt : x.c)};
    }
    if (k == ir::kind::Builtin)
      return {builtin(op.attrs["name"], op, f)};
    if (k == ir::kind::Tuple || k == ir::kind::Struct) {
      V a;
      a.k = V::Agg;
      for (ir::ValueId id : op.operands)
        a.elems.push_back(get(f, id));
      if (op.attrs.contains("fields"))
        for (const json &n : op.attrs["fields"])
          a.names.push_back(n);
      return {a};
    }
    if (k == ir::kind::TupleGet) {
      V a = operand(0);
      return {a.elems.at(op.attrs["index"].get<size_t>())};
    }
    if (k == ir::kind::Field) {
      V a = operand(0);
      std::string n = op.attrs["name"];
      for (size_t i = 0; i < a.names.size(); ++i)
        if (a.names[i] == n)
          return {a.elems[i]};
      fail(fmt::format("{}: no field '{}'", where_, n));
    }
    if (k == ir::kind::Some) {
      V o;
      o.k = V::Opt;
      o.present = true;
      o.elems.push_back(operand(0));
      return {o};
    }
    if (k == ir::kind::Index)
      return {index(op, f)};
    if (k == ir::kind::Slice)
      return {slice(op, f)};
    if (k == ir::kind::Comprehension) {
      auto hoisted = hoistInvariantWork(op, f);
      return {comprehension(op, f)};
    }
    if (k == ir::kind::Reduce) {
      auto hoisted = hoistInvariantWork(op, f);
      return reduce(op, f);
    }
    if (k == ir::kind::Self) {
      V s;
      s.k = V::Block;
      s.path = f.self.value_or("");
      return {s};
    }
    if (k == ir::kind::Sub) {
      std::string base = op.operands.empty() ? f.self.value_or("") : operand(0).path;
      V s;
      s.path = joinPath(base, op.attrs["member"]);
      s.k = rt.value("kind", "") == "array" ? V::Blocks : V::Block;
      if (rt.value("kind", "") == "optional") {
        // An optional sub block is present unless a tensor it requires is
        // absent (§9.4; expandManifest decided it from the weights).
        V o;
        o.k = V::Opt;
        s.k = V::Block;
        o.present = true;
        for (const ModelTensor &t : tensors_)
          if (t.block == s.path && t.required && !t.present)
            o.present = false;
        o.elems.push_back(s);
        return {o};
      }
      return {s};
    }
    if (k == ir::kind::Member) {
      std::string base = op.operands.empty() ? f.self.value_or("") : operand(0).path;
      std::string path = joinPath(base, op.attrs["member"]);
      auto it = tensorVal_.find(path);
      if (stateVal_.count(path))
        observed_.insert(path);
      bool optional = rt.value("kind", "") == "optional";
      if (optional) {
        V o;
        o.k = V::Opt;
        o.present = it != tensorVal_.end();
        if (o.present)
          o.elems.push_back(valueOf(it->second));
        return {o};
      }
      if (it == tensorVal_.end())
        fail(fmt::format("{}: tensor '{}' is not in the build", where_, path));
      return {valueOf(it->second)};
    }
    if (k == ir::kind::StateRead) {
      std::string base = op.operands.empty() ? f.self.value_or("") : operand(0).path;
      std::string path = joinPath(base, op.attrs["member"]);
      auto it = stateVal_.find(path);
      if (it == stateVal_.end())
        fail(fmt::format("{}: state '{}' is not in the build", where_, path));
      observed_.insert(path);
      return {valueOf(it->second)};
    }
    if (k == ir::kind::StateWrite) {
      std::string path = joinPath(f.self.value_or(""), op.attrs["member"]);
      if (!stateVal_.count(path))
        fail(fmt::format("{}: state '{}' is not in the build", where_, path));
      V v = operand(0);
      if (v.k != V::Tensor && v.k != V::Scalar)
        fail(fmt::format("{}: only tensor state is supported", where_));
      Type st = stateVal_[path].getType();
      if (v.k == V::Scalar)
        v = V::scalar(convert(v.v, cast<RankedTensorType>(st).getElementType()));
      stateVal_[path] = convert(tensorOf(v), st);
      return {};
    }
    if (k == ir::kind::Call) {
      auto it = fns_.find(op.attrs["callee"].get<std::string>());
      if (it == fns_.end())
        fail(fmt::format("{}: unknown callee '{}'", where_, op.attrs["callee"].get<std::string>()));
      Frame callee;
      bindSubstitution(op.attrs["substitution"], f, callee);
      std::vector<V> args;
      size_t first = 0;
      if (op.attrs.value("method", false)) {
        V recv = operand(0);
        if (recv.k != V::Block)
          fail(fmt::format("{}: the receiver of '{}' is not a block instance", where_,
                           op.attrs["callee"].get<std::string>()));
        callee.self = recv.path;
        first = 1;
      }
      for (size_t i = first; i < op.operands.size(); ++i)
        args.push_back(operand(i));
      // A method of an element of an array of sub blocks is one function
      // per specialization, called once per element.
      if (first == 1 && nest_ == 0 && elementPaths_.count(*callee.self))
        if (std::optional<std::vector<V>> rs = callOutlined(*it->second, callee, args)) {
          if (op.results.size() == 1 && rs->size() > 1) { // a tuple, one buffer per element
            V t;
            t.k = V::Agg;
            t.elems = std::move(*rs);
            return {t};
          }
          return *rs;
        }
      std::vector<V> rs = call(*it->second, std::move(callee), args);
      if (op.results.size() > 1 && rs.size() == 1 && rs[0].k == V::Agg)
        return rs[0].elems;
      return rs;
    }
    if (k == ir::kind::If)
      return ifOp(op, f);
    if (k == ir::kind::Match) {
      V s = operand(0);
      if (s.k != V::Opt)
        fail(fmt::format("{}: match on enums is not supported by the CPU backend yet", where_));
      const json &arms = op.attrs["arms"];
      for (size_t i = 0; i < arms.size(); ++i) {
        std::string ak = arms[i].value("kind", "");
        if ((ak == "some" && s.present) || (ak == "none" && !s.present) || ak == "wildcard" ||
            ak == "bind") {
          std::vector<V> args;
          if (op.regions[i].args.size() == 1)
            args.push_back(ak == "some" ? s.elems[0] : s);
          return region(op.regions[i], f, args);
        }
      }
      fail(fmt::format("{}: no arm of the match applies", where_));
    }
    if (k == ir::kind::While)
      return whileOp(op, f);
    fail(fmt::format("{}: the construct '{}' cannot be compiled by the CPU backend yet", where_, k));
  }

  V constantValue(const plan::Constant &c, Type t) {
    // Module constants are small expressions; literals take the use's type.
    V r;
    for (const ir::Op &op : c.body.ops) {
      if (op.kind == ir::kind::Yield)
        return r;
      if (op.kind == ir::kind::Const && op.attrs["value"].is_number()) {
        r = V::scalar(constant(t, op.attrs["value"].get<double>()));
        continue;
      }
      if (op.kind == ir::kind::Builtin && op.attrs["name"] == "inf") {
        r = V::scalar(infinity(t, false));
        continue;
      }
      if (op.kind == ir::kind::Arith && op.attrs["op"] == "neg" && r.k == V::Scalar) {
        r = V::scalar(isFloat(t) ? b_.create<arith::NegFOp>(loc_, r.v).getResult()
                                 : b_.create<arith::SubIOp>(loc_, constant(t, 0), r.v).getResult());
        continue;
      }
      fail(fmt::format("{}: constant '{}' uses '{}', which the CPU backend does not evaluate yet",
                       where_, c.name, op.kind));
    }
    return r;
  }

  Value compare(const std::string &p, Value a, Value c, bool uns = false) {
    Type t = common(a.getType(), c.getType());
    if (isa<IndexType>(a.getType()) != isa<IndexType>(c.getType()) && !isFloat(t))
      t = b_.getI64Type();
    a = convert(a, t);
    c = convert(c, t);
    if (isFloat(t)) {
      arith::CmpFPredicate pr = p == "eq" ? arith::CmpFPredicate::OEQ
                              : p == "ne" ? arith::CmpFPredicate::UNE
                              : p == "lt" ? arith::CmpFPredicate::OLT
                              : p == "le" ? arith::CmpFPredicate::OLE
                              : p == "gt" ? arith::CmpFPredicate::OGT
                                          : arith::CmpFPredicate::OGE;
      return b_.create<arith::CmpFOp>(loc_, pr, a, c);
    }
    if (uns) {
      // Unsigned operands (u8 against u8, or a non-negative literal).
      arith::CmpIPredicate pr = p == "eq" ? arith::CmpIPredicate::eq
                              : p == "ne" ? arith::CmpIPredicate::ne
                              : p == "lt" ? arith::CmpIPredicate::ult
                              : p == "le" ? arith::CmpIPredicate::ule
                              : p == "gt" ? arith::CmpIPredicate::ugt
                                          : arith::CmpIPredicate::uge;
      return b_.create<arith::CmpIOp>(loc_, pr, a, c);
    }
    arith::CmpIPredicate pr = p == "eq" ? arith::CmpIPredicate::eq
                            : p == "ne" ? arith::CmpIPredicate::ne
                            : p == "lt" ? arith::CmpIPredicate::slt
                            : p == "le" ? arith::CmpIPredicate::sle
                            : p == "gt" ? arith::CmpIPredicate::sgt
                                        : arith::CmpIPredicate::sge;
    return b_.create<arith::CmpIOp>(loc_, pr, a, c);
  }

  V builtin(const std::string &name, const ir::Op &op, Frame &f) {
    Type t = type(op.results[0].type, f);
    std::vector<Value> xs;
    for (ir::ValueId id : op.operands)
      xs.push_back(convert(scalarOf(get(f, id)).v, t));
    auto unary = [&](auto tag) -> V {
      using OpT = decltype(tag);
      if (xs.size() != 1 || !isFloat(t))
        fail(fmt::format("{}: __builtin_{} takes one float", where_, name));
      return V::scalar(b_.create<OpT>(loc_, xs[0]));
    };
    if (name == "exp") return unary(math::ExpOp());
    if (name == "log") return unary(math::LogOp());
    if (name == "sqrt") return unary(math::SqrtOp());
    if (name == "rsqrt") return unary(math::RsqrtOp());
    if (name == "tanh") return unary(math::TanhOp());
    if (name == "erf") return unary(math::ErfOp());
    if (name == "sin") return unary(math::SinOp());
    if (name == "cos") return unary(math::CosOp());
    if (name == "abs")
      return isFloat(t) ? V::scalar(b_.create<math::AbsFOp>(loc_, xs[0]))
                        : V::scalar(b_.create<math::AbsIOp>(loc_, xs[0]));
    if (name == "pow" && xs.size() == 2)
      return V::scalar(b_.create<math::PowFOp>(loc_, xs[0], xs[1]));
    if ((name == "max" || name == "min") && xs.size() == 2)
      return V::scalar(binary(name, xs[0], xs[1], t, false, isUnsigned(op.results[0].type, f)));
    if (name == "inf" && xs.empty() && isFloat(t))
      return V::scalar(infinity(t, false));
    fail(fmt::format("{}: builtin '{}' is not supported by the CPU backend yet", where_, name));
  }

  std::vector<V> ifOp(const ir::Op &op, Frame &f) {
    V c = scalarOf(get(f, op.operands[0]));
    if (c.c)
      return region(op.regions[*c.c ? 0 : 1], f, {});
    // Both branches are built first in an scf.if without results: the
    // then branch's values decide the result types. Struct and tuple
    // values (a reducer's state) travel as their leaves and are rebuilt
    // after the if.
    auto shell = b_.create<scf::IfOp>(loc_, TypeRange{}, c.v, /*withElseRegion=*/true);
    std::vector<V> templ;
    SmallVector<Type> types;
    SmallVector<SmallVector<Value>> leafVals(2);
    for (int side = 0; side < 2; ++side) {
      OpBuilder::InsertionGuard g(b_);
      Block *blk = side == 0 ? shell.thenBlock() : shell.elseBlock();
      b_.setInsertionPoint(blk->getTerminator());
      ++nest_;
      std::vector<V> ys = region(op.regions[side], f, {});
      --nest_;
      if (ys.size() != op.results.size())
        fail(fmt::format("{}: a branch yields {} values, the `if` has {}", where_, ys.size(),
                         op.results.size()));
      std::vector<Value> leafs;
      for (const V &y : ys) {
        if (y.k != V::Scalar && y.k != V::Tensor && y.k != V::Agg)
          fail(fmt::format("{}: an `if` whose condition is known only at run time must yield "
                           "numbers, tensors, structs or tuples",
                           where_));
        leaves(y, leafs);
      }
      if (side == 0) {
        templ = ys;
        for (Value v : leafs)
          types.push_back(v.getType());
        // Results typed in the plan keep the plan's type (a literal branch
        // value converts to it).
        size_t pos = 0;
        for (size_t i = 0; i < ys.size(); ++i) {
          const std::string kind = op.results[i].type.value("kind", "");
          if (ys[i].k != V::Agg && (kind == "scalar" || kind == "tensor"))
            types[pos] = type(op.results[i].type, f);
          std::vector<Value> one;
          leaves(ys[i], one);
          pos += one.size();
        }
      } else if (leafs.size() != types.size()) {
        fail(fmt::format("{}: the branches of an `if` yield values of different shapes", where_));
      }
      for (size_t i = 0; i < leafs.size(); ++i)
        leafVals[side].push_back(convert(leafs[i], types[i]));
    }
    auto ifo = b_.create<scf::IfOp>(loc_, types, c.v, /*withElseRegion=*/true);
    for (int side = 0; side < 2; ++side) {
      Region &from = side == 0 ? shell.getThenRegion() : shell.getElseRegion();
      Region &to = side == 0 ? ifo.getThenRegion() : ifo.getElseRegion();
      to.getBlocks().clear();
      to.takeBody(from);
      Block &blk = to.front();
      blk.getTerminator()->erase();
      OpBuilder::InsertionGuard g(b_);
      b_.setInsertionPointToEnd(&blk);
      b_.create<scf::YieldOp>(loc_, leafVals[side]);
    }
    shell.erase();
    std::vector<V> out;
    size_t pos = 0;
    for (const V &t : templ)
      out.push_back(rebuild(t, ifo.getResults(), pos));
    return out;
  }


  /// A `while` whose condition is known only at run time (a recurrence
  /// over an entry's sequence length): an scf.while carrying the loop's
  /// values as leaves (numbers and tensors, of structs and tuples too), in
  /// the plan's types, and the state its body writes.
  std::vector<V> runtimeWhile(const ir::Op &op, Frame &f, std::vector<V> carried) {
    for (const V &v : carried)
      if (v.k != V::Scalar && v.k != V::Tensor && v.k != V::Agg)
        fail(fmt::format("{}: a `while` whose condition is known only at run time may carry "
                         "numbers, tensors, structs and tuples; this one carries {}",
                         where_, v.k == V::Opt ? "an optional" : "a block or relation"));
    // The carried values as they enter: the plan's type for numbers and
    // tensors (a static initial value may become dynamic in the body).
    std::vector<Type> planTypes(carried.size());
    for (size_t i = 0; i < carried.size() && i < op.results.size(); ++i) {
      std::string kind = op.results[i].type.value("kind", "");
      if (carried[i].k != V::Agg && (kind == "scalar" || kind == "tensor"))
        planTypes[i] = type(op.results[i].type, f);
    }
    auto flatten = [&](const std::vector<V> &vs, const SmallVector<Type> *types) {
      SmallVector<Value> out;
      for (size_t i = 0; i < vs.size(); ++i) {
        std::vector<Value> ls;
        leaves(vs[i], ls);
        for (Value l : ls) {
          Type t = types ? (*types)[out.size()] : planTypes[i] ? planTypes[i] : l.getType();
          out.push_back(convert(l, t));
        }
      }
      return out;
    };
    auto unflatten = [&](ValueRange vals) {
      std::vector<V> out;
      size_t pos = 0;
      for (const V &t : carried) {
        V v = rebuild(t, vals, pos);
        if (v.k == V::Scalar || v.k == V::Tensor)
          v.uns = t.uns;
        out.push_back(v);
      }
      return out;
    };

    // State the body writes is carried too. Which states those are is
    // known once the body is built: a body that writes more than was
    // carried is built again, carrying them.
    std::vector<std::string> states;
    for (;;) {
      std::map<std::string, Value> stateBefore = stateVal_;
      SmallVector<Value> init = flatten(carried, nullptr);
      size_t nvals = init.size();
      for (const std::string &p : states)
        init.push_back(stateVal_.at(p));
      SmallVector<Type> types;
      for (Value v : init)
        types.push_back(v.getType());
      SmallVector<Location> locs(types.size(), loc_);
      auto loop = b_.create<scf::WhileOp>(loc_, types, init);
      auto bind = [&](Block *blk) {
        for (size_t k = 0; k < states.size(); ++k)
          stateVal_[states[k]] = blk->getArgument(nvals + k);
        return unflatten(blk->getArguments().take_front(nvals));
      };
      std::vector<std::string> written;
      {
        OpBuilder::InsertionGuard g(b_);
        ++nest_;
        Block *before = b_.createBlock(&loop.getBefore(), {}, types, locs);
        std::vector<V> c = region(op.regions[0], f, bind(before));
        if (c.size() != 1 || c[0].k != V::Scalar)
          fail(fmt::format("{}: the condition of a `while` must be a bool", where_));
        b_.create<scf::ConditionOp>(loc_, convert(c[0].v, b_.getI1Type()),
                                    before->getArguments());
        Block *after = b_.createBlock(&loop.getAfter(), {}, types, locs);
        std::vector<V> atStart = bind(after);
        std::map<std::string, Value> stateAtStart = stateVal_;
        std::vector<V> next = region(op.regions[1], f, atStart);
        if (next.size() != carried.size())
          fail(fmt::format("{}: the body of a `while` yields {} values, it carries {}", where_,
                           next.size(), carried.size()));
        SmallVector<Value> yielded = flatten(next, &types);
        if (yielded.size() != nvals)
          fail(fmt::format("{}: a value carried by a `while` changes its structure in the body",
                           where_));
        for (const auto &[p, v] : stateVal_)
          if (stateAtStart.count(p) && stateAtStart[p] != v)
            written.push_back(p);
        for (const std::string &p : states)
          yielded.push_back(convert(stateVal_[p], types[yielded.size()]));
        b_.create<scf::YieldOp>(loc_, yielded);
        --nest_;
      }
      stateVal_ = stateBefore;
      std::vector<std::string> all = states;
      for (const std::string &p : written)
        if (std::find(all.begin(), all.end(), p) == all.end())
          all.push_back(p);
      if (all.size() != states.size()) {
        loop.erase();
        states = std::move(all);
        continue;
      }
      for (size_t k = 0; k < states.size(); ++k)
        stateVal_[states[k]] = loop.getResult(nvals + k);
      return unflatten(loop.getResults().take_front(nvals));
    }
  }

  std::vector<V> whileOp(const ir::Op &op, Frame &f) {
    std::vector<V> carried;
    for (ir::ValueId id : op.operands)
      carried.push_back(get(f, id));
    // Loops whose condition is known at build time (the counter over an
    // array of sub blocks) are unrolled; from the first condition known
    // only at run time on, the loop is an scf.while.
    for (int iter = 0;; ++iter) {
      std::vector<V> c = region(op.regions[0], f, carried);
      if (c.size() != 1 || c[0].k != V::Scalar)
        fail(fmt::format("{}: the condition of a `while` must be a bool", where_));
      if (!c[0].c)
        return runtimeWhile(op, f, std::move(carried));
      if (!*c[0].c)
        return carried;
      if (iter > 100000)
        fail(fmt::format("{}: a `while` unrolled more than 100000 times", where_));
      carried = region(op.regions[1], f, carried);
    }
  }

  //===--------------------------------------------------------------===//
  // Tensors
  //===--------------------------------------------------------------===//

  V index(const ir::Op &op, Frame &f) {
    V base = get(f, op.operands[0]);
    if (base.k == V::Blocks) {
      V i = scalarOf(get(f, op.operands[1]));
      if (!i.c)
        fail(fmt::format("{}: an array of sub blocks indexed by a value not known at build time",
                         where_));
      V r;
      r.k = V::Block;
      r.path = base.path + "." + std::to_string(*i.c);
      elementPaths_.insert(r.path);
      return r;
    }
    Value t = tensorOf(base);
    SmallVector<Value> idx;
    for (size_t i = 1; i < op.operands.size(); ++i)
      idx.push_back(convert(scalarOf(get(f, op.operands[i])).v, b_.getIndexType()));
    auto tt = cast<RankedTensorType>(t.getType());
    if ((int64_t)idx.size() != tt.getRank())
      fail(fmt::format("{}: {} indices into a rank-{} tensor", where_, idx.size(), tt.getRank()));
    for (size_t a = 0; a < idx.size(); ++a) {
      Value size = tt.isDynamicDim(a) ? b_.create<tensor::DimOp>(loc_, t, a).getResult()
                                      : cIndex(tt.getDimSize(a));
      idx[a] = checkedIndex(idx[a], size,
                            {{"kind", "index"}, {"tensor", valueName(op.operands[0])}, {"axis", a}});
    }
    return V::scalar(b_.create<tensor::ExtractOp>(loc_, t, idx));
  }

  V slice(const ir::Op &op, Frame &f) {
    Value t = tensorOf(get(f, op.operands[0]));
    auto tt = cast<RankedTensorType>(t.getType());
    SmallVector<OpFoldResult> offs, sizes, strides;
    int64_t axis = 0;
    auto operandAt = [&](const json &j) -> std::optional<V> {
      if (j.is_null()) return std::nullopt;
      return scalarOf(get(f, op.operands.at(j.get<size_t>())));
    };
    auto fold = [&](const V &v) -> OpFoldResult {
      if (v.c) return b_.getIndexAttr(*v.c);
      return convert(v.v, b_.getIndexType());
    };
    auto full = [&](int64_t a) -> OpFoldResult {
      if (!tt.isDynamicDim(a)) return b_.getIndexAttr(tt.getDimSize(a));
      return b_.create<tensor::DimOp>(loc_, t, a).getResult();
    };
    const json &axes = op.attrs["axes"];
    SmallVector<int64_t> squeezed; // axes an index drops
    int64_t named = 0;
    for (const json &a : axes)
      named += !(a.value("kind", "") == "whole" && a.value("rest", false));
    for (const json &a : axes) {
      std::string kind = a.value("kind", "");
      if (kind == "squeeze") {
        offs.push_back(fold(*operandAt(a["index"])));
        sizes.push_back(b_.getIndexAttr(1));
        strides.push_back(b_.getIndexAttr(1));
        squeezed.push_back(axis);
        ++axis;
      } else if (kind == "range") {
        std::optional<V> s = operandAt(a["start"]), e = operandAt(a["stop"]), st = operandAt(a["step"]);
        // check types a slice only with a constant positive step.
        if (st && (!st->c || *st->c <= 0))
          fail(fmt::format("{}: a slice step must be a positive constant", where_));
        int64_t step = st ? *st->c : 1;
        OpFoldResult start = s ? fold(*s) : OpFoldResult(b_.getIndexAttr(0));
        OpFoldResult stop = e ? fold(*e) : full(axis);
        // ceil((stop - start) / step) elements, as check computes the type.
        OpFoldResult size;
        auto cs = getConstantIntValue(start), ce = getConstantIntValue(stop);
        if (cs && ce) {
          size = b_.getIndexAttr((*ce - *cs + step - 1) / step);
        } else {
          Value len = b_.create<arith::SubIOp>(loc_, getValueOrCreateConstantIndexOp(b_, loc_, stop),
                                               getValueOrCreateConstantIndexOp(b_, loc_, start));
          if (step != 1)
            len = b_.create<arith::DivUIOp>(loc_, b_.create<arith::AddIOp>(loc_, len, cIndex(step - 1)),
                                            cIndex(step));
          size = len;
        }
        offs.push_back(start);
        sizes.push_back(size);
        strides.push_back(b_.getIndexAttr(step));
        ++axis;
      } else {
        int64_t n = a.value("rest", false) ? tt.getRank() - (named - 0) + 0 : 1;
        if (a.value("rest", false))
          n = tt.getRank() - named;
        for (int64_t i = 0; i < n; ++i, ++axis) {
          offs.push_back(b_.getIndexAttr(0));
          sizes.push_back(full(axis));
          strides.push_back(b_.getIndexAttr(1));
        }
      }
    }
    for (; axis < tt.getRank(); ++axis) {
      offs.push_back(b_.getIndexAttr(0));
      sizes.push_back(full(axis));
      strides.push_back(b_.getIndexAttr(1));
    }
    auto resT = cast<RankedTensorType>(type(op.results[0].type, f));
    // A rank-reducing slice whose kept axes include a static 1 is ambiguous
    // (which unit axis was dropped?), and MLIR 19's subview folding crashes
    // on the memref it bufferizes to (`w[::2, 2]` of a 2 x K weight): slice
    // at full rank, then collapse each dropped axis into a kept neighbour.
    bool ambiguous = !squeezed.empty() && resT.getRank() > 0 &&
                     llvm::any_of(resT.getShape(), [](int64_t d) { return d == 1; });
    if (!ambiguous)
      return V::tensor(b_.create<tensor::ExtractSliceOp>(loc_, resT, t, offs, sizes, strides));
    SmallVector<int64_t> fullShape;
    for (int64_t a = 0, k = 0; a < tt.getRank(); ++a) {
      if (llvm::is_contained(squeezed, a))
        fullShape.push_back(1);
      else
        fullShape.push_back(resT.getDimSize(k++));
    }
    auto fullT = RankedTensorType::get(fullShape, resT.getElementType());
    Value whole = b_.create<tensor::ExtractSliceOp>(loc_, fullT, t, offs, sizes, strides);
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices leading; // dropped axes before the first kept one
    for (int64_t a = 0; a < tt.getRank(); ++a) {
      if (!llvm::is_contained(squeezed, a)) {
        groups.push_back(leading);
        leading.clear();
        groups.back().push_back(a);
      } else if (groups.empty()) {
        leading.push_back(a);
      } else {
        groups.back().push_back(a);
      }
    }
    return V::tensor(b_.create<tensor::CollapseShapeOp>(loc_, resT, whole, groups));
  }

  /// Domain sizes of a comprehension's or reduction's dense indices.
  std::vector<DimV> domains(const json &indices, Frame &f) {
    std::vector<DimV> ds;
    for (const json &i : indices)
      ds.push_back(extent(i["domain"], f));
    return ds;
  }

  V comprehension(const ir::Op &op, Frame &f) {
    const json &indices = op.attrs["indices"];
    std::vector<DimV> ds = domains(indices, f);
    SmallVector<Value> dyn;
    auto resT = cast<RankedTensorType>(type(op.results[0].type, f, &dyn));
    int64_t n = ds.size();
    bool scalarElem = resT.getRank() == n;
    if (scalarElem && nest_ == 0)
      if (std::optional<V> r = sliceUpdate(op, f, ds, resT))
        return *r;
    Value init = b_.create<tensor::EmptyOp>(loc_, resT.getShape(), resT.getElementType(), dyn);

    if (scalarElem && nest_ == 0)
      if (std::optional<V> r = relationApply(op, f, ds, resT))
        return *r;
    if (scalarElem && nest_ == 0)
      if (std::optional<V> r = structured(op, f, ds, resT, dyn))
        return *r;
    if (scalarElem && nest_ == 0) {
      // A linalg.generic over the domain; reads stay tensor.extract in the
      // body (index arithmetic such as h * Head + d or ids[s] is arbitrary).
      SmallVector<AffineMap> maps{b_.getMultiDimIdentityMap(n)};
      SmallVector<utils::IteratorType> its(n, utils::IteratorType::parallel);
      auto gen = b_.create<linalg::GenericOp>(loc_, TypeRange{resT}, ValueRange{}, ValueRange{init},
                                              maps, its);
      OpBuilder::InsertionGuard g(b_);
      Block *blk = b_.createBlock(&gen.getRegion(), {}, {resT.getElementType()}, {loc_});
      b_.setInsertionPointToStart(blk);
      std::vector<V> args;
      for (int64_t i = 0; i < n; ++i)
        args.push_back(V::scalar(b_.create<linalg::IndexOp>(loc_, i)));
      ++nest_;
      std::vector<V> ys = region(op.regions[0], f, args);
      --nest_;
      b_.create<linalg::YieldOp>(loc_, convert(scalarOf(ys.at(0)).v, resT.getElementType()));
      return V::tensor(gen.getResult(0));
    }

    // Otherwise a loop nest that inserts each element (a scalar, or a
    // tensor element such as one attention head's context vector).
    std::optional<SplitFold> split;
    if (nest_ == 0)
      split = splitFold(op, f, ds);
    std::vector<Value> ivs;
    std::function<Value(int64_t, Value)> nestLoops = [&](int64_t i, Value acc) -> Value {
      if (i == n) {
        std::vector<V> args;
        for (Value iv : ivs)
          args.push_back(V::scalar(iv));
        if (split)
          preset_[split->op] = combineChunks(*split, ivs);
        std::vector<V> ys = region(op.regions[0], f, args);
        if (split)
          preset_.erase(split->op);
        V y = ys.at(0);
        if (scalarElem)
          return b_.create<tensor::InsertOp>(loc_, convert(scalarOf(y).v, resT.getElementType()), acc,
                                             ValueRange(ivs));
        Value e = tensorOf(y);
        auto et = cast<RankedTensorType>(e.getType());
        SmallVector<OpFoldResult> offs, sizes, strides;
        for (Value iv : ivs) {
          offs.push_back(iv);
          sizes.push_back(b_.getIndexAttr(1));
          strides.push_back(b_.getIndexAttr(1));
        }
        for (int64_t a = 0; a < et.getRank(); ++a) {
          offs.push_back(b_.getIndexAttr(0));
          sizes.push_back(et.isDynamicDim(a) ? OpFoldResult(b_.create<tensor::DimOp>(loc_, e, a).getResult())
                                             : OpFoldResult(b_.getIndexAttr(et.getDimSize(a))));
          strides.push_back(b_.getIndexAttr(1));
        }
        return b_.create<tensor::InsertSliceOp>(loc_, e, acc, offs, sizes, strides);
      }
      auto loop = b_.create<scf::ForOp>(loc_, cIndex(0), dimValue(ds[i]), cIndex(1), ValueRange{acc});
      // A comprehension's elements are independent by the language's rule:
      // a target may run the iterations in parallel (the CUDA target's
      // threads), each inserting its own element.
      loop->setAttr("linnet.elements", b_.getUnitAttr());
      OpBuilder::InsertionGuard g(b_);
      b_.setInsertionPointToStart(loop.getBody());
      ivs.push_back(loop.getInductionVar());
      ++nest_;
      Value r = nestLoops(i + 1, loop.getRegionIterArgs()[0]);
      --nest_;
      ivs.pop_back();
      b_.create<scf::YieldOp>(loc_, r);
      return loop.getResult(0);
    };
    return V::tensor(nestLoops(0, init));
  }

  /// `[i.., p, ..] if p >= A && p < B { new } else { X[i.., p, ..] }` (a
  /// KV-cache append: X a tensor of the comprehension's shape read at its
  /// indices in order, A and B independent of the indices) becomes
  /// `tensor.insert_slice` of `new`, computed over p in [A, B) only, into X
  /// at A: the rest of X is neither read nor rewritten, and a state X is
  /// updated in place after bufferization. Returns nothing when the body
  /// does not have this form.
  std::optional<V> sliceUpdate(const ir::Op &op, Frame &f, const std::vector<DimV> &ds,
                               RankedTensorType resT) {
    const ir::Region &body = op.regions[0];
    int64_t n = ds.size();
    if (body.ops.size() < 2 || (int64_t)body.args.size() != n)
      return std::nullopt;
    const ir::Op &yield = body.ops.back(), &ifo = body.ops[body.ops.size() - 2];
    if (yield.kind != ir::kind::Yield || ifo.kind != ir::kind::If || yield.operands.size() != 1 ||
        ifo.results.size() != 1 || yield.operands[0] != ifo.results[0].id ||
        ifo.regions.size() != 2)
      return std::nullopt;
    std::map<ir::ValueId, int64_t> argAxis;
    for (int64_t i = 0; i < n; ++i)
      argAxis[body.args[i].id] = i;
    std::map<ir::ValueId, const ir::Op *> def;
    for (size_t i = 0; i + 2 < body.ops.size(); ++i)
      for (const ir::Value &r : body.ops[i].results)
        def[r.id] = &body.ops[i];
    // The condition: and(ge(p, A), lt(p, B)), in either order.
    auto it = def.find(ifo.operands[0]);
    if (it == def.end() || it->second->kind != ir::kind::Arith ||
        it->second->attrs.value("op", "") != "and" || it->second->operands.size() != 2)
      return std::nullopt;
    const ir::Op *andOp = it->second, *ge = nullptr, *lt = nullptr;
    for (ir::ValueId c : andOp->operands) {
      auto d = def.find(c);
      if (d == def.end() || d->second->kind != ir::kind::Cmp || d->second->operands.size() != 2)
        return std::nullopt;
      std::string pred = d->second->attrs.value("pred", "");
      if (pred == "ge")
        ge = d->second;
      else if (pred == "lt")
        lt = d->second;
      else
        return std::nullopt;
    }
    if (!ge || !lt || !argAxis.count(ge->operands[0]) || ge->operands[0] != lt->operands[0])
      return std::nullopt;
    int64_t axis = argAxis[ge->operands[0]];
    // Every other op before the `if` is independent of the indices.
    llvm::SmallPtrSet<const ir::Op *, 4> cond;
    cond.insert(andOp);
    cond.insert(ge);
    cond.insert(lt);
    for (size_t i = 0; i + 2 < body.ops.size(); ++i) {
      const ir::Op &o = body.ops[i];
      if (cond.contains(&o))
        continue;
      if (!o.regions.empty())
        return std::nullopt;
      for (ir::ValueId id : o.operands)
        if (argAxis.count(id) || (def.count(id) && cond.contains(def[id])))
          return std::nullopt;
    }
    for (ir::ValueId id : {ge->operands[1], lt->operands[1]})
      if (argAxis.count(id))
        return std::nullopt;
    // The else branch: tensor-naming ops, then X[indices in order].
    const ir::Region &els = ifo.regions[1];
    if (els.ops.empty() || els.ops.back().kind != ir::kind::Yield ||
        els.ops.back().operands.size() != 1 || els.ops.size() < 2)
      return std::nullopt;
    const ir::Op &read = els.ops[els.ops.size() - 2];
    if (read.kind != ir::kind::Index || els.ops.back().operands[0] != read.results[0].id ||
        (int64_t)read.operands.size() != n + 1)
      return std::nullopt;
    for (int64_t i = 0; i < n; ++i)
      if (read.operands[i + 1] != body.args[i].id)
        return std::nullopt;
    for (size_t i = 0; i + 2 < els.ops.size(); ++i)
      if (!namesTensor(els.ops[i]))
        return std::nullopt;
    // Evaluate: the index-independent ops, the tensor X, the bounds.
    for (size_t i = 0; i + 2 < body.ops.size(); ++i)
      if (!cond.contains(&body.ops[i])) {
        std::vector<V> rs = operation(body.ops[i], f);
        for (size_t k = 0; k < body.ops[i].results.size() && k < rs.size(); ++k)
          f.env[body.ops[i].results[k].id] = rs[k];
      }
    V base;
    for (size_t i = 0; i + 1 < els.ops.size(); ++i) {
      if (i + 2 == els.ops.size()) {
        base = get(f, read.operands[0]);
        break;
      }
      std::vector<V> rs = operation(els.ops[i], f);
      for (size_t k = 0; k < els.ops[i].results.size() && k < rs.size(); ++k)
        f.env[els.ops[i].results[k].id] = rs[k];
    }
    if (base.k != V::Tensor || base.v.getType() != resT)
      return std::nullopt; // the emitted ops above are dead and fold away
    Type idx = b_.getIndexType();
    Value full = dimValue(ds[axis]), zero = cIndex(0);
    Value lo = convert(scalarOf(get(f, ge->operands[1])).v, idx);
    Value hi = convert(scalarOf(get(f, lt->operands[1])).v, idx);
    lo = b_.create<arith::MaxSIOp>(loc_, b_.create<arith::MinSIOp>(loc_, lo, full), zero);
    hi = b_.create<arith::MaxSIOp>(loc_, b_.create<arith::MinSIOp>(loc_, hi, full), lo);
    Value len = b_.create<arith::SubIOp>(loc_, hi, lo);
    // The slab: the then branch over the domain with p = lo + p'.
    SmallVector<int64_t> shape(resT.getShape());
    shape[axis] = ShapedType::kDynamic;
    auto slabT = RankedTensorType::get(shape, resT.getElementType());
    SmallVector<Value> dyn;
    for (int64_t i = 0; i < n; ++i)
      if (i == axis)
        dyn.push_back(len);
      else if (resT.isDynamicDim(i))
        dyn.push_back(dimValue(ds[i]));
    Value init = b_.create<tensor::EmptyOp>(loc_, shape, resT.getElementType(), dyn);
    SmallVector<AffineMap> maps{b_.getMultiDimIdentityMap(n)};
    SmallVector<utils::IteratorType> its(n, utils::IteratorType::parallel);
    auto gen = b_.create<linalg::GenericOp>(loc_, TypeRange{slabT}, ValueRange{}, ValueRange{init},
                                            maps, its);
    {
      OpBuilder::InsertionGuard g(b_);
      Block *blk = b_.createBlock(&gen.getRegion(), {}, {resT.getElementType()}, {loc_});
      b_.setInsertionPointToStart(blk);
      for (int64_t i = 0; i < n; ++i) {
        Value iv = b_.create<linalg::IndexOp>(loc_, i);
        if (i == axis)
          iv = b_.create<arith::AddIOp>(loc_, lo, iv);
        f.env[body.args[i].id] = V::scalar(iv);
      }
      ++nest_;
      std::vector<V> ys = region(ifo.regions[0], f, {});
      --nest_;
      b_.create<linalg::YieldOp>(loc_, convert(scalarOf(ys.at(0)).v, resT.getElementType()));
    }
    SmallVector<OpFoldResult> offs, sizes, strides;
    for (int64_t i = 0; i < n; ++i) {
      offs.push_back(i == axis ? OpFoldResult(lo) : OpFoldResult(b_.getIndexAttr(0)));
      sizes.push_back(i == axis ? OpFoldResult(len)
                      : resT.isDynamicDim(i) ? OpFoldResult(dimValue(ds[i]))
                                             : OpFoldResult(b_.getIndexAttr(resT.getDimSize(i))));
      strides.push_back(b_.getIndexAttr(1));
    }
    return V::tensor(
        b_.create<tensor::InsertSliceOp>(loc_, gen.getResult(0), base.v, offs, sizes, strides));
  }

  /// Ops that only name a tensor of the model (no IR): evaluated ahead so
  /// that the tensors they name can become inputs of a linalg.generic.
  static bool namesTensor(const ir::Op &op) {
    return op.kind == ir::kind::Member || op.kind == ir::kind::StateRead ||
           op.kind == ir::kind::Sub || op.kind == ir::kind::Self;
  }

  /// Evaluates ahead the ops of `r` that name a model tensor, into `local`
  /// and the frame (a later naming op reads them: `norm.weight` is `member`
  /// of `sub norm`), with the element picks they go through
  /// (`layers[0].total`: the sub, its constant index, the element, the
  /// state read). An op that needs a value of the body (an element picked
  /// by a loop index) is left to the body.
  void nameTensorsAhead(const ir::Region &r, Frame &f, std::unordered_map<ir::ValueId, V> &local) {
    std::unordered_map<ir::ValueId, const ir::Op *> consts;
    for (const ir::Op &o : r.ops)
      if (o.kind == ir::kind::Const && o.results.size() == 1)
        consts[o.results[0].id] = &o;
    auto define = [&](const ir::Op &o) {
      std::vector<V> rs = operation(o, f);
      if (!rs.empty()) {
        local[o.results[0].id] = rs[0];
        f.env[o.results[0].id] = rs[0];
      }
    };
    for (const ir::Op &o : r.ops) {
      bool pick = o.kind == ir::kind::Index && !o.operands.empty() && f.env.count(o.operands[0]) &&
                  f.env[o.operands[0]].k == V::Blocks;
      if (!namesTensor(o) && !pick)
        continue;
      for (ir::ValueId id : o.operands)
        if (!f.env.count(id))
          if (auto c = consts.find(id); c != consts.end())
            define(*c->second);
      if (llvm::all_of(o.operands, [&](ir::ValueId id) { return f.env.count(id) != 0; }))
        define(o);
    }
  }

  /// The size of loop `pos` of a comprehension (its domains, then its
  /// reduction's).
  static const DimV &loopSize(unsigned pos, const std::vector<DimV> &ds,
                              const std::vector<DimV> &rds) {
    return pos < ds.size() ? ds[pos] : rds[pos - ds.size()];
  }

  /// Whether axis `k` of tensor `t` is known to have size `d`: both
  /// constants and equal, or `d` is `tensor.dim t, k`.
  static bool sameSize(const DimV &d, Value t, int64_t k) {
    auto tt = cast<RankedTensorType>(t.getType());
    if (!tt.isDynamicDim(k))
      return d.c && *d.c == tt.getDimSize(k);
    if (d.c || !d.v)
      return false;
    auto dimOp = d.v.getDefiningOp<tensor::DimOp>();
    if (!dimOp || dimOp.getSource() != t)
      return false;
    std::optional<int64_t> idx = dimOp.getConstantIndex();
    return idx && *idx == k;
  }

  /// A comprehension as one linalg.generic whose reads at plain loop
  /// indices are inputs with indexing maps: `[b, o] sum(i) x[b, i] *
  /// w[o, i]` is a contraction (parallel b, o; reduction i), elementwise
  /// maps are identity or broadcast maps. Other reads stay tensor.extract
  /// at linalg.index positions. Returns nothing when the body does not fit.
  std::optional<V> structured(const ir::Op &op, Frame &f, const std::vector<DimV> &ds,
                              RankedTensorType resT, ArrayRef<Value> dyn) {
    const ir::Region &body = op.regions[0];
    int64_t n = ds.size();
    std::map<ir::ValueId, int64_t> loopDim;
    for (int64_t i = 0; i < n; ++i)
      loopDim[body.args[i].id] = i;
    // A contraction: the body is exactly `reduce(builtin) ; yield` over
    // dense indices without a filter.
    const ir::Region *inner = &body;
    const ir::Op *red = nullptr;
    std::string redName;
    std::vector<DimV> rds;
    if (body.ops.size() == 2 && body.ops[0].kind == ir::kind::Reduce &&
        body.ops[1].operands.size() == 1 && body.ops[1].operands[0] == body.ops[0].results[0].id) {
      red = &body.ops[0];
      const json &spec = red->attrs["reducer"];
      if (!spec.is_string() || red->attrs.value("filter", false))
        return std::nullopt;
      redName = spec.get<std::string>();
      const ir::BuiltinReducer *br = ir::findBuiltinReducer(redName);
      if (br && br->dividesByCount)
        return std::nullopt;
      // Unsigned max/min: the general path says it is not supported.
      if (isUnsigned(red->results[0].type, f) && signedOnly(br))
        return std::nullopt;
      for (const json &ix : red->attrs["indices"])
        if (!ix.contains("domain"))
          return std::nullopt;
      rds = domains(red->attrs["indices"], f);
      inner = &red->regions[0];
      for (size_t i = 0; i < inner->args.size(); ++i)
        loopDim[inner->args[i].id] = n + i;
    }
    for (const ir::Op &o : inner->ops)
      if (!o.regions.empty())
        return std::nullopt;
    // Evaluate tensor-naming ops ahead; collect the reads at loop indices.
    std::unordered_map<ir::ValueId, V> local;
    nameTensorsAhead(*inner, f, local);
    int64_t nloops = n + (int64_t)rds.size();
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    std::vector<const ir::Op *> reads;
    for (const ir::Op &o : inner->ops) {
      if (o.kind != ir::kind::Index)
        continue;
      ir::ValueId baseId = o.operands[0];
      V base = local.count(baseId) ? local[baseId] : (f.env.count(baseId) ? f.env[baseId] : V());
      if (base.k != V::Tensor)
        continue;
      SmallVector<AffineExpr> exprs;
      bool plain = true;
      for (size_t k = 1; k < o.operands.size() && plain; ++k) {
        auto it = loopDim.find(o.operands[k]);
        plain = it != loopDim.end();
        if (plain)
          exprs.push_back(b_.getAffineDimExpr(it->second));
      }
      if (!plain || (int64_t)exprs.size() != cast<RankedTensorType>(base.v.getType()).getRank())
        continue;
      // linalg sizes its loops from its operands, so an input larger than
      // the loop's domain (learned positions wpe[s, e] with s: S <= MaxPos)
      // is cut to the domain: read through a slice [0, domain) per axis.
      Value in = base.v;
      auto inT = cast<RankedTensorType>(in.getType());
      bool cut = false, tooSmall = false;
      SmallVector<OpFoldResult> offs, sizes, strides;
      for (int64_t k = 0; k < inT.getRank(); ++k) {
        const DimV &d = loopSize(llvm::cast<AffineDimExpr>(exprs[k]).getPosition(), ds, rds);
        offs.push_back(b_.getIndexAttr(0));
        strides.push_back(b_.getIndexAttr(1));
        sizes.push_back(d.c ? OpFoldResult(b_.getIndexAttr(*d.c)) : OpFoldResult(d.v));
        if (sameSize(d, in, k))
          continue;
        if (d.c && !inT.isDynamicDim(k) && *d.c > inT.getDimSize(k))
          tooSmall = true;
        cut = true;
      }
      if (tooSmall)
        continue; // read element by element (and bounds-checked) instead
      if (cut)
        in = b_.create<tensor::ExtractSliceOp>(loc_, in, offs, sizes, strides);
      inputs.push_back(in);
      maps.push_back(AffineMap::get(nloops, 0, exprs, &ctx_));
      reads.push_back(&o);
    }
    if (!red && reads.empty())
      return std::nullopt;
    // linalg sizes a loop from an operand that it indexes: a reduction
    // dimension that no read covers (`sum(k: S) 1.0`) leaves the loop
    // unsized, so such a reduction runs as an explicit loop instead.
    for (int64_t d = n; d < nloops; ++d)
      if (llvm::none_of(maps, [&](AffineMap m) { return m.isFunctionOfDim(d); }))
        return std::nullopt;
    Type et = resT.getElementType();
    // A half sum accumulates in an f32 tensor, rounded to et after.
    Type at = et;
    if (red)
      if (const ir::BuiltinReducer *br = ir::findBuiltinReducer(redName))
        at = accumulatorType(onBool(*br, et), et);
    auto accT = RankedTensorType::get(resT.getShape(), at);
    Value init = b_.create<tensor::EmptyOp>(loc_, resT.getShape(), at, dyn);
    Reducer r;
    if (red) {
      r = builtinReducer(redName, et);
      init = b_.create<linalg::FillOp>(loc_, r.identity().v, init).getResult(0);
    }
    SmallVector<AffineExpr> outExprs;
    for (int64_t i = 0; i < n; ++i)
      outExprs.push_back(b_.getAffineDimExpr(i));
    maps.push_back(AffineMap::get(nloops, 0, outExprs, &ctx_));
    SmallVector<utils::IteratorType> its(n, utils::IteratorType::parallel);
    its.append(rds.size(), utils::IteratorType::reduction);
    auto gen = b_.create<linalg::GenericOp>(loc_, TypeRange{accT}, inputs, ValueRange{init}, maps, its);
    OpBuilder::InsertionGuard g(b_);
    Block *blk = genericBody(gen, inputs, at);
    for (size_t i = 0; i < reads.size(); ++i)
      preset_[reads[i]] = V::scalar(blk->getArgument(i));
    std::vector<V> args;
    for (int64_t i = 0; i < n; ++i)
      args.push_back(V::scalar(b_.create<linalg::IndexOp>(loc_, i)));
    ++nest_;
    Value y;
    if (red) {
      std::vector<V> rargs;
      for (size_t i = 0; i < rds.size(); ++i)
        rargs.push_back(V::scalar(b_.create<linalg::IndexOp>(loc_, n + i)));
      for (int64_t i = 0; i < n; ++i)
        f.env[body.args[i].id] = args[i];
      std::vector<V> msg = region(*inner, f, rargs);
      y = r.combine(V::scalar(blk->getArgument(reads.size())), r.lift(msg)).v;
    } else {
      y = scalarOf(region(body, f, args).at(0)).v;
    }
    --nest_;
    for (const ir::Op *o : reads)
      preset_.erase(o);
    b_.create<linalg::YieldOp>(loc_, convert(y, at));
    b_.setInsertionPointAfter(gen);
    if (at == et)
      return V::tensor(gen.getResult(0));
    // Round the accumulators once.
    SmallVector<AffineMap> idm(2, b_.getMultiDimIdentityMap(n));
    auto round = b_.create<linalg::GenericOp>(
        loc_, TypeRange{resT}, ValueRange{gen.getResult(0)},
        ValueRange{b_.create<tensor::EmptyOp>(loc_, resT.getShape(), et, dyn)}, idm,
        SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel));
    Block *rb = b_.createBlock(&round.getRegion(), {}, {at, et}, {loc_, loc_});
    b_.setInsertionPointToStart(rb);
    b_.create<linalg::YieldOp>(loc_, convert(rb->getArgument(0), et));
    return V::tensor(round.getResult(0));
  }

  //===--------------------------------------------------------------===//
  // Reductions
  //===--------------------------------------------------------------===//

  /// A reducer as four callbacks on flattened states.
  struct Reducer {
    std::function<V()> identity;
    std::function<V(const std::vector<V> &)> lift;
    std::function<V(const V &, const V &)> combine;
    std::function<V(const V &)> finalize;
  };

  static void leaves(const V &v, std::vector<Value> &out) {
    if (v.k == V::Scalar || v.k == V::Tensor)
      out.push_back(v.v);
    else if (v.k == V::Agg)
      for (const V &e : v.elems)
        leaves(e, out);
  }

  static V rebuild(const V &templ, ValueRange vals, size_t &pos) {
    if (templ.k == V::Scalar)
      return V::scalar(vals[pos++]);
    if (templ.k == V::Tensor)
      return V::tensor(vals[pos++]);
    V a = templ;
    for (V &e : a.elems)
      e = rebuild(e, vals, pos);
    return a;
  }

  /// The leaves of `upd`, a fold's next state, as the loop carrying `iters`
  /// (typed as `initLeaves`) yields them. A tensor state (online softmax's
  /// acc) is copied into the carried tensor: the loop then yields a value
  /// equivalent to its iter_arg, and bufferization updates one buffer in
  /// place instead of allocating (and freeing) a new one every step.
  SmallVector<Value> carried(const V &upd, const std::vector<Value> &initLeaves, ValueRange iters) {
    std::vector<Value> updLeaves;
    leaves(upd, updLeaves);
    SmallVector<Value> out;
    for (size_t k = 0; k < updLeaves.size(); ++k) {
      Value u = convert(updLeaves[k], initLeaves[k].getType());
      if (auto tt = dyn_cast<RankedTensorType>(u.getType()); tt && tt.hasStaticShape())
        u = b_.create<linalg::CopyOp>(loc_, u, iters[k]).getResult(0);
      out.push_back(u);
    }
    return out;
  }

  /// A built-in reducer's identities and combines are signed: a sum or a
  /// product wraps the same in either reading, the others (and mean's
  /// division) would not. An unknown name counts as signed.
  static bool signedOnly(const ir::BuiltinReducer *r) {
    return !r || r->dividesByCount ||
           (r->combine != ir::ReduceCombine::Add && r->combine != ir::ReduceCombine::Mul);
  }

  /// A built-in reducer's identity in `t` (signed for integers: max's is the
  /// signed minimum of the width).
  Value identityConstant(ir::ReduceIdentity id, Type t) {
    switch (id) {
    case ir::ReduceIdentity::Zero:
    case ir::ReduceIdentity::False: return constant(t, 0);
    case ir::ReduceIdentity::One:
    case ir::ReduceIdentity::True: return constant(t, 1);
    case ir::ReduceIdentity::Lowest:
    case ir::ReduceIdentity::Highest: break;
    }
    bool lowest = id == ir::ReduceIdentity::Lowest;
    if (isFloat(t))
      return infinity(t, lowest);
    int64_t w = t.isIndex() ? 64 : t.getIntOrFloatBitWidth();
    return b_.create<arith::ConstantOp>(
        loc_, t, b_.getIntegerAttr(t, lowest ? APInt::getSignedMinValue(w) : APInt::getSignedMaxValue(w)));
  }

  /// Built-in reducer `name` over `t`; for mean, (sum, count) finalized by
  /// the division.
  Reducer builtinReducer(const std::string &name, Type t) {
    const ir::BuiltinReducer *br = ir::findBuiltinReducer(name);
    if (!br)
      fail(fmt::format("{}: unknown reducer '{}'", where_, name));
    if (!br->dividesByCount)
      return combiningReducer(*br, t);
    // (sum, count): the count is of the messages combined, so a filter
    // (`mean(k: N where k <= i)`) or a CSR row counts what it keeps.
    Reducer r;
    Reducer sum = combiningReducer(*br, t);
    Type i64 = b_.getI64Type();
    auto pair = [](V s, V n) {
      V a;
      a.k = V::Agg;
      a.elems = {s, n};
      a.names = {"sum", "count"};
      return a;
    };
    r.identity = [=, this] { return pair(sum.identity(), V::scalar(constant(i64, 0))); };
    r.lift = [=, this](const std::vector<V> &m) {
      return pair(sum.lift(m), V::scalar(constant(i64, 1)));
    };
    r.combine = [=, this](const V &a, const V &c) {
      return pair(sum.combine(a.elems[0], c.elems[0]),
                  V::scalar(b_.create<arith::AddIOp>(loc_, a.elems[1].v, c.elems[1].v)));
    };
    // An empty mean is 0 (its sum over max(count, 1)), for every dtype:
    // PyG's and DGL's mean aggregation of an isolated node.
    Type at = accumulatorType(*br, t);
    r.finalize = [=, this](const V &s) {
      Value n = b_.create<arith::MaxSIOp>(loc_, s.elems[1].v, constant(i64, 1));
      return V::scalar(convert(binary("div", s.elems[0].v, convert(n, at), at), t));
    };
    return r;
  }

  /// A built-in reducer's identity and combine over `t` with no finalize
  /// (for mean, its sum).
  /// max and min over bool are any and all (true > false): i1 is no
  /// signed integer here, where maxsi would order true (-1) below false.
  static const ir::BuiltinReducer &onBool(const ir::BuiltinReducer &br, Type t) {
    if (!t.isInteger(1))
      return br;
    if (br.combine == ir::ReduceCombine::Max)
      return *ir::findBuiltinReducer("any");
    if (br.combine == ir::ReduceCombine::Min)
      return *ir::findBuiltinReducer("all");
    return br;
  }

  /// The type a built-in reducer accumulates `t` in: a sum (or mean) of
  /// f16 or bf16 terms accumulates in f32 and is rounded to `t` once, at
  /// the end (docs/language.md, "Reductions"; the interpreter does the
  /// same); every other reduction accumulates in `t`.
  Type accumulatorType(const ir::BuiltinReducer &br, Type t) {
    if (br.combine == ir::ReduceCombine::Add && (t.isF16() || t.isBF16()))
      return b_.getF32Type();
    return t;
  }

  /// The state is the accumulator (accumulatorType); finalize rounds it
  /// to `t`.
  Reducer combiningReducer(const ir::BuiltinReducer &reducer, Type t) {
    const ir::BuiltinReducer &br = onBool(reducer, t);
    Reducer r;
    std::string comb(ir::combineOpName(br.combine));
    ir::ReduceIdentity id = br.identity;
    Type at = accumulatorType(br, t);
    r.identity = [=, this] { return V::scalar(identityConstant(id, at)); };
    r.lift = [=, this](const std::vector<V> &m) { return V::scalar(convert(scalarOf(m.at(0)).v, at)); };
    // Sums may be reassociated: that is what lets LLVM vectorize a dot product.
    r.combine = [=, this](const V &a, const V &c) {
      return V::scalar(binary(comb, a.v, c.v, at, /*fast=*/comb == "add" || comb == "mul"));
    };
    r.finalize = [=, this](const V &s) { return at == t ? s : V::scalar(convert(s.v, t)); };
    return r;
  }

  Reducer userReducer(const json &spec, Frame &f) {
    std::string name = spec["name"];
    const plan::Function *parts[4];
    const char *names[4] = {"identity", "lift", "combine", "finalize"};
    for (int i = 0; i < 4; ++i) {
      auto it = fns_.find(name + "." + names[i]);
      if (it == fns_.end())
        fail(fmt::format("{}: reducer '{}' has no '{}'", where_, name, names[i]));
      parts[i] = it->second;
    }
    // The reducer's generics, positionally from the use.
    Frame rf;
    const json &gens = parts[0]->generics;
    const json &vals = spec.value("generics", json::array());
    for (size_t i = 0; i < gens.size() && i < vals.size(); ++i) {
      if (gens[i].value("kind", "") == "dtype")
        rf.dtypes[gens[i]["var"]] = dtypeName(vals[i], f);
      else
        rf.dims[gens[i]["sym"]] = dim(vals[i], f);
    }
    Reducer r;
    auto one = [this](std::vector<V> v) {
      if (v.size() != 1)
        fail(fmt::format("{}: a reducer part must return one value", where_));
      return v[0];
    };
    r.identity = [=, this] { return one(call(*parts[0], rf, {})); };
    r.lift = [=, this](const std::vector<V> &m) {
      // The plan's reduce body yields one value per lift parameter.
      if (m.size() != parts[1]->body.args.size())
        fail(fmt::format("{}: reducer '{}': the body yields {} value{}, its lift takes {}", where_,
                         name, m.size(), m.size() == 1 ? "" : "s", parts[1]->body.args.size()));
      return one(call(*parts[1], rf, m));
    };
    r.combine = [=, this](const V &a, const V &c) { return one(call(*parts[2], rf, {a, c})); };
    r.finalize = [=, this](const V &s) { return one(call(*parts[3], rf, {s})); };
    return r;
  }

  /// `j <= X` / `j < X` with X independent of j: the filter of a
  /// triangular domain, turned into the loop's upper bound.
  std::optional<Value> triangularBound(const ir::Op &op, Frame &f, const DimV &domain) {
    if (op.regions.size() < 2 || op.regions[1].args.size() != 1)
      return std::nullopt;
    const ir::Region &fr = op.regions[1];
    ir::ValueId j = fr.args[0].id;
    if (fr.ops.size() < 2 || fr.ops.back().kind != ir::kind::Yield)
      return std::nullopt;
    const ir::Op &cmp = fr.ops[fr.ops.size() - 2];
    if (cmp.kind != ir::kind::Cmp || cmp.operands.size() != 2 || cmp.operands[0] != j ||
        fr.ops.back().operands.size() != 1 || fr.ops.back().operands[0] != cmp.results[0].id)
      return std::nullopt;
    std::string pred = cmp.attrs["pred"];
    if (pred != "le" && pred != "lt")
      return std::nullopt;
    for (size_t i = 0; i + 2 < fr.ops.size(); ++i) {
      if (!fr.ops[i].regions.empty())
        return std::nullopt;
      for (ir::ValueId id : fr.ops[i].operands)
        if (id == j)
          return std::nullopt;
    }
    // Evaluate the bound's ops before the loop.
    for (size_t i = 0; i + 2 < fr.ops.size(); ++i) {
      std::vector<V> rs = operation(fr.ops[i], f);
      for (size_t k = 0; k < fr.ops[i].results.size() && k < rs.size(); ++k)
        f.env[fr.ops[i].results[k].id] = rs[k];
    }
    Value x = convert(scalarOf(get(f, cmp.operands[1])).v, b_.getIndexType());
    if (pred == "le")
      x = b_.create<arith::AddIOp>(loc_, x, cIndex(1));
    Value hi = b_.create<arith::MinSIOp>(loc_, x, dimValue(domain));
    return b_.create<arith::MaxSIOp>(loc_, hi, cIndex(0)).getResult();
  }

  //===--------------------------------------------------------------===//
  // Relation reductions as gf.apply
  //===--------------------------------------------------------------===//

  /// The module's `gf.reducer` for built-in reducer `name` over `t` (a
  /// scalar, or a tensor<F x T> feature row), created on first use:
  /// `sum_f32`, `max_f32x64`, ...
  FlatSymbolRefAttr gfReducer(const ir::BuiltinReducer &reducer, Type t) {
    Type et = getElementTypeOrSelf(t);
    const ir::BuiltinReducer &br = onBool(reducer, et);
    std::string sym;
    llvm::raw_string_ostream os(sym);
    os << br.name << "_" << et;
    if (auto tt = dyn_cast<RankedTensorType>(t))
      os << "x" << tt.getDimSize(0);
    auto module = b_.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
    if (module.lookupSymbol(sym))
      return FlatSymbolRefAttr::get(&ctx_, sym);
    OpBuilder mb(&ctx_);
    mb.setInsertionPointToStart(module.getBody());
    ArrayAttr types = mb.getArrayAttr({TypeAttr::get(t)});
    auto red = mb.create<gf::ReducerOp>(loc_, sym, types, types, types, /*associative=*/true,
                                        /*commutative=*/true, "algebraic");
    auto blockOf = [&](Region &r, unsigned nargs) {
      Block *blk = mb.createBlock(&r, {}, SmallVector<Type>(nargs, t),
                                  SmallVector<Location>(nargs, loc_));
      mb.setInsertionPointToStart(blk);
      return blk;
    };
    TypedAttr id;
    bool zero = br.identity == ir::ReduceIdentity::Zero || br.identity == ir::ReduceIdentity::False;
    bool one = br.identity == ir::ReduceIdentity::One || br.identity == ir::ReduceIdentity::True;
    bool lowest = br.identity == ir::ReduceIdentity::Lowest;
    if (auto ft = dyn_cast<FloatType>(et)) {
      const auto &sem = ft.getFloatSemantics();
      APFloat v = zero  ? APFloat::getZero(sem)
                  : one ? APFloat::getOne(sem)
                        : APFloat::getInf(sem, /*Negative=*/lowest);
      id = mb.getFloatAttr(et, v);
    } else {
      unsigned w = et.getIntOrFloatBitWidth();
      APInt v = zero     ? APInt(w, 0)
                : one    ? APInt(w, 1)
                : lowest ? APInt::getSignedMinValue(w)
                         : APInt::getSignedMaxValue(w);
      id = mb.getIntegerAttr(et, v);
    }
    if (auto tt = dyn_cast<RankedTensorType>(t))
      id = DenseElementsAttr::get(tt, id);
    blockOf(red.getIdentity(), 0);
    mb.create<gf::ReducerYieldOp>(loc_, ValueRange{mb.create<arith::ConstantOp>(loc_, t, id)});
    Block *lift = blockOf(red.getLift(), 1);
    mb.create<gf::ReducerYieldOp>(loc_, ValueRange{lift->getArgument(0)});
    Block *comb = blockOf(red.getCombine(), 2);
    Value a = comb->getArgument(0), c = comb->getArgument(1), r;
    // Sums and products may be reassociated (and fused with the message's
    // multiply): the order of a row's edges is not part of the result.
    auto fm = reassoc();
    bool fl = isa<FloatType>(et);
    switch (br.combine) {
    case ir::ReduceCombine::Add:
      r = fl ? mb.create<arith::AddFOp>(loc_, a, c, fm).getResult()
             : mb.create<arith::AddIOp>(loc_, a, c).getResult();
      break;
    case ir::ReduceCombine::Mul:
      r = fl ? mb.create<arith::MulFOp>(loc_, a, c, fm).getResult()
             : mb.create<arith::MulIOp>(loc_, a, c).getResult();
      break;
    case ir::ReduceCombine::Max:
      r = fl ? mb.create<arith::MaximumFOp>(loc_, a, c).getResult()
             : mb.create<arith::MaxSIOp>(loc_, a, c).getResult();
      break;
    case ir::ReduceCombine::Min:
      r = fl ? mb.create<arith::MinimumFOp>(loc_, a, c).getResult()
             : mb.create<arith::MinSIOp>(loc_, a, c).getResult();
      break;
    case ir::ReduceCombine::Or:
      r = mb.create<arith::OrIOp>(loc_, a, c).getResult();
      break;
    case ir::ReduceCombine::And:
      r = mb.create<arith::AndIOp>(loc_, a, c).getResult();
      break;
    }
    mb.create<gf::ReducerYieldOp>(loc_, ValueRange{r});
    Block *fin = blockOf(red.getFinalize(), 1);
    mb.create<gf::ReducerYieldOp>(loc_, ValueRange{fin->getArgument(0)});
    return FlatSymbolRefAttr::get(&ctx_, sym);
  }

  /// `[dst: M] red(src, edge: g[dst]) body` or `[dst: M, f: F] ...` (F
  /// static, a feature axis) with a built-in reducer (sum, max, min, prod)
  /// and no filter, as `gf.relation` + `gf.apply`. Reads `x[src]`,
  /// `x[src, f]`, `w[edge]`, `y[dst]`, `y[dst, f]` become the apply's inputs
  /// with roles src / edge / dst (a read with f a tensor<F> row); the rest
  /// of the body is the edge region, rebuilt elementwise on rows when the
  /// message depends on f. Returns nothing (the caller then lowers the
  /// reduction to row loops) for anything else: user reducers, `mean`,
  /// filters, other index expressions (x[col_idx-derived], f used in
  /// arithmetic), nested comprehensions/reductions, values captured from
  /// outside the body, or a destination axis that is not the relation's.
  std::optional<V> relationApply(const ir::Op &op, Frame &f, const std::vector<DimV> &ds,
                                 RankedTensorType resT) {
    const ir::Region &body = op.regions[0];
    int64_t n = ds.size();
    if ((n != 1 && n != 2) || body.args.size() != (size_t)n || body.ops.size() != 2 ||
        body.ops[0].kind != ir::kind::Reduce || body.ops[1].operands.size() != 1 ||
        body.ops[1].operands[0] != body.ops[0].results[0].id)
      return std::nullopt;
    const ir::Op &red = body.ops[0];
    const json &spec = red.attrs["reducer"];
    const json &indices = red.attrs["indices"];
    if (indices.size() != 1 || !indices[0].contains("relation") || !spec.is_string() ||
        red.attrs.value("filter", false) || red.regions.empty())
      return std::nullopt;
    const ir::BuiltinReducer *br = ir::findBuiltinReducer(spec.get<std::string>());
    if (!br || br->dividesByCount || br->combine == ir::ReduceCombine::Or ||
        br->combine == ir::ReduceCombine::And)
      return std::nullopt;
    Type et = resT.getElementType();
    if (!isa<FloatType, IntegerType>(et) || accumulatorType(*br, et) != et)
      return std::nullopt; // a half sum accumulates in f32: the loop form
    if (red.operands.at(indices[0]["target"].get<size_t>()) != body.args[0].id)
      return std::nullopt;
    V rel = get(f, red.operands.at(indices[0]["relation"].get<size_t>()));
    if (rel.k != V::Rel)
      return std::nullopt;
    const DimV &m = ds[0];
    if (!((m.c && rel.numDst.c && *m.c == *rel.numDst.c) || (!m.c && !rel.numDst.c && m.v == rel.numDst.v)))
      return std::nullopt;
    int64_t F = 0;
    if (n == 2) {
      if (!ds[1].c)
        return std::nullopt;
      F = *ds[1].c;
    }
    const ir::Region &inner = red.regions[0];
    if (inner.args.empty() || inner.args.size() > 2)
      return std::nullopt;
    ir::ValueId srcId = inner.args[0].id, dstId = body.args[0].id;
    std::optional<ir::ValueId> edgeId, featId;
    if (inner.args.size() > 1)
      edgeId = inner.args[1].id;
    if (n == 2)
      featId = body.args[1].id;
    auto isCoord = [&](ir::ValueId id) {
      return id == srcId || id == dstId || id == edgeId || id == featId;
    };
    for (const ir::Op &o : inner.ops)
      if (!o.regions.empty())
        return std::nullopt;
    std::unordered_map<ir::ValueId, V> local;
    nameTensorsAhead(inner, f, local);
    // The inputs: one per (tensor, role).
    struct Input {
      Value t;
      std::string role;
      bool row;
    };
    std::vector<Input> ins;
    std::vector<std::pair<const ir::Op *, size_t>> reads;
    for (const ir::Op &o : inner.ops) {
      if (o.kind != ir::kind::Index) {
        for (ir::ValueId id : o.operands)
          if (isCoord(id))
            return std::nullopt;
        continue;
      }
      ir::ValueId baseId = o.operands[0];
      V base = local.count(baseId) ? local[baseId] : (f.env.count(baseId) ? f.env[baseId] : V());
      if (base.k != V::Tensor || o.operands.size() < 2)
        return std::nullopt;
      auto bt = cast<RankedTensorType>(base.v.getType());
      ir::ValueId i0 = o.operands[1];
      std::string role = i0 == srcId ? "src" : i0 == edgeId ? "edge" : i0 == dstId ? "dst" : "";
      if (role.empty())
        return std::nullopt;
      bool row = o.operands.size() == 3 && featId && o.operands[2] == *featId && bt.getRank() == 2 &&
                 bt.getDimSize(1) == F;
      if (!row && (o.operands.size() != 2 || bt.getRank() != 1))
        return std::nullopt;
      size_t k = 0;
      while (k < ins.size() && !(ins[k].t == base.v && ins[k].role == role))
        ++k;
      if (k == ins.size())
        ins.push_back({base.v, role, row});
      else if (ins[k].row != row)
        return std::nullopt;
      reads.push_back({&o, k});
    }
    if (ins.empty())
      return std::nullopt;
    // A source (destination) read covers the relation's num_src (num_dst)
    // entities: a tensor with more rows than that is read through its first
    // ones, exactly what `x[src]` can reach; one with fewer leaves reads
    // that the general path bounds-checks.
    for (Input &in : ins) {
      std::optional<int64_t> need = in.role == "src"   ? rel.numSrc.c
                                    : in.role == "dst" ? rel.numDst.c
                                                       : std::nullopt;
      auto tt = cast<RankedTensorType>(in.t.getType());
      if (!need || tt.isDynamicDim(0) || tt.getDimSize(0) == *need)
        continue;
      if (tt.getDimSize(0) < *need)
        return std::nullopt;
      SmallVector<int64_t> sizes(tt.getShape());
      sizes[0] = *need;
      SmallVector<int64_t> offsets(tt.getRank(), 0), strides(tt.getRank(), 1);
      in.t = b_.create<tensor::ExtractSliceOp>(loc_, RankedTensorType::get(sizes, tt.getElementType()), in.t,
                                               ValueRange{}, ValueRange{}, ValueRange{}, offsets, sizes,
                                               strides);
    }

    Type msgT = n == 2 ? Type(RankedTensorType::get({F}, et)) : et;
    auto relOp = b_.create<gf::RelationOp>(
        loc_, gf::RelationType::get(&ctx_), ValueRange{rel.rowPtr, rel.colIdx},
        rel.relName.empty() ? "relation" : rel.relName, /*version=*/0,
        rel.numSrc.c ? *rel.numSrc.c : -1, rel.numDst.c ? *rel.numDst.c : -1,
        /*degree_min=*/IntegerAttr(), /*degree_max=*/IntegerAttr(), "materialized", "external",
        "frozen", DenseI64ArrayAttr(), IntegerAttr(), StringAttr(), IntegerAttr(), FloatAttr(),
        IntegerAttr());
    SmallVector<Value> inputs;
    SmallVector<Attribute> roles, names, effects;
    SmallVector<Type> scalarTypes, rowTypes;
    SmallVector<Location> locs;
    for (size_t k = 0; k < ins.size(); ++k) {
      inputs.push_back(ins[k].t);
      roles.push_back(b_.getStringAttr(ins[k].role));
      names.push_back(b_.getStringAttr(fmt::format("{}{}", ins[k].role, k)));
      effects.push_back(b_.getStringAttr("read"));
      Type el = cast<RankedTensorType>(ins[k].t.getType()).getElementType();
      scalarTypes.push_back(el);
      rowTypes.push_back(ins[k].row ? Type(RankedTensorType::get({F}, el)) : el);
      locs.push_back(loc_);
    }
    auto apply = b_.create<gf::ApplyOp>(
        loc_, TypeRange{resT}, relOp.getResult(), inputs, b_.getArrayAttr({}),
        ArrayRef<int64_t>{0}, ArrayRef<int64_t>{(int64_t)inputs.size()},
        SmallVector<int64_t>(inputs.size(), 0), b_.getArrayAttr(effects), /*deterministic=*/false,
        b_.getArrayAttr(roles), b_.getArrayAttr(names), 1);
    Region &rg = apply.getBodies()[0];
    auto giveUp = [&]() -> std::optional<V> {
      apply->dropAllReferences();
      apply->erase();
      relOp->erase();
      return std::nullopt;
    };

    // The edge region on scalars, through the ordinary evaluator.
    std::string savedWhere = where_;
    Location savedLoc = loc_;
    {
      OpBuilder::InsertionGuard g(b_);
      Block *blk = b_.createBlock(&rg, {}, scalarTypes, locs);
      for (auto &[o, k] : reads)
        preset_[o] = V::scalar(blk->getArgument(k));
      ++nest_;
      bool ok = true;
      try {
        std::vector<V> msg = region(inner, f, std::vector<V>(inner.args.size()));
        b_.create<gf::YieldOp>(loc_, ValueRange{convert(scalarOf(msg.at(0)).v, et)});
      } catch (const ImportError &) {
        ok = false;
      }
      --nest_;
      where_ = savedWhere;
      loc_ = savedLoc;
      for (auto &[o, k] : reads)
        preset_.erase(o);
      if (!ok)
        return giveUp();
    }
    // With a feature axis: the same ops on tensor<F> rows wherever an
    // operand depends on f (uniform operands are splat).
    if (n == 2) {
      Block *blk = &rg.front();
      auto *wide = new Block();
      rg.push_back(wide);
      IRMapping map;
      DenseSet<Value> varying;
      for (size_t k = 0; k < ins.size(); ++k) {
        Value a = wide->addArgument(rowTypes[k], loc_);
        map.map(blk->getArgument(k), a);
        if (ins[k].row)
          varying.insert(a);
      }
      OpBuilder wb = OpBuilder::atBlockEnd(wide);
      auto widen = [&](Value v) -> Value {
        if (varying.count(v))
          return v;
        return wb.create<tensor::SplatOp>(loc_, RankedTensorType::get({F}, v.getType()), v);
      };
      bool ok = true;
      for (Operation &o : *blk) {
        if (isa<gf::YieldOp>(o)) {
          wb.create<gf::YieldOp>(loc_, ValueRange{widen(map.lookupOrDefault(o.getOperand(0)))});
          break;
        }
        bool any = llvm::any_of(o.getOperands(),
                                [&](Value v) { return varying.count(map.lookupOrDefault(v)) > 0; });
        if (!any) {
          wb.clone(o, map);
          continue;
        }
        if (o.getNumRegions() || o.getNumResults() != 1 ||
            !isa<arith::ArithDialect, math::MathDialect>(o.getDialect())) {
          ok = false;
          break;
        }
        SmallVector<Value> operands;
        for (Value v : o.getOperands())
          operands.push_back(widen(map.lookupOrDefault(v)));
        OperationState st(o.getLoc(), o.getName());
        st.addOperands(operands);
        st.addTypes(RankedTensorType::get({F}, o.getResult(0).getType()));
        st.addAttributes(o.getAttrs());
        Operation *w = wb.create(st);
        map.map(o.getResult(0), w->getResult(0));
        varying.insert(w->getResult(0));
      }
      blk->dropAllDefinedValueUses();
      blk->erase();
      if (!ok)
        return giveUp();
    }
    // The region must not capture values from outside (it is outlined into
    // a kernel function later).
    bool captured = false;
    rg.walk([&](Operation *o) {
      for (Value v : o->getOperands())
        if (!rg.isAncestor(v.getParentRegion()))
          captured = true;
    });
    if (captured)
      return giveUp();
    apply.setReducersAttr(b_.getArrayAttr({gfReducer(*br, msgT)}));
    return V::tensor(apply.getResult(0));
  }

  std::vector<V> reduce(const ir::Op &op, Frame &f) { return reduce(op, f, nullptr); }

  //===--------------------------------------------------------------===//
  // Split folds (flash-decoding)
  //===--------------------------------------------------------------===//

  /// A fold split over chunks of its axis: `op` (a reduction in a
  /// comprehension's body) folded chunk by chunk into `partials` (one tensor
  /// per leaf of the reducer's state, indexed [element..., chunk, leaf...]),
  /// then combined in chunk order by each element.
  struct SplitFold {
    const ir::Op *op = nullptr;
    Reducer red;
    V init; // the identity, for the leaves' types
    int64_t chunks = 0;
    std::vector<Value> partials;
  };
  /// The range of the axis one partial fold covers.
  struct ChunkRange {
    Value chunk, size;
  };

  /// Whether the reducer a reduction names is a user reducer declared
  /// associative (its combine may regroup: chunks folded apart, then
  /// combined in order).
  bool associativeUserReducer(const json &spec) {
    if (!spec.is_object() || !spec.contains("name"))
      return false;
    auto it = fns_.find(spec["name"].get<std::string>() + ".combine");
    if (it == fns_.end() || !it->second->reducer.is_object())
      return false;
    for (const json &p : it->second->reducer.value("properties", json::array()))
      if (p == "associative")
        return true;
    return false;
  }

  /// With ImportOptions::foldChunks, a comprehension whose elements each
  /// fold a long dense axis with an associative user reducer (attention's
  /// online softmax over the KV cache: few elements, many keys) folds the
  /// axis in chunks, one element loop over [element..., chunk] writing each
  /// chunk's state, before its own element loop combines them in order:
  /// the key axis is split across threads (flash-decoding), not walked by
  /// one thread a head. The ops of the body before the reduction (none of
  /// them with a region) are evaluated by both loops. Returns nothing (the
  /// fold stays whole) for any other form.
  std::optional<SplitFold> splitFold(const ir::Op &comp, Frame &f, const std::vector<DimV> &ds) {
    if (foldChunks < 2)
      return std::nullopt;
    const ir::Region &body = comp.regions[0];
    const ir::Op *red = nullptr;
    for (const ir::Op &o : body.ops) {
      if (o.kind == ir::kind::Reduce) {
        red = &o;
        break;
      }
      if (!o.regions.empty())
        return std::nullopt;
    }
    if (!red || red->results.size() != 1 || !associativeUserReducer(red->attrs["reducer"]))
      return std::nullopt;
    const json &indices = red->attrs["indices"];
    if (indices.size() != 1 || indices[0].contains("relation"))
      return std::nullopt;
    DimV len = dim(indices[0]["domain"], f);
    // Chunks of at least 64 terms, at most foldChunks of them.
    int64_t chunks = foldChunks;
    if (len.c) {
      if (*len.c < 128)
        return std::nullopt;
      chunks = std::clamp<int64_t>((*len.c + 63) / 64, 2, foldChunks);
    }
    SplitFold sf;
    sf.op = red;
    sf.red = userReducer(red->attrs["reducer"], f);
    sf.init = sf.red.identity();
    sf.chunks = chunks;
    std::vector<Value> leafs;
    leaves(sf.init, leafs);
    SmallVector<Value> dyn;
    for (const DimV &d : ds)
      if (!d.c)
        dyn.push_back(d.v);
    for (Value l : leafs) {
      SmallVector<int64_t> shape;
      for (const DimV &d : ds)
        shape.push_back(d.c ? *d.c : ShapedType::kDynamic);
      shape.push_back(chunks);
      Type et = l.getType();
      if (auto tt = dyn_cast<RankedTensorType>(et)) {
        if (!tt.hasStaticShape())
          return std::nullopt;
        llvm::append_range(shape, tt.getShape());
        et = tt.getElementType();
      } else if (!et.isIntOrIndexOrFloat()) {
        return std::nullopt;
      }
      sf.partials.push_back(b_.create<tensor::EmptyOp>(loc_, shape, et, dyn));
    }
    // The chunk size: ceil(len / chunks).
    Value n = dimValue(len);
    Value size = b_.create<arith::DivUIOp>(loc_, b_.create<arith::AddIOp>(loc_, n, cIndex(chunks - 1)),
                                           cIndex(chunks));
    // The partial folds: a loop nest over [element..., chunk].
    std::vector<Value> ivs;
    std::function<ValueRange(size_t, ValueRange)> nest = [&](size_t i, ValueRange accs) -> ValueRange {
      bool chunkLoop = i == ds.size();
      auto loop = b_.create<scf::ForOp>(loc_, cIndex(0), chunkLoop ? cIndex(chunks) : dimValue(ds[i]),
                                        cIndex(1), accs);
      loop->setAttr("linnet.elements", b_.getUnitAttr());
      OpBuilder::InsertionGuard g(b_);
      b_.setInsertionPointToStart(loop.getBody());
      ivs.push_back(loop.getInductionVar());
      ++nest_;
      SmallVector<Value> next;
      if (!chunkLoop) {
        ValueRange r = nest(i + 1, loop.getRegionIterArgs());
        next.assign(r.begin(), r.end());
      } else {
        std::vector<V> args;
        for (size_t k = 0; k < ds.size(); ++k)
          args.push_back(V::scalar(ivs[k]));
        region(body, f, args, red);
        ChunkRange range{ivs.back(), size};
        V state = reduce(*red, f, &range).at(0);
        std::vector<Value> vals;
        leaves(state, vals);
        for (size_t k = 0; k < vals.size(); ++k) {
          Value acc = loop.getRegionIterArgs()[k];
          Value v = convert(vals[k], leafs[k].getType());
          if (auto tt = dyn_cast<RankedTensorType>(v.getType())) {
            SmallVector<OpFoldResult> offs(ivs.begin(), ivs.end()), sizes(ivs.size(), b_.getIndexAttr(1)),
                strides(ivs.size() + tt.getRank(), b_.getIndexAttr(1));
            for (int64_t d : tt.getShape()) {
              offs.push_back(b_.getIndexAttr(0));
              sizes.push_back(b_.getIndexAttr(d));
            }
            next.push_back(b_.create<tensor::InsertSliceOp>(loc_, v, acc, offs, sizes, strides));
          } else {
            next.push_back(b_.create<tensor::InsertOp>(loc_, v, acc, ValueRange(ivs)));
          }
        }
      }
      --nest_;
      ivs.pop_back();
      b_.create<scf::YieldOp>(loc_, next);
      return loop.getResults();
    };
    ValueRange done = nest(0, sf.partials);
    sf.partials.assign(done.begin(), done.end());
    return sf;
  }

  /// One element's result of a split fold: its chunks' states combined in
  /// chunk order, then finalized.
  V combineChunks(const SplitFold &sf, ArrayRef<Value> ivs) {
    std::vector<Value> initLeaves;
    leaves(sf.init, initLeaves);
    auto loop = b_.create<scf::ForOp>(loc_, cIndex(0), cIndex(sf.chunks), cIndex(1), initLeaves);
    {
      OpBuilder::InsertionGuard g(b_);
      b_.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> at(ivs.begin(), ivs.end());
      at.push_back(loop.getInductionVar());
      SmallVector<Value> vals;
      for (Value p : sf.partials) {
        auto pt = cast<RankedTensorType>(p.getType());
        int64_t lead = at.size();
        if (pt.getRank() == lead) {
          vals.push_back(b_.create<tensor::ExtractOp>(loc_, p, at));
          continue;
        }
        auto leafT = RankedTensorType::get(pt.getShape().drop_front(lead), pt.getElementType());
        SmallVector<OpFoldResult> offs(at.begin(), at.end()), sizes(lead, b_.getIndexAttr(1)),
            strides(pt.getRank(), b_.getIndexAttr(1));
        for (int64_t d : leafT.getShape()) {
          offs.push_back(b_.getIndexAttr(0));
          sizes.push_back(b_.getIndexAttr(d));
        }
        vals.push_back(b_.create<tensor::ExtractSliceOp>(loc_, leafT, p, offs, sizes, strides));
      }
      size_t pos = 0;
      V part = rebuild(sf.init, vals, pos);
      pos = 0;
      V acc = rebuild(sf.init, loop.getRegionIterArgs(), pos);
      b_.create<scf::YieldOp>(loc_, carried(sf.red.combine(acc, part), initLeaves, loop.getRegionIterArgs()));
    }
    size_t pos = 0;
    return sf.red.finalize(rebuild(sf.init, loop.getResults(), pos));
  }

  /// A reduction; with `range`, only that chunk of its (one, dense) axis,
  /// and the reducer's state is returned unfinalized.
  std::vector<V> reduce(const ir::Op &op, Frame &f, const ChunkRange *range) {
    const json &spec = op.attrs["reducer"];
    if (!spec.is_string() && !(spec.is_object() && spec.contains("name")))
      fail(fmt::format("{}: the reduction's reducer was not resolved (its generics could not be "
                       "inferred; write them)",
                       where_));
    const json &indices = op.attrs["indices"];
    bool filter = op.attrs.value("filter", false);
    Type resultT;
    const json &rt = op.results[0].type;
    std::string rkind = rt.value("kind", "");
    if (rkind == "scalar" || rkind == "tensor")
      resultT = type(rt, f);
    std::string builtinName = spec.is_string() ? spec.get<std::string>() : "";
    if (!builtinName.empty() && (!resultT || !isa<IntegerType, IndexType, FloatType>(resultT)))
      fail(fmt::format("{}: a built-in '{}' reduction must produce a scalar", where_, builtinName));
    // A mean over dense domains without a filter divides by the domains'
    // product (no count carried); otherwise it counts what it combines.
    // The built-in reducers' identities and combines are signed: a sum or a
    // product wraps the same in either reading, the others would not.
    const ir::BuiltinReducer *builtin = ir::findBuiltinReducer(builtinName);
    if (!builtinName.empty() && signedOnly(builtin) && isUnsigned(rt, f))
      fail(fmt::format("{}: a '{}' reduction over an unsigned integer type is not supported by "
                       "the CPU backend yet (cast the values to a signed type first)",
                       where_, builtinName));
    bool denseMean = builtin && builtin->dividesByCount && !filter;
    for (const json &ix : indices)
      denseMean &= !ix.contains("relation");
    Reducer red = builtinName.empty() ? userReducer(spec, f)
                  : denseMean         ? combiningReducer(*builtin, resultT)
                                      : builtinReducer(builtinName, resultT);

    // Loop bounds of each index; a relation index loops over a destination's
    // CSR row.
    struct Loop {
      bool relation = false;
      DimV size;
      V rel;
      Value dst;
    };
    std::vector<Loop> loops;
    for (const json &ix : indices) {
      Loop l;
      if (ix.contains("relation")) {
        l.relation = true;
        l.rel = get(f, op.operands.at(ix["relation"].get<size_t>()));
        if (l.rel.k != V::Rel)
          fail(fmt::format("{}: the relation of a reduction is not a relation input", where_));
        l.dst = convert(scalarOf(get(f, op.operands.at(ix["target"].get<size_t>()))).v,
                        b_.getIndexType());
      } else {
        l.size = dim(ix["domain"], f);
      }
      loops.push_back(l);
    }
    std::optional<Value> bound;
    if (filter && loops.size() == 1 && !loops[0].relation)
      bound = triangularBound(op, f, loops[0].size);

    V init = red.identity();
    std::vector<Value> initLeaves;
    leaves(init, initLeaves);
    std::vector<V> args;
    std::function<ValueRange(size_t, ValueRange)> nestLoops;
    std::vector<scf::ForOp> ops;
    nestLoops = [&](size_t i, ValueRange state) -> ValueRange {
      Loop &l = loops[i];
      Value lo, hi;
      if (l.relation) {
        Value a = b_.create<tensor::ExtractOp>(loc_, l.rel.rowPtr, ValueRange{l.dst});
        Value next = b_.create<arith::AddIOp>(loc_, l.dst, cIndex(1));
        Value c = b_.create<tensor::ExtractOp>(loc_, l.rel.rowPtr, ValueRange{next});
        lo = convert(a, b_.getIndexType());
        hi = convert(c, b_.getIndexType());
      } else {
        lo = cIndex(0);
        hi = bound ? *bound : dimValue(l.size);
        if (range) {
          // [c * size, min(hi, (c + 1) * size)): no iteration past the end.
          lo = b_.create<arith::MulIOp>(loc_, range->chunk, range->size);
          hi = b_.create<arith::MinSIOp>(loc_, hi, b_.create<arith::AddIOp>(loc_, lo, range->size));
        }
      }
      auto loop = b_.create<scf::ForOp>(loc_, lo, hi, cIndex(1), state);
      OpBuilder::InsertionGuard g(b_);
      b_.setInsertionPointToStart(loop.getBody());
      Value iv = loop.getInductionVar();
      size_t nargs = args.size();
      if (l.relation) {
        Value src = b_.create<tensor::ExtractOp>(loc_, l.rel.colIdx, ValueRange{iv});
        args.push_back(V::scalar(convert(src, b_.getIndexType())));
        if (indices[i]["names"].size() > 1)
          args.push_back(V::scalar(iv));
      } else {
        args.push_back(V::scalar(iv));
      }
      ++nest_;
      SmallVector<Value> next;
      if (i + 1 < loops.size()) {
        ValueRange r = nestLoops(i + 1, loop.getRegionIterArgs());
        next.assign(r.begin(), r.end());
      } else {
        // One step: the message combined into the carried state.
        auto step = [&] {
          size_t pos = 0;
          V acc = rebuild(init, loop.getRegionIterArgs(), pos);
          std::vector<V> msg = region(op.regions[0], f, args);
          return carried(red.combine(acc, red.lift(msg)), initLeaves, loop.getRegionIterArgs());
        };
        // A filter guards the message: under a false filter it is neither
        // evaluated nor checked (`x[l + k - Pad]` of a zero-padded
        // convolution reads outside `x` exactly where the filter is false).
        std::optional<V> keep;
        if (filter && !bound)
          keep = scalarOf(region(op.regions[1], f, args).at(0));
        if (!keep || (keep->c && *keep->c)) {
          next = step();
        } else if (keep->c) {
          next.assign(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
        } else {
          SmallVector<Type> types;
          for (Value v : initLeaves)
            types.push_back(v.getType());
          auto guarded = b_.create<scf::IfOp>(loc_, types, keep->v, /*withElseRegion=*/true);
          OpBuilder::InsertionGuard ig(b_);
          b_.setInsertionPointToStart(guarded.thenBlock());
          b_.create<scf::YieldOp>(loc_, step());
          b_.setInsertionPointToStart(guarded.elseBlock());
          b_.create<scf::YieldOp>(loc_, loop.getRegionIterArgs());
          next.assign(guarded.getResults().begin(), guarded.getResults().end());
        }
      }
      --nest_;
      args.resize(nargs);
      b_.create<scf::YieldOp>(loc_, next);
      return loop.getResults();
    };
    ValueRange finalLeaves = nestLoops(0, initLeaves);
    size_t pos = 0;
    V acc = rebuild(init, finalLeaves, pos);
    if (range)
      return {acc};
    if (denseMean) {
      // A zero-sized domain divides its 0 by 1 (an empty mean is 0), in
      // the accumulator's type, rounded once.
      Value count = cIndex(1);
      for (Loop &l : loops)
        count = b_.create<arith::MulIOp>(loc_, count, dimValue(l.size));
      count = b_.create<arith::MaxUIOp>(loc_, count, cIndex(1));
      Type at = acc.v.getType();
      acc = V::scalar(binary("div", acc.v, convert(count, at), at));
    }
    V out = red.finalize(acc);
    if (op.results.size() > 1 && out.k == V::Agg)
      return out.elems;
    return {out};
  }
};

/// Where a manifest path (`[*]` for arrays) sits among the optional sub
/// blocks: the paths of those around it, outermost first, and whether its
/// own block requires it (a param or buffer declared without `?`).
struct Placement {
  std::vector<std::string> subs;
  bool required = false;
};

void placeMembers(const plan::Plan &p, const json &type, const std::string &prefix,
                  const std::vector<std::string> &subs, std::map<std::string, Placement> &out,
                  int depth = 0) {
  std::string name = type.value("name", ""), module = type.value("module", "");
  const json *decl = p.blocks.contains(module + "::" + name) ? &p.blocks[module + "::" + name]
                     : p.blocks.contains(name)                ? &p.blocks[name]
                                                              : nullptr;
  if (!decl || !decl->contains("members") || depth > 64)
    return;
  for (const json &m : (*decl)["members"]) {
    std::string kind = m.value("kind", ""), path = prefix + m.value("name", "");
    const json &t = m["type"];
    std::string tk = t.value("kind", "");
    if (kind == "param" || kind == "buffer" || kind == "state")
      out[path] = {subs, kind != "state" && tk != "optional"};
    else if (kind == "sub" && tk == "block")
      placeMembers(p, t, path + ".", subs, out, depth + 1);
    else if (kind == "sub" && tk == "array")
      placeMembers(p, t["element"], path + "[*].", subs, out, depth + 1);
    else if (kind == "sub" && tk == "optional") {
      std::vector<std::string> inner = subs;
      inner.push_back(path);
      placeMembers(p, t["inner"], path + ".", inner, out, depth + 1);
    }
  }
}

/// The expanded form of manifest path prefix `pattern` inside the expanded
/// path `path`: as many `.` components as the pattern has, `[*]` counting
/// one more (`layers[*].head` in `layers.0.head.w` is `layers.0.head`).
std::string expandedPrefix(const std::string &pattern, const std::string &path) {
  size_t parts = 1 + std::count(pattern.begin(), pattern.end(), '.');
  for (size_t at = pattern.find("[*]"); at != std::string::npos; at = pattern.find("[*]", at + 3))
    ++parts;
  size_t end = 0;
  for (size_t i = 0; i < parts && end != std::string::npos; ++i)
    end = path.find('.', end + (i ? 1 : 0));
  return path.substr(0, end);
}

} // namespace

std::vector<ModelTensor> expandManifest(const plan::Plan &p,
                                        const std::set<std::string> &presentOptional,
                                        std::string &error) {
  std::map<std::string, Placement> placed;
  if (p.root.is_object() && p.blocks.is_object())
    placeMembers(p, {{"name", p.root.value("name", "")}, {"module", p.module}}, "", {}, placed);
  std::vector<ModelTensor> out;
  // Per tensor, the expanded optional sub blocks around it (outermost first).
  std::vector<std::vector<std::string>> around;
  // An optional sub block lacking a tensor it requires is absent (§9.4).
  std::map<std::string, bool> complete;
  for (const plan::ManifestEntry &e : p.manifest) {
    if (!e.dtype.is_string()) {
      error = fmt::format("'{}' has no concrete dtype after instantiation", e.path);
      return {};
    }
    std::vector<int64_t> shape;
    for (const json &d : e.shape) {
      if (!d.is_number_integer()) {
        error = fmt::format("'{}' has a shape that is not constant after instantiation", e.path);
        return {};
      }
      shape.push_back(d.get<int64_t>());
    }
    std::vector<int64_t> repeat;
    for (const json &r : e.repeat)
      repeat.push_back(r.is_number_integer() ? r.get<int64_t>() : 0);
    std::vector<std::string> paths{e.path};
    for (int64_t n : repeat) {
      std::vector<std::string> next;
      for (const std::string &path : paths) {
        size_t star = path.find("[*]");
        for (int64_t i = 0; i < n; ++i)
          next.push_back(path.substr(0, star) + "." + std::to_string(i) + path.substr(star + 3));
      }
      paths = std::move(next);
    }
    auto pl = placed.find(e.path);
    for (const std::string &path : paths) {
      ModelTensor t;
      t.path = path;
      t.kind = e.kind;
      t.dtype = e.dtype.get<std::string>();
      t.shape = shape;
      t.optional = e.optional;
      t.present = !e.optional || presentOptional.count(path);
      std::vector<std::string> subs;
      if (pl != placed.end()) {
        for (const std::string &s : pl->second.subs)
          subs.push_back(expandedPrefix(s, path));
        t.required = pl->second.required;
      }
      if (!subs.empty()) {
        t.block = subs.back();
        bool &c = complete.emplace(t.block, true).first->second;
        if (t.required && !presentOptional.count(path))
          c = false;
      }
      around.push_back(std::move(subs));
      out.push_back(std::move(t));
    }
  }
  // A block's tensors (its state too) are present with it: a required one
  // is then in the weights, an optional one when the weights hold it.
  for (size_t i = 0; i < out.size(); ++i) {
    if (around[i].empty())
      continue;
    bool blockPresent = true;
    for (const std::string &s : around[i])
      blockPresent &= complete.count(s) ? complete[s] : true;
    ModelTensor &t = out[i];
    t.present = blockPresent && (t.kind == "state" || t.required || presentOptional.count(t.path));
  }
  return out;
}

nlohmann::json runtimeChecks(ModuleOp module) {
  if (auto a = module->getAttrOfType<StringAttr>("linnet.checks"))
    return json::parse(a.getValue().str(), nullptr, false);
  return json::array();
}

nlohmann::json runtimeJson(const plan::Plan &p, const std::vector<ModelTensor> &tensors,
                           const nlohmann::json &checks) {
  // The ABI is the target's: the compilation adds it (`abi`).
  json doc = {{"library", "model.so"}};
  if (checks.is_array() && !checks.empty())
    doc["checks"] = checks;
  json ts = json::array();
  for (const ModelTensor &t : tensors) {
    ts.push_back({{"path", t.path}, {"kind", t.kind}, {"dtype", t.dtype}, {"shape", t.shape},
                  {"optional", t.optional}, {"present", t.present}});
    if (!t.block.empty()) {
      ts.back()["block"] = t.block;
      if (t.required)
        ts.back()["required"] = true;
    }
  }
  doc["tensors"] = ts;
  std::map<std::string, json> rootDims;
  std::map<std::string, std::string> rootTypes;
  for (const json &g : p.root["generics"]) {
    if (g.value("kind", "") == "dim")
      rootDims[g["sym"]] = g["value"];
    else if (g.value("kind", "") == "dtype")
      rootTypes[g["var"]] = g["value"];
  }
  // A signature dim with the root generics substituted and folded: an
  // integer, or text over entry generics that the runtime evaluates
  // (every compound operand parenthesized; `/` and `%` floor).
  std::function<json(const json &)> dimSig = [&](const json &u) -> json {
    if (u.is_number_integer()) {
      int64_t v = u.get<int64_t>();
      return v < 0 ? json(fmt::format("(0 - {})", -v)) : u;
    }
    if (u.is_object() && u.contains("sym")) {
      auto it = rootDims.find(u["sym"]);
      return it != rootDims.end() ? it->second : json(u["name"]);
    }
    if (!u.is_object() || !u.contains("op"))
      return json(ir::dimStr(u));
    std::string op = u["op"];
    std::vector<json> xs;
    bool folded = true;
    for (const json &a : u["args"]) {
      xs.push_back(dimSig(a));
      folded &= xs.back().is_number_integer();
    }
    if (folded && !xs.empty()) {
      int64_t acc = xs[0].get<int64_t>();
      for (size_t i = 1; i < xs.size(); ++i) {
        int64_t y = xs[i].get<int64_t>();
        if (op == "add") acc += y;
        else if (op == "mul") acc *= y;
        else if (op == "min") acc = std::min(acc, y);
        else if (op == "max") acc = std::max(acc, y);
        else if (y != 0 && (op == "floordiv" || op == "mod")) {
          int64_t q = acc / y, m = acc % y;
          if (m != 0 && ((m < 0) != (y < 0))) {
            --q;
            m += y;
          }
          acc = op == "floordiv" ? q : m;
        } else {
          folded = false;
          break;
        }
      }
      if (folded)
        return acc < 0 ? json(fmt::format("(0 - {})", -acc)) : json(acc);
    }
    std::vector<std::string> parts;
    for (const json &x : xs)
      parts.push_back(x.is_string() ? x.get<std::string>() : std::to_string(x.get<int64_t>()));
    if (op == "min" || op == "max")
      return fmt::format("{}({})", op, fmt::join(parts, ", "));
    const char *sep = op == "add" ? " + " : op == "mul" ? " * " : op == "floordiv" ? " / " : " % ";
    return fmt::format("({})", fmt::join(parts, sep));
  };
  auto dtypeSig = [&](const json &d) -> json {
    if (d.is_object() && d.contains("var"))
      return rootTypes.count(d["var"]) ? json(rootTypes[d["var"]]) : json(d["name"]);
    return d;
  };
  auto sig = [&](const json &t, const std::string &name) {
    json s = json::object();
    if (!name.empty())
      s["name"] = name;
    s["dtype"] = dtypeSig(t["dtype"]);
    json shape = json::array();
    if (t.value("kind", "") == "tensor")
      for (const json &u : t["shape"])
        shape.push_back(dimSig(u));
    s["shape"] = shape;
    return s;
  };
  json entries = json::array();
  for (const plan::Function &f : p.functions) {
    if (f.kind != "entry" || !f.block || *f.block != p.root.value("name", ""))
      continue;
    std::string name = f.name.substr(f.name.rfind('.') + 1);
    json e = {{"name", name}, {"symbol", "linnet_entry_" + name}};
    json gens = json::array();
    for (const json &g : f.generics)
      gens.push_back(g["name"]);
    e["generics"] = gens;
    json ins = json::array();
    for (const ir::Value &a : f.body.args) {
      if (a.type.value("kind", "") == "relation") {
        // Two index tensors in the ABI: row_ptr (num_dst + 1) and col_idx.
        const json &dims = a.type["dims"];
        // Root generics are folded to their build-time values like any
        // shape dim: runtime.json names only entry generics.
        json dst = dimSig(dims[1]), src = dimSig(dims[0]);
        json rows = dst.is_number() ? json(dst.get<int64_t>() + 1)
                                    : json(fmt::format("({} + 1)", dst.get<std::string>()));
        ins.push_back({{"name", a.name + ".row_ptr"}, {"dtype", "i64"},
                       {"shape", {rows}}, {"relation", a.name}});
        ins.push_back({{"name", a.name + ".col_idx"}, {"dtype", "i64"}, {"shape", {dimSig(dims[2])}},
                       {"relation", a.name},
                       {"num_src", src.is_number() ? std::to_string(src.get<int64_t>())
                                                   : src.get<std::string>()}});
        continue;
      }
      ins.push_back(sig(a.type, a.name));
    }
    e["inputs"] = ins;
    json res = json::array();
    for (const json &r : f.results)
      res.push_back(sig(r, ""));
    e["results"] = res;
    // The entry's `where` clause, checked by the runtime on every call: each
    // side folded like a shape dim, over entry generics and integer scalar
    // inputs; `text` is the clause as written, for the message.
    json where = json::array();
    static const std::map<std::string, std::string> cmp = {
        {"eq", "=="}, {"ne", "!="}, {"lt", "<"}, {"le", "<="}, {"gt", ">"}, {"ge", ">="}};
    for (const json &c : f.constraints) {
      auto op = cmp.find(c.value("op", ""));
      if (op == cmp.end())
        continue;
      json l = dimSig(c["lhs"]), r = dimSig(c["rhs"]);
      where.push_back({{"lhs", l}, {"op", op->second}, {"rhs", r},
                       {"text", fmt::format("{} {} {}", ir::dimStr(c["lhs"]), op->second,
                                            ir::dimStr(c["rhs"]))}});
    }
    if (!where.empty())
      e["where"] = where;
    entries.push_back(e);
  }
  doc["entries"] = entries;
  return doc;
}

void registerImportDialects(DialectRegistry &registry) {
  registry.insert<gf::GfDialect, arith::ArithDialect, bufferization::BufferizationDialect,
                  func::FuncDialect, LLVM::LLVMDialect, linalg::LinalgDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect, tensor::TensorDialect>();
}

OwningOpRef<ModuleOp> importPlan(const plan::Plan &p, const std::vector<ModelTensor> &tensors,
                                 MLIRContext &context, std::string &error,
                                 const ImportOptions &options) {
  linnet::support::TimingStage stage("import");
  DialectRegistry registry;
  registerImportDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  if (!p.root.is_object()) {
    error = "the plan has no root block (a --functions plan cannot be built)";
    return {};
  }
  Importer imp(p, tensors, context);
  imp.checks = options.runtimeChecks;
  imp.foldChunks = options.foldChunks;
  try {
    OwningOpRef<ModuleOp> m = imp.run();
    // Whatever the verifier finds is the importer's to fix, but the user
    // reads where in their model it happened, not an MLIR dump.
    support::DiagnosticCollector diags(&context);
    if (failed(verify(*m))) {
      error = diags.first.empty() ? "the imported module does not verify" : diags.first;
      if (error.rfind("error: ", 0) == 0) // no source position: the caller names the file
        error = error.substr(7);
      error += " (an importer bug: the model is valid, the IR built for it is not)";
      return {};
    }
    return m;
  } catch (const ImportError &e) {
    // Located at the plan op being imported: `file:line:col: error: ...`.
    std::string at = imp.sourcePrefix();
    error = at.empty() ? std::string(e.what()) : at + "error: " + e.what();
    return {};
  }
}

} // namespace linnet::import

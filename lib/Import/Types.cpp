//===- Types.cpp - Plan types, dims and run-time checks -------------------===//
//
// Plan dtypes, dims and types as MLIR types and index values (a dim known at
// build time stays a constant), and the run-time checks (docs/runtime-abi.md,
// "Run-time checks") the importer puts around data-dependent indices and
// integer divisors.
//
//===----------------------------------------------------------------------===//
#include "ImporterImpl.h"

#include "linnet/Support/DimArith.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>

using namespace mlir;

namespace linnet::import::detail {

//===----------------------------------------------------------------------===//
// Types and dims
//===----------------------------------------------------------------------===//

Type Importer::elemType(const std::string &name) {
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
  if (name == "q8_0" || name == "q4_0")
    fail(fmt::format("{}: {} is a block-quantized storage format: only a param's elements have it, each "
                     "read converted with `as` (`w[o, i] as f32`)",
                     where_, name));
  fail(fmt::format("{}: dtype '{}' is not supported by the CPU backend yet", where_, name));
}

//===----------------------------------------------------------------------===//
// Block-quantized params
//===----------------------------------------------------------------------===//

MemRefType Importer::tensorMemref(const ModelTensor &t) {
  SmallVector<int64_t> shape(t.shape.begin(), t.shape.end());
  if (t.dtype != "q8_0" && t.dtype != "q4_0")
    return MemRefType::get(shape, elemType(t.dtype));
  if (shape.empty() || shape.back() % 32 != 0)
    fail(fmt::format("tensor '{}' of {} has shape [{}]: its last axis must hold whole blocks of 32", t.path,
                     t.dtype, fmt::join(t.shape, ", ")));
  shape.back() /= 32;
  shape.push_back(t.dtype == "q8_0" ? 34 : 18);
  return MemRefType::get(shape, b_.getI8Type());
}

AffineExpr Importer::blockQuantByte(const std::string &fmt, AffineExpr k) {
  return fmt == "q8_0" ? k % 32 + 2 : k % 16 + 2;
}

Value Importer::dequantize(const std::string &fmt, Value lo, Value hi, Value q, Value k) {
  Type i16 = b_.getI16Type(), i8 = b_.getI8Type(), f32 = b_.getF32Type();
  Value bits = b_.create<arith::OrIOp>(
      loc_, b_.create<arith::ExtUIOp>(loc_, i16, lo),
      b_.create<arith::ShLIOp>(loc_, b_.create<arith::ExtUIOp>(loc_, i16, hi),
                               b_.create<arith::ConstantIntOp>(loc_, 8, 16)));
  Value d = b_.create<arith::ExtFOp>(loc_, f32, b_.create<arith::BitcastOp>(loc_, b_.getF16Type(), bits).getResult());
  if (fmt == "q4_0") {
    // Values k mod 32 < 16 are the low nibbles, the rest the high ones.
    Value high = b_.create<arith::CmpIOp>(
        loc_, arith::CmpIPredicate::ne, b_.create<arith::AndIOp>(loc_, k, cIndex(16)), cIndex(0));
    Value shift = b_.create<arith::SelectOp>(loc_, high, b_.create<arith::ConstantIntOp>(loc_, 4, 8),
                                             b_.create<arith::ConstantIntOp>(loc_, 0, 8));
    Value nib = b_.create<arith::AndIOp>(loc_, b_.create<arith::ShRUIOp>(loc_, q, shift),
                                         b_.create<arith::ConstantIntOp>(loc_, 15, 8));
    q = b_.create<arith::SubIOp>(loc_, nib, b_.create<arith::ConstantIntOp>(loc_, 8, 8));
  }
  (void)i8;
  auto mul = b_.create<arith::MulFOp>(loc_, d, b_.create<arith::SIToFPOp>(loc_, f32, q));
  mul->setAttr("linnet.dequant", b_.getStringAttr(fmt));
  return mul;
}

std::string Importer::dtypeName(const json &d, Frame &f) {
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

//===----------------------------------------------------------------------===//
// Run-time checks (docs/runtime-abi.md, "Run-time checks")
//===----------------------------------------------------------------------===//

void Importer::nameValues(const ir::Op &op) {
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

std::string Importer::valueName(ir::ValueId id) const {
  auto it = names_.find(id);
  return it == names_.end() ? "a tensor" : it->second;
}

std::string Importer::locText() const {
  std::string p = sourcePrefix();
  return p.size() >= 2 ? p.substr(0, p.size() - 2) : p;
}

void Importer::ensureStatusGlobal() {
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

void Importer::report(Value failed, json c, Value value, Value bound) {
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

Value Importer::checkedIndex(Value i, Value size, json c) {
  if (auto ci = getConstantIntValue(i), cs = getConstantIntValue(size); ci && cs && *ci >= 0 && *ci < *cs)
    return i;
  Value ok = b_.create<arith::CmpIOp>(loc_, arith::CmpIPredicate::ult, i, size);
  Value bad = b_.create<arith::XOrIOp>(loc_, ok, b_.create<arith::ConstantIntOp>(loc_, 1, 1));
  report(bad, std::move(c), i, size);
  return b_.create<arith::SelectOp>(loc_, ok, i, cIndex(0));
}

DimV Importer::extent(const json &d, Frame &f) {
  DimV v = dim(d, f);
  if (v.c && *v.c < 0)
    fail(fmt::format("{}: the extent {} is {} with the build's generics (negative)", where_,
                     ir::dimStr(d), *v.c));
  return v;
}

DimV Importer::dim(const json &d, Frame &f) {
  // The plan's one walk over dims (ir::foldDim): what the build's generics
  // fix folds with the one dim arithmetic, the rest becomes arith ops.
  auto leaf = [&](const json &n) -> std::optional<DimV> {
    if (n.is_number_integer())
      return DimV{n.get<int64_t>(), {}};
    if (n.contains("sym")) {
      auto it = f.dims.find(n["sym"].get<std::string>());
      if (it == f.dims.end())
        fail(fmt::format("{}: dim generic '{}' is not bound", where_, n.value("name", "?")));
      return it->second;
    }
    fail(fmt::format("{}: shape packs ({}) are not supported by the CPU backend yet", where_, ir::dimStr(d)));
  };
  auto step = [&](dimarith::Op op, const DimV &acc, const DimV &y, const json &node) -> std::optional<DimV> {
    if ((op == dimarith::Op::FloorDiv || op == dimarith::Op::Mod) && y.c && *y.c == 0)
      fail(fmt::format("{}: dim {} divides by zero", where_, ir::dimStr(node)));
    if (acc.c && y.c) {
      // Known when the model is built: the one dim arithmetic.
      dimarith::Error e;
      std::optional<int64_t> c = dimarith::apply(op, *acc.c, *y.c, &e);
      if (!c)
        fail(fmt::format("{}: dim {} {}", where_, ir::dimStr(node),
                         e == dimarith::Error::DivideByZero ? "divides by zero" : "overflows 64-bit integers"));
      return DimV{c, {}};
    }
    Value a = dimValue(acc), bb = dimValue(y), r;
    switch (op) {
    case dimarith::Op::Add: r = b_.create<arith::AddIOp>(loc_, a, bb); break;
    case dimarith::Op::Mul: r = b_.create<arith::MulIOp>(loc_, a, bb); break;
    // Floored, as every other evaluator of dims (a zero divisor is a
    // run-time error): the integer `/` and `%` of the language.
    case dimarith::Op::FloorDiv: r = binary("div", a, bb, b_.getIndexType()); break;
    case dimarith::Op::Mod: r = binary("mod", a, bb, b_.getIndexType()); break;
    case dimarith::Op::Min: r = b_.create<arith::MinSIOp>(loc_, a, bb); break;
    case dimarith::Op::Max: r = b_.create<arith::MaxSIOp>(loc_, a, bb); break;
    case dimarith::Op::Sub: break; // not a plan operator: foldDim refuses it
    }
    return DimV{std::nullopt, r};
  };
  std::string why;
  std::optional<DimV> v = ir::foldDim<DimV>(d, leaf, step, why);
  if (!v)
    fail(fmt::format("{}: {}", where_, why));
  return *v;
}

Type Importer::type(const json &t, Frame &f, SmallVectorImpl<Value> *dynDims) {
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

} // namespace linnet::import::detail

//===- Types.cpp - Plan types, dims and run-time checks -------------------===//
//
// Plan dtypes, dims and types as MLIR types and index values (a dim known at
// build time stays a constant), and the run-time checks (docs/runtime-abi.md,
// "Run-time checks") the importer puts around data-dependent indices and
// integer divisors.
//
//===----------------------------------------------------------------------===//
#include "ImporterImpl.h"

#include "linnet/Support/BlockBytes.h"
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
  if (support::blockFormat(name))
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
  std::optional<support::BlockFormatInfo> bf = support::blockFormat(t.dtype);
  if (!bf)
    return MemRefType::get(shape, elemType(t.dtype));
  if (shape.empty() || shape.back() % bf->blockElems != 0)
    fail(fmt::format("tensor '{}' of {} has shape [{}]: its last axis must hold whole blocks of {}", t.path,
                     t.dtype, fmt::join(t.shape, ", "), bf->blockElems));
  shape.back() /= bf->blockElems;
  shape.push_back(bf->blockBytes);
  return MemRefType::get(shape, b_.getI8Type());
}

int64_t Importer::blockElems(const std::string &fmt) { return support::blockFormat(fmt)->blockElems; }

SmallVector<AffineExpr> Importer::blockBytes(const std::string &fmt, AffineExpr k) {
  return support::blockBytes(support::blockFormat(fmt)->format, k);
}

Value Importer::dequantize(const std::string &fmt, ArrayRef<Value> bytes, Value k) {
  Type i16 = b_.getI16Type(), i32 = b_.getI32Type(), f32 = b_.getF32Type();
  auto half = [&](Value lo, Value hi) -> Value {
    Value bits = b_.create<arith::OrIOp>(
        loc_, b_.create<arith::ExtUIOp>(loc_, i16, lo),
        b_.create<arith::ShLIOp>(loc_, b_.create<arith::ExtUIOp>(loc_, i16, hi),
                                 b_.create<arith::ConstantIntOp>(loc_, 8, 16)));
    return b_.create<arith::ExtFOp>(loc_, f32, b_.create<arith::BitcastOp>(loc_, b_.getF16Type(), bits).getResult());
  };
  // Unsigned byte arithmetic in i32: u(b) >> s & m.
  auto u = [&](Value byte) -> Value { return b_.create<arith::ExtUIOp>(loc_, i32, byte); };
  auto ci = [&](int64_t v) -> Value { return b_.create<arith::ConstantIntOp>(loc_, v, 32); };
  auto shr = [&](Value v, Value s) -> Value { return b_.create<arith::ShRUIOp>(loc_, v, s); };
  auto band = [&](Value v, int64_t m) -> Value { return b_.create<arith::AndIOp>(loc_, v, ci(m)); };
  auto bor = [&](Value a, Value b) -> Value { return b_.create<arith::OrIOp>(loc_, a, b); };
  auto shl = [&](Value v, int64_t s) -> Value { return b_.create<arith::ShLIOp>(loc_, v, ci(s)); };
  // k's bit `bit` set (k a non-negative index): an i1.
  auto kbit = [&](int64_t bit) -> Value {
    return b_.create<arith::CmpIOp>(loc_, arith::CmpIPredicate::ne,
                                    b_.create<arith::AndIOp>(loc_, k, cIndex(bit)), cIndex(0));
  };
  // (k >> from) & mask as an i32.
  auto kfield = [&](int64_t from, int64_t mask) -> Value {
    Value v = b_.create<arith::AndIOp>(loc_, b_.create<arith::ShRUIOp>(loc_, k, cIndex(from)), cIndex(mask));
    return b_.create<arith::IndexCastUIOp>(loc_, i32, v);
  };
  auto sel = [&](Value c, Value a, Value b) -> Value { return b_.create<arith::SelectOp>(loc_, c, a, b); };
  auto mul = [&](Value a, Value b) -> Value { return b_.create<arith::MulFOp>(loc_, a, b); };
  auto tagged = [&](Value v) {
    v.getDefiningOp()->setAttr("linnet.dequant", b_.getStringAttr(fmt));
    return v;
  };
  if (fmt == "q8_0")
    return tagged(mul(half(bytes[0], bytes[1]), b_.create<arith::SIToFPOp>(loc_, f32, bytes[2])));
  if (fmt == "q4_0") {
    // Values k mod 32 < 16 are the low nibbles, the rest the high ones.
    Value nib = band(shr(u(bytes[2]), sel(kbit(16), ci(4), ci(0))), 15);
    Value q = b_.create<arith::SubIOp>(loc_, nib, ci(8));
    return tagged(mul(half(bytes[0], bytes[1]), b_.create<arith::SIToFPOp>(loc_, f32, q)));
  }
  if (fmt == "q4_K" || fmt == "q5_K") {
    // get_scale_min_k4: sub-blocks 0-3 (k' < 128) the low 6 bits of a and
    // b; 4-7 the low (scale) or high (min) nibble of c with a's or b's top
    // two bits above it.
    Value a = u(bytes[4]), bb = u(bytes[5]), c = u(bytes[6]);
    Value upper = kbit(128);
    Value sc = sel(upper, bor(band(c, 15), shl(shr(a, ci(6)), 4)), band(a, 63));
    Value m = sel(upper, bor(shr(c, ci(4)), shl(shr(bb, ci(6)), 4)), band(bb, 63));
    Value qs = u(bytes.back());
    Value q = band(shr(qs, sel(kbit(32), ci(4), ci(0))), 15);
    if (fmt == "q5_K") // the fifth bit: bit k' / 32 of qh
      q = bor(q, shl(band(shr(u(bytes[7]), kfield(5, 7)), 1), 4));
    Value d1 = mul(half(bytes[0], bytes[1]), b_.create<arith::UIToFPOp>(loc_, f32, sc));
    Value m1 = mul(half(bytes[2], bytes[3]), b_.create<arith::UIToFPOp>(loc_, f32, m));
    Value p = mul(d1, b_.create<arith::UIToFPOp>(loc_, f32, q));
    return tagged(b_.create<arith::SubFOp>(loc_, p, m1));
  }
  // q6_K: 4 low bits from ql (the high nibble in quarters 2, 3), 2 high
  // from qh (bits 2t), less 32; (d * scale) * q.
  Value t = kfield(5, 3);
  Value lo = band(shr(u(bytes[0]), sel(kbit(64), ci(4), ci(0))), 15);
  Value hi = band(shr(u(bytes[1]), shl(t, 1)), 3);
  Value q = b_.create<arith::SubIOp>(loc_, bor(lo, shl(hi, 4)), ci(32));
  Value d1 = mul(half(bytes[3], bytes[4]), b_.create<arith::SIToFPOp>(loc_, f32, bytes[2]));
  return tagged(mul(d1, b_.create<arith::SIToFPOp>(loc_, f32, q)));
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

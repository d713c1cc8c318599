//===- Scalars.cpp - Plan scalars as arith and math ops -------------------===//
//
// Scalar constants, conversions (`as`, saturating float to integer), the
// arithmetic of mixed index and integer operands, unsigned integers in
// signless MLIR types, and whole-tensor arithmetic as one elementwise
// linalg.generic.
//
//===----------------------------------------------------------------------===//
#include "ImporterImpl.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace linnet::import::detail {

Value Importer::constant(Type t, double v) {
  if (isFloat(t))
    return b_.create<arith::ConstantOp>(loc_, t, b_.getFloatAttr(t, v));
  if (isa<IndexType>(t))
    return cIndex(static_cast<int64_t>(v));
  return b_.create<arith::ConstantOp>(loc_, t, b_.getIntegerAttr(t, static_cast<int64_t>(v)));
}

Value Importer::infinity(Type t, bool negative) {
  auto ft = cast<FloatType>(t);
  return b_.create<arith::ConstantOp>(
      loc_, t, b_.getFloatAttr(t, APFloat::getInf(ft.getFloatSemantics(), negative)));
}

Value Importer::floatToUnsigned(Value v, IntegerType to) {
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

bool Importer::isUnsigned(const json &t, Frame &f) {
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

Value Importer::floatToInt(Value v, IntegerType to) {
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

Value Importer::convert(Value v, Type to) {
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

Type Importer::common(Type a, Type b) {
  if (a == b) return a;
  if (isFloat(a)) return a;
  if (isFloat(b)) return b;
  if (isa<IndexType>(a)) return b;
  return a;
}

arith::FastMathFlagsAttr Importer::reassoc() {
  return arith::FastMathFlagsAttr::get(&ctx_, arith::FastMathFlags::reassoc |
                                                 arith::FastMathFlags::contract);
}

/// The integer a constant-folded index or integer value holds (arith
/// constants and their +, -, *, floordiv).
static std::optional<int64_t> foldedInt(Value v, int depth = 0) {
  if (std::optional<int64_t> k = getConstantIntValue(v))
    return k;
  Operation *d = v.getDefiningOp();
  if (!d || depth > 8 || d->getNumOperands() != 2)
    return std::nullopt;
  std::optional<int64_t> a = foldedInt(d->getOperand(0), depth + 1), c = foldedInt(d->getOperand(1), depth + 1);
  if (!a || !c || *a < 0 || *c <= 0 || *a > (1 << 20) || *c > (1 << 20))
    return std::nullopt;
  if (isa<arith::AddIOp>(d)) return *a + *c;
  if (isa<arith::SubIOp>(d)) return *a - *c;
  if (isa<arith::MulIOp>(d)) return *a * *c;
  if (isa<arith::FloorDivSIOp, arith::DivSIOp, arith::DivUIOp>(d)) return *a / *c;
  return std::nullopt;
}

Value Importer::binary(const std::string &op, Value a, Value c, Type t, bool fast, bool uns) {
  // A lane's index over G (h0 + r with h0 a multiple of G, r < G): every
  // lane's h0 / G, one value, so that their reads coincide.
  if (op == "div" && !laneQuotient_.empty() && !isFloat(t))
    if (auto it = laneQuotient_.find(a); it != laneQuotient_.end())
      if (foldedInt(c) == it->second.lanes)
        return convert(it->second.quotient, t);
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

std::optional<int64_t> Importer::fold(const std::string &op, int64_t a, int64_t c) {
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

V Importer::scalarOf(const V &v) {
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

Block *Importer::genericBody(linalg::GenericOp gen, ValueRange inputs, Type outElem) {
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

V Importer::elementwise(RankedTensorType resT, const std::vector<V> &xs,
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

Value Importer::tensorOf(const V &v) {
  if (v.k == V::Scalar)
    return b_.create<tensor::FromElementsOp>(loc_, RankedTensorType::get({}, v.v.getType()),
                                             ValueRange{v.v});
  if (v.k != V::Tensor)
    fail(fmt::format("{}: expected a tensor operand", where_));
  return v.v;
}

V Importer::valueOf(Value t) {
  V v = V::tensor(t);
  return cast<RankedTensorType>(t.getType()).getRank() == 0 ? scalarOf(v) : v;
}

} // namespace linnet::import::detail

//===- Value.cpp - Scalar arithmetic of the reference interpreter ---------===//
#include "Value.h"

#include "linnet/Support/Half.h"


#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace linnet;
using namespace linnet::interp;

namespace {
struct DTInfo {
  DT dt;
  const char *name;
};
const DTInfo kDTs[] = {{DT::Bool, "bool"}, {DT::U8, "u8"},     {DT::I8, "i8"},
                       {DT::I16, "i16"},   {DT::I32, "i32"},   {DT::I64, "i64"},
                       {DT::Index, "index"}, {DT::F16, "f16"}, {DT::BF16, "bf16"},
                       {DT::F32, "f32"},   {DT::F64, "f64"},   {DT::LitInt, "{integer}"},
                       {DT::LitFloat, "{float}"}};

using support::bf16ToF32;
using support::f16ToF32;
using support::f32ToBF16;
using support::f32ToF16;

/// Computes a float op in the dtype's own precision.
template <typename F> Num floatOp(DT t, double a, double b, F f) {
  switch (t) {
  case DT::F32:
  case DT::F16:
  case DT::BF16:
    return opResult(t, numF(static_cast<double>(f(static_cast<float>(a), static_cast<float>(b)))));
  default:
    return numF(f(a, b));
  }
}

template <typename T> T fmaximum(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<T>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a; // max(-0, +0) = +0
  return a > b ? a : b;
}
template <typename T> T fminimum(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<T>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
} // namespace

const char *interp::dtName(DT t) {
  for (const DTInfo &d : kDTs)
    if (d.dt == t)
      return d.name;
  return "?";
}

bool interp::isFloat(DT t) {
  return t == DT::F16 || t == DT::BF16 || t == DT::F32 || t == DT::F64 || t == DT::LitFloat;
}

bool interp::dtFromName(const std::string &name, DT &out) {
  for (const DTInfo &d : kDTs)
    if (name == d.name && d.dt != DT::LitInt && d.dt != DT::LitFloat) {
      out = d.dt;
      return true;
    }
  return false;
}

rt::DType interp::toRt(DT t) {
  switch (t) {
  case DT::Bool: return rt::DType::Bool;
  case DT::U8: return rt::DType::U8;
  case DT::I8: return rt::DType::I8;
  case DT::I16: return rt::DType::I16;
  case DT::I32: return rt::DType::I32;
  case DT::F16: return rt::DType::F16;
  case DT::BF16: return rt::DType::BF16;
  case DT::F32: return rt::DType::F32;
  case DT::F64:
  case DT::LitFloat: return rt::DType::F64;
  default: return rt::DType::I64; // i64, index, untyped integers
  }
}

DT interp::fromRt(rt::DType t) {
  switch (t) {
  case rt::DType::Bool: return DT::Bool;
  case rt::DType::U8: return DT::U8;
  case rt::DType::I8: return DT::I8;
  case rt::DType::I16: return DT::I16;
  case rt::DType::I32: return DT::I32;
  case rt::DType::I64: return DT::I64;
  case rt::DType::F16: return DT::F16;
  case rt::DType::BF16: return DT::BF16;
  case rt::DType::F32: return DT::F32;
  case rt::DType::F64: return DT::F64;
  }
  return DT::F32;
}

namespace {
thread_local support::NumericsPolicy tPolicy = support::NumericsPolicy::AsWritten;
} // namespace

support::NumericsPolicy interp::numericsPolicy() { return tPolicy; }
void interp::setNumericsPolicy(support::NumericsPolicy p) { tPolicy = p; }

bool interp::deferredRounding(DT t) {
  return tPolicy == support::NumericsPolicy::F32Compute && (t == DT::F16 || t == DT::BF16);
}

Num interp::opResult(DT t, Num x) { return normalize(deferredRounding(t) ? DT::F32 : t, x); }

Num interp::normalize(DT t, Num x) {
  switch (t) {
  case DT::Bool: return numI(x.i != 0);
  case DT::U8: return numI(static_cast<uint8_t>(static_cast<uint64_t>(x.i)));
  case DT::I8: return numI(static_cast<int8_t>(static_cast<uint64_t>(x.i)));
  case DT::I16: return numI(static_cast<int16_t>(static_cast<uint64_t>(x.i)));
  case DT::I32: return numI(static_cast<int32_t>(static_cast<uint64_t>(x.i)));
  case DT::F32: return numF(static_cast<double>(static_cast<float>(x.f)));
  case DT::F16: return numF(f16ToF32(f32ToF16(static_cast<float>(x.f))));
  case DT::BF16: return numF(bf16ToF32(f32ToBF16(static_cast<float>(x.f))));
  default: return x;
  }
}

double interp::asDouble(DT t, Num x) { return isFloat(t) ? x.f : static_cast<double>(x.i); }

bool interp::truthy(DT t, Num x) { return isFloat(t) ? x.f != 0 : x.i != 0; }

std::string interp::numStr(DT t, Num x) {
  if (t == DT::Bool)
    return x.i ? "true" : "false";
  if (isFloat(t))
    return fmt::format("{}", x.f);
  return std::to_string(x.i);
}

Num interp::convert(Num x, DT from, DT to) {
  if (from == to)
    return x;
  bool ff = isFloat(from), tf = isFloat(to);
  if (ff && tf)
    return opResult(to, x);
  if (!ff && tf) {
    if (to == DT::F64 || to == DT::LitFloat)
      return numF(static_cast<double>(x.i));
    return opResult(to, numF(static_cast<double>(static_cast<float>(x.i))));
  }
  if (!ff)
    return normalize(to, x);
  // float -> integer (§6.9): truncation toward zero, saturating at the
  // type's range; NaN gives 0.
  if (to == DT::Bool)
    return numI(x.f != 0);
  if (std::isnan(x.f))
    return numI(0);
  double t = std::trunc(x.f);
  int64_t lo, hi;
  switch (to) {
  case DT::U8: lo = 0, hi = 255; break;
  case DT::I8: lo = -128, hi = 127; break;
  case DT::I16: lo = -32768, hi = 32767; break;
  case DT::I32: lo = INT32_MIN, hi = INT32_MAX; break;
  default: lo = INT64_MIN, hi = INT64_MAX; break;
  }
  if (t <= static_cast<double>(lo))
    return numI(lo);
  // static_cast<double>(INT64_MAX) is 2^63: anything from there saturates.
  if (t >= static_cast<double>(hi))
    return numI(hi);
  return numI(static_cast<int64_t>(t));
}

namespace {
constexpr const char *kBinNames[] = {"add", "sub", "mul", "div", "mod", "and", "or", "max", "min", "pow"};
constexpr const char *kPredNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};
constexpr const char *kUnNames[] = {"neg", "not", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "erf", "sin", "cos"};
template <typename E, size_t N> std::optional<E> codeOf(const char *const (&names)[N], std::string_view n) {
  for (size_t i = 0; i < N; ++i)
    if (n == names[i])
      return static_cast<E>(i);
  return std::nullopt;
}
} // namespace

std::optional<BinOp> interp::binOpFromName(std::string_view n) { return codeOf<BinOp>(kBinNames, n); }
std::optional<CmpPred> interp::cmpPredFromName(std::string_view n) { return codeOf<CmpPred>(kPredNames, n); }
std::optional<UnOp> interp::unOpFromName(std::string_view n) { return codeOf<UnOp>(kUnNames, n); }
const char *interp::binOpName(BinOp o) { return kBinNames[static_cast<size_t>(o)]; }
const char *interp::unOpName(UnOp o) { return kUnNames[static_cast<size_t>(o)]; }

Num interp::arith(BinOp op, DT t, Num a, Num b) {
  if (isFloat(t)) {
    switch (op) {
    case BinOp::Add: return floatOp(t, a.f, b.f, [](auto x, auto y) { return x + y; });
    case BinOp::Sub: return floatOp(t, a.f, b.f, [](auto x, auto y) { return x - y; });
    case BinOp::Mul: return floatOp(t, a.f, b.f, [](auto x, auto y) { return x * y; });
    case BinOp::Div: return floatOp(t, a.f, b.f, [](auto x, auto y) { return x / y; });
    case BinOp::Mod: return floatOp(t, a.f, b.f, [](auto x, auto y) { return std::fmod(x, y); });
    case BinOp::Max: return floatOp(t, a.f, b.f, [](auto x, auto y) { return fmaximum(x, y); });
    case BinOp::Min: return floatOp(t, a.f, b.f, [](auto x, auto y) { return fminimum(x, y); });
    case BinOp::Pow: return floatOp(t, a.f, b.f, [](auto x, auto y) { return std::pow(x, y); });
    case BinOp::And:
    case BinOp::Or: break;
    }
    throw EvalError(fmt::format("operator '{}' does not apply to {}", binOpName(op), dtName(t)));
  }
  uint64_t x = static_cast<uint64_t>(a.i), y = static_cast<uint64_t>(b.i);
  switch (op) {
  case BinOp::Add: return normalize(t, numI(static_cast<int64_t>(x + y)));
  case BinOp::Sub: return normalize(t, numI(static_cast<int64_t>(x - y)));
  case BinOp::Mul: return normalize(t, numI(static_cast<int64_t>(x * y)));
  case BinOp::Div:
  case BinOp::Mod: {
    bool div = op == BinOp::Div;
    if (b.i == 0)
      throw EvalError(fmt::format("integer {} by zero ({} {} 0)", div ? "division" : "remainder", a.i,
                                  div ? "/" : "%"));
    if (a.i == std::numeric_limits<int64_t>::min() && b.i == -1) // wraps
      return div ? normalize(t, a) : numI(0);
    // Floor division and its remainder (the remainder has the divisor's sign).
    int64_t q = a.i / b.i, r = a.i % b.i;
    if (r != 0 && ((r < 0) != (b.i < 0))) {
      --q;
      r += b.i;
    }
    return normalize(t, numI(div ? q : r));
  }
  case BinOp::And: return normalize(t, numI(t == DT::Bool ? (a.i && b.i) : (a.i & b.i)));
  case BinOp::Or: return normalize(t, numI(t == DT::Bool ? (a.i || b.i) : (a.i | b.i)));
  case BinOp::Max: return a.i >= b.i ? a : b;
  case BinOp::Min: return a.i <= b.i ? a : b;
  case BinOp::Pow: break;
  }
  throw EvalError(fmt::format("operator '{}' does not apply to {}", binOpName(op), dtName(t)));
}

bool interp::compare(CmpPred p, DT t, Num a, Num b) {
  auto cmp = [p](auto x, auto y) {
    switch (p) {
    case CmpPred::Eq: return x == y;
    case CmpPred::Ne: return x != y; // unordered: NaN != NaN
    case CmpPred::Lt: return x < y;
    case CmpPred::Le: return x <= y;
    case CmpPred::Gt: return x > y;
    case CmpPred::Ge: break;
    }
    return x >= y;
  };
  return isFloat(t) ? cmp(a.f, b.f) : cmp(a.i, b.i);
}

Num interp::unary(UnOp n, DT t, Num a) {
  switch (n) {
  case UnOp::Neg:
    return isFloat(t) ? opResult(t, numF(-a.f)) : normalize(t, numI(static_cast<int64_t>(0 - static_cast<uint64_t>(a.i))));
  case UnOp::Not:
    return t == DT::Bool ? numI(!a.i) : normalize(t, numI(~a.i));
  case UnOp::Abs:
    if (isFloat(t))
      return numF(std::fabs(a.f));
    return a.i < 0 ? unary(UnOp::Neg, t, a) : a;
  default:
    break;
  }
  if (!isFloat(t))
    throw EvalError(fmt::format("__builtin_{} takes a float, found {}", unOpName(n), dtName(t)));
  auto f1 = [&](auto fn) { return floatOp(t, a.f, 0.0, [&](auto x, auto) { return fn(x); }); };
  switch (n) {
  case UnOp::Exp: return f1([](auto x) { return std::exp(x); });
  case UnOp::Log: return f1([](auto x) { return std::log(x); });
  case UnOp::Sqrt: return f1([](auto x) { return std::sqrt(x); });
  case UnOp::Rsqrt: return f1([](auto x) { return decltype(x)(1) / std::sqrt(x); });
  case UnOp::Tanh: return f1([](auto x) { return std::tanh(x); });
  case UnOp::Erf: return f1([](auto x) { return std::erf(x); });
  case UnOp::Sin: return f1([](auto x) { return std::sin(x); });
  case UnOp::Cos: return f1([](auto x) { return std::cos(x); });
  default: break;
  }
  return a; // unreachable: every code is handled above
}

Num interp::loadElem(rt::DType t, const std::byte *p) {
  auto ld = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t) {
  case rt::DType::Bool: return numI(ld(uint8_t{}) != 0);
  case rt::DType::U8: return numI(ld(uint8_t{}));
  case rt::DType::I8: return numI(ld(int8_t{}));
  case rt::DType::I16: return numI(ld(int16_t{}));
  case rt::DType::I32: return numI(ld(int32_t{}));
  case rt::DType::I64: return numI(ld(int64_t{}));
  case rt::DType::F16: return numF(f16ToF32(ld(uint16_t{})));
  case rt::DType::BF16: return numF(bf16ToF32(ld(uint16_t{})));
  case rt::DType::F32: return numF(ld(float{}));
  case rt::DType::F64: return numF(ld(double{}));
  }
  return numI(0);
}

void interp::storeElem(rt::DType t, Num x, std::byte *p) {
  auto st = [&](auto v) { std::memcpy(p, &v, sizeof v); };
  switch (t) {
  case rt::DType::Bool: st(static_cast<uint8_t>(x.i != 0)); break;
  case rt::DType::U8: st(static_cast<uint8_t>(x.i)); break;
  case rt::DType::I8: st(static_cast<int8_t>(x.i)); break;
  case rt::DType::I16: st(static_cast<int16_t>(x.i)); break;
  case rt::DType::I32: st(static_cast<int32_t>(x.i)); break;
  case rt::DType::I64: st(x.i); break;
  case rt::DType::F16: st(f32ToF16(static_cast<float>(x.f))); break;
  case rt::DType::BF16: st(f32ToBF16(static_cast<float>(x.f))); break;
  case rt::DType::F32: st(static_cast<float>(x.f)); break;
  case rt::DType::F64: st(x.f); break;
  }
}

std::string interp::shapeStr(const std::vector<int64_t> &s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

const char *interp::kindName(Val::Kind k) {
  switch (k) {
  case Val::Unit: return "()";
  case Val::Scalar: return "a scalar";
  case Val::Tensor: return "a tensor";
  case Val::Tuple: return "a tuple";
  case Val::Struct: return "a struct";
  case Val::Optional: return "an optional";
  case Val::Array: return "an array";
  case Val::Block: return "a block";
  case Val::Rel: return "a relation";
  }
  return "?";
}

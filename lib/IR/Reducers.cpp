//===- Reducers.cpp - The built-in reducers, one table --------------------===//
#include "linnet/ir/reducers.hpp"

#include <limits>
#include <type_traits>

namespace linnet::ir {

namespace {

using C = ReduceCombine;
using I = ReduceIdentity;
using O = ReduceOperands;

constexpr BuiltinReducer kReducers[] = {
    {"sum", C::Add, I::Zero, O::Numeric, false},
    {"prod", C::Mul, I::One, O::Numeric, false},
    {"max", C::Max, I::Lowest, O::Numeric, false},
    {"min", C::Min, I::Highest, O::Numeric, false},
    {"mean", C::Add, I::Zero, O::Numeric, true},
    {"any", C::Or, I::False, O::Bool, false},
    {"all", C::And, I::True, O::Bool, false},
};

template <typename T> ReducerIdentityValue intIdentity(ReduceIdentity id) {
  using L = std::numeric_limits<T>;
  using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  switch (id) {
  case I::Zero:
  case I::False: return W(0);
  case I::One:
  case I::True: return W(1);
  case I::Lowest: return W(L::lowest());
  case I::Highest: return W(L::max());
  }
  return W(0);
}

} // namespace

std::span<const BuiltinReducer> builtinReducers() { return kReducers; }

const BuiltinReducer *findBuiltinReducer(std::string_view name) {
  for (const BuiltinReducer &r : kReducers)
    if (r.name == name)
      return &r;
  return nullptr;
}

std::string builtinReducerNames() {
  std::string s;
  for (const BuiltinReducer &r : kReducers) {
    if (!s.empty())
      s += ", ";
    s += r.name;
  }
  return s;
}

std::string_view combineOpName(ReduceCombine c) {
  switch (c) {
  case C::Add: return "add";
  case C::Mul: return "mul";
  case C::Max: return "max";
  case C::Min: return "min";
  case C::Or: return "or";
  case C::And: return "and";
  }
  return "";
}

std::optional<ReducerIdentityValue> reducerIdentity(ReduceIdentity id, std::string_view dtype) {
  if (dtype == "bool")
    return id == I::One || id == I::True || id == I::Highest;
  if (dtype == "f16" || dtype == "bf16" || dtype == "f32" || dtype == "f64") {
    constexpr double inf = std::numeric_limits<double>::infinity();
    switch (id) {
    case I::Zero:
    case I::False: return 0.0;
    case I::One:
    case I::True: return 1.0;
    case I::Lowest: return -inf;
    case I::Highest: return inf;
    }
  }
  if (dtype == "i8") return intIdentity<int8_t>(id);
  if (dtype == "i16") return intIdentity<int16_t>(id);
  if (dtype == "i32") return intIdentity<int32_t>(id);
  if (dtype == "i64" || dtype == "index") return intIdentity<int64_t>(id);
  if (dtype == "u8") return intIdentity<uint8_t>(id);
  if (dtype == "u16") return intIdentity<uint16_t>(id);
  if (dtype == "u32") return intIdentity<uint32_t>(id);
  if (dtype == "u64") return intIdentity<uint64_t>(id);
  return std::nullopt;
}

} // namespace linnet::ir

//===- DimArith.cpp - The integer arithmetic of dims ----------------------===//
#include "linnet/Support/DimArith.h"

#include <algorithm>
#include <climits>

namespace linnet::dimarith {

std::optional<Op> opNamed(std::string_view n) {
  if (n == "add") return Op::Add;
  if (n == "sub") return Op::Sub;
  if (n == "mul") return Op::Mul;
  if (n == "floordiv") return Op::FloorDiv;
  if (n == "mod") return Op::Mod;
  if (n == "min") return Op::Min;
  if (n == "max") return Op::Max;
  return std::nullopt;
}

const char *nameOf(Op op) {
  switch (op) {
  case Op::Add: return "add";
  case Op::Sub: return "sub";
  case Op::Mul: return "mul";
  case Op::FloorDiv: return "floordiv";
  case Op::Mod: return "mod";
  case Op::Min: return "min";
  case Op::Max: return "max";
  }
  return "?";
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t floorMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

std::optional<int64_t> apply(Op op, int64_t a, int64_t b, Error *error) {
  auto fail = [&](Error e) -> std::optional<int64_t> {
    if (error)
      *error = e;
    return std::nullopt;
  };
  if (error)
    *error = Error::None;
  int64_t r = 0;
  switch (op) {
  case Op::Add:
    return __builtin_add_overflow(a, b, &r) ? fail(Error::Overflow) : std::optional<int64_t>(r);
  case Op::Sub:
    return __builtin_sub_overflow(a, b, &r) ? fail(Error::Overflow) : std::optional<int64_t>(r);
  case Op::Mul:
    return __builtin_mul_overflow(a, b, &r) ? fail(Error::Overflow) : std::optional<int64_t>(r);
  case Op::FloorDiv:
  case Op::Mod:
    if (b == 0)
      return fail(Error::DivideByZero);
    if (b == -1) // INT64_MIN / -1 overflows; anything % -1 is 0
      return op == Op::Mod ? std::optional<int64_t>(0)
                           : (a == INT64_MIN ? fail(Error::Overflow) : std::optional<int64_t>(-a));
    return op == Op::FloorDiv ? floorDiv(a, b) : floorMod(a, b);
  case Op::Min:
    return std::min(a, b);
  case Op::Max:
    return std::max(a, b);
  }
  return fail(Error::Overflow);
}

} // namespace linnet::dimarith

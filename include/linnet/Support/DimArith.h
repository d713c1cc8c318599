//===- DimArith.h - The integer arithmetic of dims --------------*- C++ -*-===//
//
// Dims are 64-bit integers under `+ - * / %`, `min` and `max`, where `/`
// and `%` floor (language §4.3: -7 / 2 = -4, -7 % 2 = 1). Every consumer of
// a dim (Sema's symbolic dims, the interpreter, the importer's folding, the
// runtime's signature dims, Python's reference and its bindings) computes
// one step with `apply`, so that they agree on every value, the edges
// included: a zero divisor and a result past 64 bits are errors, never a
// wrapped value or undefined behaviour (INT64_MIN / -1).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_DIMARITH_H
#define LINNET_SUPPORT_DIMARITH_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace linnet::dimarith {

enum class Op { Add, Sub, Mul, FloorDiv, Mod, Min, Max };

/// The plan's name of an operator ("add", "mul", "floordiv", "mod", "min",
/// "max"; "sub" for the runtime's text form), and back.
std::optional<Op> opNamed(std::string_view name);
const char *nameOf(Op op);

enum class Error { None, DivideByZero, Overflow };

/// `a op b`, or nullopt with `error` saying why.
std::optional<int64_t> apply(Op op, int64_t a, int64_t b, Error *error = nullptr);

/// Floored quotient and remainder; `b` != 0 and not (INT64_MIN, -1).
int64_t floorDiv(int64_t a, int64_t b);
int64_t floorMod(int64_t a, int64_t b);

} // namespace linnet::dimarith

#endif // LINNET_SUPPORT_DIMARITH_H

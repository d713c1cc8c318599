//===- reducers.hpp - The built-in reducers, one table -----------*- C++ -*-===//
//
// `sum prod max min mean any all`: what each one means, in one place. Sema
// resolves a reduction's reducer name and checks its message against it,
// the lowering records it in the Core IR (`"reducer": "sum"`), and the
// interpreter and the plan importer combine, seed and finalize with it.
//
// A built-in reducer is a combine operation over the message's dtype, an
// identity (the value of an empty reduction, and the seed of a non-empty
// one), and, for mean alone, a finalize that divides by the number of
// terms combined.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_IR_REDUCERS_H
#define LINNET_IR_REDUCERS_H

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace linnet::ir {

/// How two partial results combine.
enum class ReduceCombine : uint8_t { Add, Mul, Max, Min, Or, And };

/// The identity of a combine, as a function of the dtype (see
/// reducerIdentity): 0, 1, the dtype's lowest value (-inf for floats), its
/// highest (+inf), false, true.
enum class ReduceIdentity : uint8_t { Zero, One, Lowest, Highest, False, True };

/// The messages a reducer takes. Bool: Sema refuses any other message
/// (`'any' reduces bool values, found f32 ...`). Numeric: Sema does not
/// check the message's dtype (the reduction has the message's type).
enum class ReduceOperands : uint8_t { Numeric, Bool };

struct BuiltinReducer {
  std::string_view name;
  ReduceCombine combine;
  ReduceIdentity identity;
  ReduceOperands operands;
  /// mean: the combined value divided by the number of terms combined.
  bool dividesByCount;

  bool boolOnly() const { return operands == ReduceOperands::Bool; }
};

/// Every built-in reducer, in the order messages list them.
std::span<const BuiltinReducer> builtinReducers();
/// The built-in reducer called `name`, or null.
const BuiltinReducer *findBuiltinReducer(std::string_view name);
/// "sum, prod, max, min, mean, any, all".
std::string builtinReducerNames();

/// The Core IR arith op of a combine: "add", "mul", "max", "min", "or",
/// "and".
std::string_view combineOpName(ReduceCombine c);

/// An identity at a concrete dtype: bool for "bool", int64_t for the signed
/// integers and "index", uint64_t for the unsigned integers, double for the
/// floats (f16, bf16, f32, f64; the value exactly, rounding is the user's).
using ReducerIdentityValue = std::variant<bool, int64_t, uint64_t, double>;
/// The identity `id` at dtype `dtype` ("f32", "i8", "u8", "bool", "index",
/// ...); nothing for a name that is not a concrete dtype.
std::optional<ReducerIdentityValue> reducerIdentity(ReduceIdentity id, std::string_view dtype);

} // namespace linnet::ir

#endif // LINNET_IR_REDUCERS_H

//===- Value.h - Runtime values of the reference interpreter ----*- C++ -*-===//
//
// A scalar is one 8-byte cell: int64 for integers, bool and index (always
// normalized to the dtype's width, so an i8 holds -128..127), double for
// floats (always rounded to the dtype, so an f32 cell holds a float value
// exactly). Every operation computes in the dtype itself (f32 in float)
// and normalizes its result, which is what makes results comparable
// bit-for-bit-ish with compiled code.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_LIB_INTERP_VALUE_H
#define LINNET_LIB_INTERP_VALUE_H

#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Support/Numerics.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace linnet::interp {

/// Scalar dtypes. LitInt/LitFloat are untyped literals that no context
/// fixed (computed in i64/f64 until a typed operand or result fixes them).
enum class DT : uint8_t { Bool, U8, I8, I16, I32, I64, Index, F16, BF16, F32, F64, LitInt, LitFloat };

const char *dtName(DT t);
bool isFloat(DT t);
/// Parses a concrete dtype name ("f32", "index"); false if unknown.
bool dtFromName(const std::string &name, DT &out);
rt::DType toRt(DT t);
DT fromRt(rt::DType t);

union Num {
  double f;
  int64_t i;
};
inline Num numF(double f) { Num n; n.f = f; return n; }
inline Num numI(int64_t i) { Num n; n.i = i; return n; }

/// An error of the program being interpreted (or of its inputs); the
/// message is complete, the interpreter adds the op's location.
struct EvalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Rounds/wraps a raw value into dtype `t`.
Num normalize(DT t, Num x);

/// The numerics policy of the current thread's run (set by the
/// interpreter; docs/language/08, §8.4): under F32Compute a half op's result
/// stays f32 in a cell of the half dtype, rounded only where it is kept.
support::NumericsPolicy numericsPolicy();
void setNumericsPolicy(support::NumericsPolicy p);
/// An op's result of dtype `t`: normalize(), except a half result under
/// F32Compute, which is rounded to f32 only.
Num opResult(DT t, Num x);
/// Whether values of dtype `t` may hold unrounded f32 values (a half type
/// under F32Compute): where they are kept, keep() rounds them.
bool deferredRounding(DT t);
/// `x` of dtype `from` as dtype `to` (C semantics: float to int truncates
/// toward zero; out of range or NaN is an error).
Num convert(Num x, DT from, DT to);
double asDouble(DT t, Num x);
bool truthy(DT t, Num x);
std::string numStr(DT t, Num x);

/// The operators of arith, cmp and the builtins, decoded once from their
/// plan names (the interpreter caches each op's code).
enum class BinOp : uint8_t { Add, Sub, Mul, Div, Mod, And, Or, Max, Min, Pow };
enum class CmpPred : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
enum class UnOp : uint8_t { Neg, Not, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Erf, Sin, Cos };
std::optional<BinOp> binOpFromName(std::string_view name);
std::optional<CmpPred> cmpPredFromName(std::string_view name);
std::optional<UnOp> unOpFromName(std::string_view name);
const char *binOpName(BinOp o);
const char *unOpName(UnOp o);

/// Binary arithmetic in dtype `t` (both operands already of dtype `t`).
Num arith(BinOp op, DT t, Num a, Num b);
/// Comparison in dtype `t`.
bool compare(CmpPred pred, DT t, Num a, Num b);
/// A unary operator or builtin.
Num unary(UnOp op, DT t, Num a);

/// Bytes of a stored tensor element to a cell, and back.
Num loadElem(rt::DType t, const std::byte *p);
void storeElem(rt::DType t, Num x, std::byte *p);

struct Instance;
struct Val;

/// A relation in CSR form (destination-major), validated on entry.
struct Relation {
  int64_t numSrc = 0, numDst = 0;
  std::vector<int64_t> rowPtr, colIdx;
};

/// A value. Tensor data and relations are shared and never mutated once
/// built, so copying a Val is cheap and a state write simply replaces the
/// member's pointer.
struct Val {
  enum Kind : uint8_t { Unit, Scalar, Tensor, Tuple, Struct, Optional, Array, Block, Rel } k = Unit;
  DT dt = DT::F32;
  Num s{};                                   // Scalar
  std::vector<int64_t> shape;                // Tensor
  std::shared_ptr<const std::vector<Num>> data; // Tensor
  std::vector<Val> elems;                    // Tuple, Struct fields, Array, Optional (0 or 1)
  std::shared_ptr<const std::vector<std::string>> fields; // Struct
  Instance *inst = nullptr;                  // Block
  std::shared_ptr<const Relation> rel;       // Rel

  static Val scalar(DT t, Num x) {
    Val v;
    v.k = Scalar;
    v.dt = t;
    v.s = x;
    return v;
  }
  static Val tensor(DT t, std::vector<int64_t> shape, std::vector<Num> data) {
    Val v;
    v.k = Tensor;
    v.dt = t;
    v.shape = std::move(shape);
    // A tensor's elements are kept values: rounded to the dtype (under
    // NumericsPolicy::F32Compute a half op's results are f32 until here).
    if (deferredRounding(t))
      for (Num &x : data)
        x = normalize(t, x);
    v.data = std::make_shared<const std::vector<Num>>(std::move(data));
    return v;
  }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

std::string shapeStr(const std::vector<int64_t> &s);
const char *kindName(Val::Kind k);

} // namespace linnet::interp

#endif

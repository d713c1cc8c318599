//===- DimExpr.h - Signature dims of runtime.json (internal) ----*- C++ -*-===//
//
// A dim in an entry signature is an integer, a generic's name, or text over
// names and integers with `+ - * / %` (`/` and `%` floor, as dims do),
// parentheses, `min(a, b)` and `max(a, b)`. Evaluation is checked: an
// overflow, a zero divisor, an unbound name, nesting deeper than
// kMaxDimDepth or text longer than kMaxDimText give nullopt, never UB.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_LIB_RUNTIME_DIMEXPR_H
#define LINNET_LIB_RUNTIME_DIMEXPR_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace linnet::rt::dimexpr {

inline constexpr unsigned kMaxDimDepth = 64;
inline constexpr size_t kMaxDimText = 4096;

/// Looks up a name's value; nullopt when it is unbound.
using Lookup = std::function<std::optional<int64_t>(std::string_view)>;

/// The value of `text`, or nullopt (see above).
std::optional<int64_t> eval(std::string_view text, const Lookup &lookup);

/// Empty when `text` is well formed (every name bound or not); otherwise
/// what is wrong.
std::string checkSyntax(std::string_view text);

/// The names in `text` (not `min`/`max` before a parenthesis), in order.
std::vector<std::string> names(std::string_view text);

} // namespace linnet::rt::dimexpr

#endif

//===- Subst.h - Substituting generic bindings ------------------*- C++ -*-===//
//
// Bindings map a generic's stable id to its value. Substitution rewrites a
// symbolic dim, shape or type into the caller's (or the instance's) terms
// and renormalizes, so bound dims fold to integers.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SEMA_SUBST_H
#define LINNET_SEMA_SUBST_H

#include "linnet/Sema/Program.h"

#include <map>
#include <optional>

namespace linnet::sema {

using Bindings = std::map<std::string, GenericValue>;

Bindings bindingsOf(const std::vector<GenericParam> &gs, const std::vector<GenericValue> &vs);
Dim substDim(const Dim &d, const Bindings &b);
Shape substShape(const Shape &s, const Bindings &b);
Dtype substDtype(const Dtype &d, const Bindings &b);
GenericValue substValue(const GenericValue &v, const Bindings &b);
TypeRef substType(const TypeRef &t, const Bindings &b);
/// True/false when both sides fold to integers, nullopt while symbolic.
std::optional<bool> evalConstraint(const Constraint &c);

} // namespace linnet::sema

#endif // LINNET_SEMA_SUBST_H

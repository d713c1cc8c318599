//===- DerivedImpl.h - The derived products' shared helpers -----*- C++ -*-===//
//
// Private to lib/Planning: what the Derived*.cpp files, one per product of
// linnet/Planning/Derived.h, share (defined in Derived.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_LIB_PLANNING_DERIVEDIMPL_H
#define LINNET_LIB_PLANNING_DERIVEDIMPL_H

#include "linnet/Planning/Derived.h"

#include <string>
#include <vector>

namespace linnet::planning::detail {

/// A derivation key as its JSON object, and read back from `field`.
Json keyJson(const DerivationKey &k);
DerivationKey keyFrom(ObjReader &r, const char *field);
/// Refuses a document whose `schema` is not `schema`.
void expectSchema(ObjReader &r, const char *schema);
/// The command `id` of `c`, or null.
const Command *findCommand(const ConcretePlan &c, const std::string &id);
/// Phase timings (a projection's and a report's `phases`) and back.
Json phasesJson(const std::vector<PhaseTiming> &phases);
std::vector<PhaseTiming> phasesFrom(ObjReader &r);

} // namespace linnet::planning::detail

#endif // LINNET_LIB_PLANNING_DERIVEDIMPL_H

//===- GfIterOps.cpp - gf_iter (Iter IR) dialect ---------------------------===//

#include "linnet/Dialect/GfIter/IR/GfIter.h"
#include "linnet/Dialect/Gf/IR/Peer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace linnet;
using namespace linnet::gf_iter;

#include "linnet/Dialect/GfIter/IR/GfIterOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "linnet/Dialect/GfIter/IR/GfIterOpsTypes.cpp.inc"

void GfIterDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "linnet/Dialect/GfIter/IR/GfIterOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "linnet/Dialect/GfIter/IR/GfIterOps.cpp.inc"

gf::CoordinateHierarchy TraverseOp::getCoordinateHierarchyKind() {
  std::optional<gf::CoordinateHierarchy> kind =
      gf::symbolizeCoordinateHierarchy(getCoordinateHierarchy());
  assert(kind && "gf_iter.traverse with an unknown coordinate_hierarchy "
                 "(not verified?)");
  return *kind;
}

LogicalResult TraverseOp::verify() {
  auto sig = gf::MessageSignature::get(*this, getInputs(), "gf_iter.yield");
  if (failed(gf::verifyMessageSignature(*this, sig)))
    return failure();
  StringRef hierarchy = getCoordinateHierarchy();
  std::optional<gf::CoordinateHierarchy> kind =
      gf::symbolizeCoordinateHierarchy(hierarchy);
  if (!kind)
    return emitOpError() << "has unknown coordinate_hierarchy '" << hierarchy
                         << "'; expected "
                         << gf::describeCases<gf::CoordinateHierarchy>(
                                gf::getMaxEnumValForCoordinateHierarchy(),
                                gf::symbolizeCoordinateHierarchy);
  if (getOrdering() != "destination-major")
    return emitOpError() << "has ordering '" << getOrdering()
                         << "'; only 'destination-major' is supported";
  std::optional<gf::RelationFacts> relation = gf::RelationFacts::of(getRelation());
  if (!relation)
    return success(); // Not a well-formed gf.relation: its verifier reports it.
  StringRef realization = relation->realization;
  std::optional<gf::Realization> relationKind =
      gf::symbolizeRealization(realization);
  if (!relationKind)
    return success(); // The relation's own verifier reports it.
  std::optional<gf::CoordinateHierarchy> expected =
      gf::coordinateHierarchyFor(*relationKind);
  if (!expected)
    return emitOpError() << "cannot traverse a '" << realization
                         << "' relation: it has no Iter form";
  if (*expected != *kind)
    return emitOpError() << "enumerates a '" << realization
                         << "' relation with coordinate_hierarchy '"
                         << hierarchy << "'; expected '"
                         << gf::stringifyCoordinateHierarchy(*expected) << "'";
  return gf::verifyAgainstRelation(*this, sig, *relation);
}

LogicalResult TraverseOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return gf::verifyMessageReducers(
      *this, gf::MessageSignature::get(*this, getInputs(), "gf_iter.yield"),
      symbolTable);
}

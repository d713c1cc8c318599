//===- GfIterOps.cpp - gf_iter (Iter IR) dialect ---------------------------===//

#include "linnet/Dialect/GfIter/IR/GfIter.h"

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

LogicalResult TraverseOp::verify() {
  auto sig = gf::MessageSignature::get(*this, getInputs(), "gf_iter.yield");
  if (failed(gf::verifyMessageSignature(*this, sig)))
    return failure();
  StringRef hierarchy = getCoordinateHierarchy();
  if (hierarchy != "compressed-row" && hierarchy != "cartesian-product" &&
      hierarchy != "generated-neighborhood" && hierarchy != "ranked-pairs")
    return emitOpError() << "has unknown coordinate_hierarchy '" << hierarchy
                         << "'; expected compressed-row, cartesian-product, "
                            "generated-neighborhood or ranked-pairs";
  if (getOrdering() != "destination-major")
    return emitOpError() << "has ordering '" << getOrdering()
                         << "'; only 'destination-major' is supported";
  auto relation = getRelation().getDefiningOp<gf::RelationOp>();
  if (!relation)
    return success();
  StringRef realization = relation.getRealization();
  StringRef expected = gf::coordinateHierarchyFor(realization);
  if (expected.empty())
    return emitOpError() << "cannot traverse a '" << realization
                         << "' relation: it has no Iter form";
  if (expected != hierarchy)
    return emitOpError() << "enumerates a '" << realization
                         << "' relation with coordinate_hierarchy '"
                         << hierarchy << "'; expected '" << expected << "'";
  return gf::verifyAgainstRelation(*this, sig, relation);
}

LogicalResult TraverseOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return gf::verifyMessageReducers(
      *this, gf::MessageSignature::get(*this, getInputs(), "gf_iter.yield"),
      symbolTable);
}

//===- MessageSignature.h - checks shared by apply/traverse/launch -*- C++ -*-===//
//
// gf.apply, gf_iter.traverse and gf_kernel.launch carry the same message
// signature (reducers, region kinds, input segments, per-input versions,
// effects, roles and names) and the same edge regions. Their verifiers share
// these checks so a malformed signature reads the same at every stage.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_DIALECT_GF_IR_MESSAGESIGNATURE_H
#define LINNET_DIALECT_GF_IR_MESSAGESIGNATURE_H

#include "linnet/Dialect/Gf/IR/GfEnums.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringRef.h"

namespace linnet::gf {
class ReducerOp;
class RelationOp;
struct RelationFacts;

/// The accessors of a message-carrying op, gathered once.
struct MessageSignature {
  mlir::ArrayAttr reducers;
  llvm::ArrayRef<int64_t> regionKinds;
  llvm::ArrayRef<int64_t> inputSegmentSizes;
  llvm::ArrayRef<int64_t> snapshotVersions;
  mlir::ArrayAttr effects;
  mlir::ArrayAttr inputRoles;
  mlir::ArrayAttr inputNames;
  mlir::ValueRange inputs;
  mlir::TypeRange results;
  mlir::MutableArrayRef<mlir::Region> bodies;
  /// Name of the op that must terminate each body, e.g. "gf.yield".
  llvm::StringRef yieldName;

  template <typename OpT>
  static MessageSignature get(OpT op, mlir::ValueRange inputs,
                              llvm::StringRef yieldName) {
    return {op.getReducersAttr(),     op.getRegionKinds(),
            op.getInputSegmentSizes(), op.getSnapshotVersions(),
            op.getEffectsAttr(),      op.getInputRolesAttr(),
            op.getInputNamesAttr(),   inputs,
            op->getResultTypes(),     op->getRegions(),
            yieldName};
  }
};

/// Region kind 0: the edge region, computing one message per edge.
constexpr int64_t kEdgeRegionKind = 0;

/// Structural checks that need no symbol table: lengths, roles, effects,
/// segments, region arguments and terminators.
mlir::LogicalResult verifyMessageSignature(mlir::Operation *op,
                                           const MessageSignature &sig);

/// Checks that need the reducers: each names a gf.reducer, the yielded
/// messages match their message types and the results their result types.
mlir::LogicalResult
verifyMessageReducers(mlir::Operation *op, const MessageSignature &sig,
                      mlir::SymbolTableCollection &symbolTable);

/// Checks of the inputs and results against the relation's facts (versions
/// and static sizes); used where the relation operand is a well-formed
/// gf.relation (RelationFacts::of in Peer.h).
mlir::LogicalResult verifyAgainstRelation(mlir::Operation *op,
                                          const MessageSignature &sig,
                                          const RelationFacts &relation);

/// What each realization of a gf.relation implies. These tables are the
/// single source for the verifiers and the lowering passes.
/// Number of topology operands a realization needs; -1 means "at least one".
int expectedTopologyOperands(Realization realization);
/// The Iter coordinate hierarchy for a realization; none for Paged, which
/// has no Iter form.
std::optional<CoordinateHierarchy> coordinateHierarchyFor(Realization realization);
/// The Kernel traversal for a realization; none for Paged.
std::optional<Traversal> traversalFor(Realization realization);
/// Number of topology operands a Kernel traversal reads.
int topologyOperandsForTraversal(Traversal traversal);

/// The per-entity value type an input tensor contributes to a region: its
/// element type for a vector of scalars, the trailing dims otherwise.
mlir::Type entityValueType(mlir::Type tensorType);

} // namespace linnet::gf

#endif // LINNET_DIALECT_GF_IR_MESSAGESIGNATURE_H

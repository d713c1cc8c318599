//===- GfOps.cpp - gf (Domain) operations: verifiers, canonicalization ----===//

#include "linnet/Dialect/Gf/IR/Gf.h"
#include "linnet/Dialect/Gf/IR/Peer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace linnet::gf;

#define GET_OP_CLASSES
#include "linnet/Dialect/Gf/IR/GfOps.cpp.inc"

static std::string typeList(TypeRange types) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "(";
  llvm::interleaveComma(types, os);
  os << ")";
  return s;
}

//===----------------------------------------------------------------------===//
// ReducerOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyReducerRegion(ReducerOp op, Region &region,
                                         StringRef name, TypeRange args,
                                         TypeRange yields) {
  Block &block = region.front();
  if (block.getArgumentTypes() != args)
    return op.emitOpError() << name << " region takes "
                            << typeList(block.getArgumentTypes())
                            << " but expected " << typeList(args);
  auto yield = dyn_cast<ReducerYieldOp>(block.back());
  if (!yield)
    return op.emitOpError() << name << " region must end in gf.reducer_yield";
  if (yield.getValues().getTypes() != yields)
    return op.emitOpError() << name << " region yields "
                            << typeList(yield.getValues().getTypes())
                            << " but expected " << typeList(yields);
  return success();
}

LogicalResult ReducerOp::verifyRegions() {
  SmallVector<Type> messages(getMessageTypes().getAsValueRange<TypeAttr>());
  SmallVector<Type> state(getStateTypes().getAsValueRange<TypeAttr>());
  SmallVector<Type> results(getResultTypes().getAsValueRange<TypeAttr>());
  if (messages.empty() || state.empty() || results.empty())
    return emitOpError(
        "needs at least one message type, one state type and one result type");
  if (getKind() != "algebraic" && getKind() != "ordered")
    return emitOpError() << "has kind '" << getKind()
                         << "'; expected 'algebraic' or 'ordered'";
  // An algebraic reducer is a monoid: without associativity, partial states
  // could not be combined in any grouping, which is what makes it algebraic.
  if (getKind() == "algebraic" && !getAssociative())
    return emitOpError("of kind 'algebraic' must be associative; declare "
                       "kind = \"ordered\" for an order-dependent reducer");
  SmallVector<Type> twoStates(state);
  twoStates.append(state.begin(), state.end());
  if (failed(verifyReducerRegion(*this, getIdentity(), "identity", {}, state)) ||
      failed(verifyReducerRegion(*this, getLift(), "lift", messages, state)) ||
      failed(verifyReducerRegion(*this, getCombine(), "combine", twoStates,
                                 state)) ||
      failed(verifyReducerRegion(*this, getFinalize(), "finalize", state,
                                 results)))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// RelationOp
//===----------------------------------------------------------------------===//

Realization RelationOp::getRealizationKind() {
  std::optional<Realization> kind = symbolizeRealization(getRealization());
  assert(kind && "gf.relation with an unknown realization (not verified?)");
  return *kind;
}

LogicalResult RelationOp::verifyBuiltTopology() {
  // Positions first (rank-2 floats), then the run-time parameters as 0-d
  // tensors: a float radius, an integer k; the types tell them apart.
  bool radius = getRealizationKind() == Realization::Radius;
  SmallVector<RankedTensorType> positions;
  int floats = 0, ints = 0;
  for (Value v : getTopology()) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() == 2 && isa<FloatType>(t.getElementType()) && floats + ints == 0) {
      positions.push_back(t);
      continue;
    }
    if (t.getRank() == 0 && isa<FloatType>(t.getElementType()) && radius && !floats && !ints) {
      ++floats;
      continue;
    }
    if (t.getRank() == 0 && t.getElementType().isSignlessInteger() && !ints) {
      ++ints;
      continue;
    }
    return emitOpError() << "with realization '" << getRealization()
                         << "' takes float positions [points, axes], then "
                         << (radius ? "a 0-d float radius and " : "")
                         << "a 0-d integer k when not attributes; got " << t;
  }
  if (positions.empty() || positions.size() > 2)
    return emitOpError() << "with realization '" << getRealization()
                         << "' takes one or two position tensors, got " << positions.size();
  if (positions.size() == 2 && !positions[0].isDynamicDim(1) && !positions[1].isDynamicDim(1) &&
      positions[0].getDimSize(1) != positions[1].getDimSize(1))
    return emitOpError() << "has destination positions of " << positions[0].getDimSize(1)
                         << " axes and source positions of " << positions[1].getDimSize(1);
  auto points = [](RankedTensorType t) { return t.isDynamicDim(0) ? int64_t(-1) : t.getDimSize(0); };
  if (getNumDst() >= 0 && points(positions[0]) >= 0 && points(positions[0]) != getNumDst())
    return emitOpError() << "has " << points(positions[0]) << " destination positions but num_dst = "
                         << getNumDst();
  if (getNumSrc() >= 0 && points(positions.back()) >= 0 && points(positions.back()) != getNumSrc())
    return emitOpError() << "has " << points(positions.back()) << " source positions but num_src = "
                         << getNumSrc();
  if (radius && (floats == 1) == getRadius().has_value())
    return emitOpError() << "takes its radius as a 'radius' attribute or a 0-d float operand, "
                         << "exactly one of them";
  if (ints == 1 && getK())
    return emitOpError() << "takes k as a 'k' attribute or a 0-d integer operand, not both";
  if (!radius && !ints && !getK())
    return emitOpError("with realization 'knn' needs k: a 'k' attribute or a 0-d integer operand");
  if (getExcludeSelf() && positions.size() == 2 && getNumSrc() >= 0 && getNumDst() >= 0 &&
      getNumSrc() != getNumDst())
    return emitOpError() << "excludes (i, i) pairs but relates " << getNumDst()
                         << " destinations to " << getNumSrc() << " sources";
  return success();
}

LogicalResult RelationOp::verify() {
  StringRef realization = getRealization();
  std::optional<Realization> kind = symbolizeRealization(realization);
  if (!kind)
    return emitOpError() << "has unknown realization '" << realization
                         << "'; expected "
                         << describeCases<Realization>(
                                getMaxEnumValForRealization(),
                                symbolizeRealization);
  if (getRelationId().empty())
    return emitOpError("needs a non-empty relation_id");
  if (getVersion() < 0)
    return emitOpError() << "has negative version " << getVersion();
  if (getNumSrc() < -1 || getNumDst() < -1)
    return emitOpError("num_src and num_dst must be non-negative, or -1 "
                       "when unknown");

  int expected = expectedTopologyOperands(*kind);
  unsigned numTopology = getTopology().size();
  bool built = *kind == Realization::Radius || *kind == Realization::Knn;
  if (built && failed(verifyBuiltTopology()))
    return failure();
  if (!built && expected >= 0 && numTopology != static_cast<unsigned>(expected))
    return emitOpError() << "with realization '" << realization << "' takes "
                         << expected << " topology operand(s), got "
                         << numTopology;
  if (expected < 0 && numTopology == 0)
    return emitOpError() << "with realization '" << realization
                         << "' needs at least one topology operand";
  if (*kind == Realization::Materialized) {
    for (auto [i, v] : llvm::enumerate(getTopology())) {
      auto type = cast<RankedTensorType>(v.getType());
      if (type.getRank() != 1 || !type.getElementType().isSignlessInteger())
        return emitOpError() << (i == 0 ? "row_ptr" : "col_idx")
                             << " must be a 1-D tensor of integers, got "
                             << type;
    }
    auto rowPtr = cast<RankedTensorType>(getTopology()[0].getType());
    if (getNumDst() >= 0 && !rowPtr.isDynamicDim(0) &&
        rowPtr.getDimSize(0) != getNumDst() + 1)
      return emitOpError() << "row_ptr has " << rowPtr.getDimSize(0)
                           << " entries but num_dst + 1 = " << getNumDst() + 1;
  }

  std::optional<int64_t> dmin = getDegreeMin(), dmax = getDegreeMax();
  if ((dmin && *dmin < 0) || (dmax && *dmax < 0))
    return emitOpError("degree bounds must be non-negative");
  if (dmin && dmax && *dmin > *dmax)
    return emitOpError() << "has degree_min = " << *dmin
                         << " greater than degree_max = " << *dmax;
  if (*kind == Realization::Dense && getNumSrc() >= 0 &&
      ((dmin && *dmin != getNumSrc()) || (dmax && *dmax != getNumSrc())))
    return emitOpError() << "is dense, so every destination has num_src = "
                         << getNumSrc() << " neighbors; degree bounds disagree";
  if (*kind == Realization::Triangular && getNumSrc() >= 0 &&
      getNumDst() >= 0 && getNumSrc() != getNumDst())
    return emitOpError() << "is triangular and needs num_src == num_dst, got "
                         << getNumSrc() << " and " << getNumDst();

  if (getPageSize().has_value()) {
    if (*kind != Realization::Paged)
      return emitOpError("takes a 'page_size' only when realization = \"paged\"");
    if (*getPageSize() <= 0)
      return emitOpError() << "needs a positive page_size, got " << *getPageSize();
    if (numTopology != 2)
      return emitOpError() << "with a page_size takes a block table and row lengths, got "
                           << numTopology << " topology operand(s)";
    auto table = cast<RankedTensorType>(getTopology()[0].getType());
    auto lengths = cast<RankedTensorType>(getTopology()[1].getType());
    if (table.getRank() != 2 || !table.getElementType().isSignlessInteger())
      return emitOpError() << "block table must be a 2-D tensor of integers, got " << table;
    if (lengths.getRank() != 1 || !lengths.getElementType().isSignlessInteger())
      return emitOpError() << "row lengths must be a 1-D tensor of integers, got " << lengths;
  }
  if (getRadius() && *kind != Realization::Radius)
    return emitOpError("takes a 'radius' only when realization = \"radius\"");
  if (getRadius() && !(getRadius()->convertToDouble() >= 0.0))
    return emitOpError("needs a non-negative radius");
  if (getK() && !built)
    return emitOpError("takes 'k' only when realization = \"knn\" or \"radius\"");
  if (getExcludeSelf() && !built)
    return emitOpError("takes 'exclude_self' only when realization = \"knn\" or \"radius\"");
  if (std::optional<int64_t> k = getK()) {
    if (*k <= 0)
      return emitOpError() << "needs a positive k, got " << *k;
    if (dmax && *dmax > *k)
      return emitOpError() << "has at most k = " << *k
                           << " neighbors per destination; degree_max = " << *dmax
                           << " disagrees";
  }

  StringRef origin = getOrigin();
  if (origin != "external" && origin != "derived")
    return emitOpError() << "has origin '" << origin
                         << "'; expected 'external' or 'derived'";
  StringRef lifecycle = getLifecycle();
  if (lifecycle != "frozen" && lifecycle != "mutable")
    return emitOpError() << "has lifecycle '" << lifecycle
                         << "'; expected 'frozen' or 'mutable'";

  // Placement metadata: a mesh and the axis to partition destinations over.
  std::optional<ArrayRef<int64_t>> mesh = getMeshShape();
  if (mesh.has_value() != getMeshAxis().has_value())
    return emitOpError("takes mesh_shape and mesh_axis together");
  if (!mesh) {
    if (getPartitionBalance() || getHaloDepth())
      return emitOpError("has partition_balance or halo_depth but no "
                         "mesh_shape/mesh_axis to partition over");
    return success();
  }
  if (mesh->empty())
    return emitOpError("needs a non-empty mesh_shape");
  for (auto [i, extent] : llvm::enumerate(*mesh))
    if (extent <= 0)
      return emitOpError() << "has non-positive mesh_shape[" << i
                           << "] = " << extent;
  int64_t axis = *getMeshAxis();
  if (axis < 0 || axis >= static_cast<int64_t>(mesh->size()))
    return emitOpError() << "has mesh_axis = " << axis
                         << " out of range for a mesh of rank " << mesh->size();
  if (std::optional<StringRef> balance = getPartitionBalance())
    if (*balance != "edges" && *balance != "destinations")
      return emitOpError() << "has partition_balance '" << *balance
                           << "'; expected 'edges' or 'destinations'";
  if (std::optional<int64_t> depth = getHaloDepth())
    if (*depth < -1 || *depth == 0)
      return emitOpError() << "has halo_depth = " << *depth
                           << "; expected a positive depth or -1 (automatic)";
  return success();
}

//===----------------------------------------------------------------------===//
// EdgesOp
//===----------------------------------------------------------------------===//

LogicalResult EdgesOp::verify() {
  for (auto [name, v] : {std::pair<const char *, Value>{"row_ptr", getRowPtr()}, {"col_idx", getColIdx()}}) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || !t.getElementType().isSignlessInteger(64))
      return emitOpError() << name << " must be a 1-D tensor of i64, got " << t;
  }
  auto rel = getRelation().getDefiningOp<RelationOp>();
  auto rowPtr = cast<RankedTensorType>(getRowPtr().getType());
  if (rel && rel.getNumDst() >= 0 && !rowPtr.isDynamicDim(0) && rowPtr.getDimSize(0) != rel.getNumDst() + 1)
    return emitOpError() << "row_ptr has " << rowPtr.getDimSize(0) << " entries but the relation has "
                         << rel.getNumDst() << " destinations";
  return success();
}

LogicalResult EdgesOp::fold(FoldAdaptor, SmallVectorImpl<OpFoldResult> &results) {
  // A materialized relation's edges are its operands, when the types agree.
  auto rel = getRelation().getDefiningOp<RelationOp>();
  if (!rel || rel.getRealization() != "materialized" || rel.getTopology().size() != 2)
    return failure();
  if (rel.getTopology()[0].getType() != getRowPtr().getType() ||
      rel.getTopology()[1].getType() != getColIdx().getType())
    return failure();
  results.push_back(rel.getTopology()[0]);
  results.push_back(rel.getTopology()[1]);
  return success();
}

//===----------------------------------------------------------------------===//
// ApplyOp
//===----------------------------------------------------------------------===//

LogicalResult ApplyOp::verify() {
  auto sig = MessageSignature::get(*this, getInputs(), "gf.yield");
  if (failed(verifyMessageSignature(*this, sig)))
    return failure();
  if (std::optional<RelationFacts> relation = RelationFacts::of(getRelation()))
    return verifyAgainstRelation(*this, sig, *relation);
  return success();
}

LogicalResult ApplyOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyMessageReducers(
      *this, MessageSignature::get(*this, getInputs(), "gf.yield"),
      symbolTable);
}

namespace {
/// An apply over a relation with no destinations produces empty tensors.
struct FoldApplyOverEmptyRelation : OpRewritePattern<ApplyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ApplyOp op,
                                PatternRewriter &rewriter) const override {
    auto relation = op.getRelation().getDefiningOp<RelationOp>();
    if (!relation || relation.getNumDst() != 0)
      return rewriter.notifyMatchFailure(op, "relation may have destinations");
    SmallVector<Value> empties;
    for (Type t : op.getResultTypes()) {
      auto type = cast<RankedTensorType>(t);
      // Only the destination dim may be dynamic: it is the one we know.
      if (llvm::any_of(type.getShape().drop_front(), ShapedType::isDynamic))
        return rewriter.notifyMatchFailure(op, "dynamic trailing dims");
      SmallVector<Value> sizes;
      if (type.isDynamicDim(0))
        sizes.push_back(
            rewriter.create<arith::ConstantIndexOp>(op.getLoc(), 0));
      empties.push_back(
          rewriter.create<tensor::EmptyOp>(op.getLoc(), type, sizes));
    }
    rewriter.replaceOp(op, empties);
    return success();
  }
};

/// An apply whose results are unused and which writes nothing is dead. It is
/// not marked Pure because "write" effects on inputs are allowed.
struct EraseDeadApply : OpRewritePattern<ApplyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ApplyOp op,
                                PatternRewriter &rewriter) const override {
    if (!op->use_empty())
      return failure();
    for (Attribute effect : op.getEffects())
      if (cast<StringAttr>(effect).getValue() != "read")
        return failure();
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void ApplyOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<FoldApplyOverEmptyRelation, EraseDeadApply>(context);
}

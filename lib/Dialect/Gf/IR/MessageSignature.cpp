//===- MessageSignature.cpp - checks shared by apply/traverse/launch ------===//

#include "linnet/Dialect/Gf/IR/Gf.h"
#include "linnet/Dialect/Gf/IR/Peer.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace linnet::gf {

int expectedTopologyOperands(Realization r) {
  switch (r) {
  case Realization::Materialized:
    return 2; // row_ptr, col_idx
  case Realization::Dense:
  case Realization::Triangular:
    return 0;
  case Realization::Radius:
  case Realization::Knn:
    return 1; // positions
  case Realization::Paged:
    return -1; // page table and pages
  }
  llvm_unreachable("unknown realization");
}

std::optional<CoordinateHierarchy> coordinateHierarchyFor(Realization r) {
  switch (r) {
  case Realization::Materialized:
    return CoordinateHierarchy::CompressedRow;
  case Realization::Dense:
  case Realization::Triangular:
    return CoordinateHierarchy::CartesianProduct;
  case Realization::Radius:
    return CoordinateHierarchy::GeneratedNeighborhood;
  case Realization::Knn:
    return CoordinateHierarchy::RankedPairs;
  case Realization::Paged:
    return std::nullopt;
  }
  llvm_unreachable("unknown realization");
}

std::optional<Traversal> traversalFor(Realization r) {
  switch (r) {
  case Realization::Materialized:
    return Traversal::CsrRow;
  case Realization::Dense:
    return Traversal::DenseRow;
  case Realization::Triangular:
    return Traversal::TriangularRow;
  case Realization::Radius:
    return Traversal::RadiusCell;
  case Realization::Knn:
    return Traversal::KnnRow;
  case Realization::Paged:
    return std::nullopt;
  }
  llvm_unreachable("unknown realization");
}

int topologyOperandsForTraversal(Traversal t) {
  switch (t) {
  case Traversal::CsrRow:
    return 2;
  case Traversal::DenseRow:
  case Traversal::TriangularRow:
    return 0;
  case Traversal::RadiusCell:
  case Traversal::KnnRow:
    return 1;
  }
  llvm_unreachable("unknown traversal");
}

Type entityValueType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() == 0)
    return {};
  if (tensor.getRank() == 1)
    return tensor.getElementType();
  return RankedTensorType::get(tensor.getShape().drop_front(),
                               tensor.getElementType());
}

static std::string typeList(TypeRange types) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "(";
  llvm::interleaveComma(types, os);
  os << ")";
  return s;
}

static StringRef nameOf(const MessageSignature &sig, unsigned i) {
  if (sig.inputNames && i < sig.inputNames.size())
    if (auto s = dyn_cast<StringAttr>(sig.inputNames[i]))
      return s.getValue();
  return "?";
}

LogicalResult verifyMessageSignature(Operation *op,
                                     const MessageSignature &sig) {
  size_t n = sig.inputs.size();
  auto checkLength = [&](StringRef name, size_t len) -> LogicalResult {
    if (len == n)
      return success();
    return op->emitOpError()
           << "has " << n << " field input(s) but " << name << " has " << len
           << " entr" << (len == 1 ? "y" : "ies")
           << "; input_roles, input_names, effects and snapshot_versions "
              "need one entry per input";
  };
  if (failed(checkLength("input_roles", sig.inputRoles.size())) ||
      failed(checkLength("input_names", sig.inputNames.size())) ||
      failed(checkLength("effects", sig.effects.size())) ||
      failed(checkLength("snapshot_versions", sig.snapshotVersions.size())))
    return failure();

  llvm::DenseSet<StringRef> names;
  for (unsigned i = 0; i < n; ++i) {
    StringRef name = nameOf(sig, i);
    if (name.empty())
      return op->emitOpError() << "input #" << i << " has an empty name";
    if (!names.insert(name).second)
      return op->emitOpError() << "input name '" << name << "' is used twice";
    StringRef role = cast<StringAttr>(sig.inputRoles[i]).getValue();
    if (role != "src" && role != "dst" && role != "edge")
      return op->emitOpError()
             << "input #" << i << " ('" << name << "') has role '" << role
             << "'; expected one of src, dst, edge";
    StringRef effect = cast<StringAttr>(sig.effects[i]).getValue();
    if (effect != "read" && effect != "write" && effect != "read-write")
      return op->emitOpError()
             << "input #" << i << " ('" << name << "') has effect '" << effect
             << "'; expected read, write or read-write";
    if (sig.snapshotVersions[i] < 0)
      return op->emitOpError() << "input #" << i << " ('" << name
                               << "') has a negative snapshot version";
    if (!entityValueType(sig.inputs[i].getType()))
      return op->emitOpError()
             << "input #" << i << " ('" << name
             << "') must be a tensor indexed by entity (rank >= 1)";
  }

  if (sig.reducers.empty())
    return op->emitOpError() << "needs at least one reducer";

  size_t numRegions = sig.bodies.size();
  if (sig.regionKinds.size() != numRegions)
    return op->emitOpError() << "has " << numRegions
                             << " region(s) but region_kinds has "
                             << sig.regionKinds.size() << " entries";
  if (sig.inputSegmentSizes.size() != numRegions)
    return op->emitOpError() << "has " << numRegions
                             << " region(s) but input_segment_sizes has "
                             << sig.inputSegmentSizes.size() << " entries";
  if (numRegions == 0)
    return op->emitOpError() << "needs an edge region";

  int64_t total = 0;
  for (auto [r, size] : llvm::enumerate(sig.inputSegmentSizes)) {
    if (size < 0)
      return op->emitOpError() << "input_segment_sizes[" << r
                               << "] is negative";
    total += size;
  }
  if (total != static_cast<int64_t>(n))
    return op->emitOpError() << "input_segment_sizes sum to " << total
                             << " but the op has " << n << " field input(s)";

  unsigned first = 0;
  for (unsigned r = 0; r < numRegions; ++r) {
    if (sig.regionKinds[r] != kEdgeRegionKind)
      return op->emitOpError() << "region #" << r << " has kind "
                               << sig.regionKinds[r]
                               << "; only kind 0 (edge) is supported";
    Block &block = sig.bodies[r].front();
    int64_t segment = sig.inputSegmentSizes[r];
    if (static_cast<int64_t>(block.getNumArguments()) != segment)
      return op->emitOpError()
             << "region #" << r << " takes " << block.getNumArguments()
             << " argument(s) but input_segment_sizes gives it " << segment
             << " input(s)";
    for (unsigned j = 0; j < segment; ++j) {
      unsigned k = first + j;
      Type expected = entityValueType(sig.inputs[k].getType());
      Type actual = block.getArgument(j).getType();
      if (actual != expected)
        return op->emitOpError()
               << "region #" << r << " argument #" << j << " has type "
               << actual << " but input #" << k << " ('" << nameOf(sig, k)
               << "') provides " << expected;
    }
    first += segment;
    if (block.empty() ||
        block.back().getName().getStringRef() != sig.yieldName)
      return op->emitOpError()
             << "region #" << r << " must end in '" << sig.yieldName << "'";
  }

  for (auto [i, type] : llvm::enumerate(sig.results))
    if (!entityValueType(type))
      return op->emitOpError() << "result #" << i
                               << " must be a tensor indexed by destination";
  return success();
}

LogicalResult verifyMessageReducers(Operation *op, const MessageSignature &sig,
                                    SymbolTableCollection &symbolTable) {
  SmallVector<Type> messageTypes, resultTypes;
  SmallVector<ReducerOp> owners; // reducer owning each message type
  SmallVector<ReducerOp> resultOwners;
  for (Attribute attr : sig.reducers) {
    auto ref = cast<FlatSymbolRefAttr>(attr);
    Operation *target = symbolTable.lookupNearestSymbolFrom(op, ref.getAttr());
    if (!target)
      return op->emitOpError() << "uses unknown reducer " << ref;
    auto reducer = dyn_cast<ReducerOp>(target);
    if (!reducer)
      return op->emitOpError() << "reducer " << ref << " names a '"
                               << target->getName() << "', not a gf.reducer";
    for (Type t : reducer.getMessageTypes().getAsValueRange<TypeAttr>()) {
      messageTypes.push_back(t);
      owners.push_back(reducer);
    }
    for (Type t : reducer.getResultTypes().getAsValueRange<TypeAttr>()) {
      resultTypes.push_back(t);
      resultOwners.push_back(reducer);
    }
  }

  for (auto [r, region] : llvm::enumerate(sig.bodies)) {
    Operation *yield = &region.front().back();
    if (yield->getNumOperands() != messageTypes.size())
      return op->emitOpError()
             << "region #" << r << " yields " << yield->getNumOperands()
             << " message(s) but its reducers expect " << messageTypes.size()
             << " " << typeList(messageTypes);
    for (auto [i, value] : llvm::enumerate(yield->getOperands()))
      if (value.getType() != messageTypes[i])
        return op->emitOpError()
               << "message #" << i << " has type " << value.getType()
               << " but reducer @" << owners[i].getSymName() << " expects "
               << messageTypes[i];
  }

  if (sig.results.size() != resultTypes.size())
    return op->emitOpError() << "has " << sig.results.size()
                             << " result(s) but its reducers produce "
                             << resultTypes.size() << " "
                             << typeList(resultTypes);
  for (auto [i, type] : llvm::enumerate(sig.results))
    if (entityValueType(type) != resultTypes[i])
      return op->emitOpError()
             << "result #" << i << " holds " << entityValueType(type)
             << " per destination but reducer @"
             << resultOwners[i].getSymName() << " produces " << resultTypes[i];
  return success();
}

std::optional<RelationFacts> RelationFacts::of(Value relation) {
  auto op = peerOp<RelationOp>(relation);
  if (!op)
    return std::nullopt;
  auto id = peerAttr<StringAttr>(op, op.getRelationIdAttrName());
  auto realization = peerAttr<StringAttr>(op, op.getRealizationAttrName());
  std::optional<int64_t> version = peerInt(op, op.getVersionAttrName());
  std::optional<int64_t> numSrc = peerInt(op, op.getNumSrcAttrName());
  std::optional<int64_t> numDst = peerInt(op, op.getNumDstAttrName());
  if (!id || !realization || !version || !numSrc || !numDst)
    return std::nullopt;
  return RelationFacts{id.getValue(), realization.getValue(), *version, *numSrc, *numDst};
}

LogicalResult verifyAgainstRelation(Operation *op, const MessageSignature &sig,
                                    const RelationFacts &relation) {
  int64_t version = relation.version;
  for (unsigned i = 0; i < sig.inputs.size(); ++i) {
    if (sig.snapshotVersions[i] != version)
      return op->emitOpError()
             << "input #" << i << " ('" << nameOf(sig, i)
             << "') reads snapshot version " << sig.snapshotVersions[i]
             << " but relation '" << relation.id << "' is at version "
             << version;
    auto type = cast<RankedTensorType>(sig.inputs[i].getType());
    StringRef role = cast<StringAttr>(sig.inputRoles[i]).getValue();
    int64_t expected = role == "src"   ? relation.numSrc
                       : role == "dst" ? relation.numDst
                                       : -1;
    if (expected >= 0 && !type.isDynamicDim(0) && type.getDimSize(0) != expected)
      return op->emitOpError()
             << "input #" << i << " ('" << nameOf(sig, i) << "') has "
             << type.getDimSize(0) << " entries but role '" << role
             << "' needs " << (role == "src" ? "num_src" : "num_dst")
             << " = " << expected;
  }
  int64_t numDst = relation.numDst;
  for (auto [i, t] : llvm::enumerate(sig.results)) {
    auto type = cast<RankedTensorType>(t);
    if (numDst >= 0 && !type.isDynamicDim(0) && type.getDimSize(0) != numDst)
      return op->emitOpError()
             << "result #" << i << " has " << type.getDimSize(0)
             << " entries but relation '" << relation.id
             << "' has num_dst = " << numDst;
  }
  return success();
}

} // namespace linnet::gf

//===- GfTaskOps.cpp - gf_task (Task IR) dialect ---------------------------===//

#include "linnet/Dialect/GfTask/IR/GfTask.h"
#include "linnet/Dialect/Gf/IR/Peer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace linnet;
using namespace linnet::gf_task;

#include "linnet/Dialect/GfTask/IR/GfTaskOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "linnet/Dialect/GfTask/IR/GfTaskOpsTypes.cpp.inc"

void GfTaskDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "linnet/Dialect/GfTask/IR/GfTaskOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "linnet/Dialect/GfTask/IR/GfTaskOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "linnet/Dialect/GfTask/IR/GfTaskOps.cpp.inc"

LogicalResult GfTaskDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  if (attr.getName() != "gf_task.planned")
    return op->emitError() << "unknown gf_task attribute '" << attr.getName().getValue()
                           << "'";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError("'gf_task.planned' must be a unit attribute");
  if (op->getName().getStringRef() != "gf_kernel.launch")
    return op->emitError("'gf_task.planned' marks gf_kernel.launch ops only");
  return success();
}

// Halo plans, partitions and relations are peers of the ops below: read
// through gf::peerOp/peerAttr, as they may not be verified yet (Peer.h).

/// The partition a halo plan was made for, when visible.
static PartitionOp partitionOf(Value plan) {
  if (auto halo = gf::peerOp<HaloOp>(plan))
    return gf::peerOp<PartitionOp>(halo.getPartition());
  return {};
}

/// The snapshot version of a partition, when it has one.
static std::optional<int64_t> versionOf(PartitionOp partition) {
  return gf::peerInt(partition, "version");
}

/// A halo op may only move fields its plan covers.
static LogicalResult verifyPlannedField(Operation *op, Value plan,
                                        StringRef field) {
  auto halo = gf::peerOp<HaloOp>(plan);
  auto fields = gf::peerAttr<ArrayAttr>(halo, "fields");
  // Fields that are not all strings are the plan's own error.
  if (!fields || !llvm::all_of(fields, llvm::IsaPred<StringAttr>))
    return success();
  for (Attribute f : fields)
    if (cast<StringAttr>(f).getValue() == field)
      return success();
  return op->emitOpError() << "moves field '" << field
                           << "' which its halo plan does not cover";
}

static LogicalResult verifyVersion(Operation *op, Value plan,
                                   int64_t version) {
  if (version < 0)
    return op->emitOpError("has a negative snapshot_version");
  if (std::optional<int64_t> planned = versionOf(partitionOf(plan)))
    if (*planned != version)
      return op->emitOpError()
             << "moves snapshot version " << version
             << " but its partition is of version " << *planned;
  return success();
}

LogicalResult PartitionOp::verify() {
  if (getScheme() != "destination")
    return emitOpError() << "has scheme '" << getScheme()
                         << "'; only 'destination' is supported";
  ArrayRef<int64_t> mesh = getMeshShape();
  if (mesh.empty())
    return emitOpError("needs a non-empty mesh_shape");
  for (auto [i, extent] : llvm::enumerate(mesh))
    if (extent <= 0)
      return emitOpError() << "has non-positive mesh_shape[" << i
                           << "] = " << extent;
  if (getMeshAxis() < 0 || getMeshAxis() >= static_cast<int64_t>(mesh.size()))
    return emitOpError() << "has mesh_axis = " << getMeshAxis()
                         << " out of range for a mesh of rank " << mesh.size();
  if (getOwnedEntities() < -1)
    return emitOpError("owned_entities must be non-negative, or -1 when the "
                       "relation is sized at run time");
  if (getGhostEntities() < -1)
    return emitOpError("ghost_entities must be non-negative, or -1 when "
                       "known only at run time");
  if (std::optional<gf::RelationFacts> relation = gf::RelationFacts::of(getRelation())) {
    if (relation->version != getVersion())
      return emitOpError() << "is of version " << getVersion()
                           << " but relation '" << relation->id
                           << "' is at version " << relation->version;
    int64_t parts = mesh[getMeshAxis()];
    int64_t numDst = relation->numDst;
    if (numDst >= 0 && getOwnedEntities() < 0)
      return emitOpError() << "leaves owned_entities to run time, but relation '"
                           << relation->id << "' has " << numDst
                           << " destinations";
    int64_t covered;
    if (numDst >= 0 && !__builtin_mul_overflow(getOwnedEntities(), parts, &covered) &&
        covered < numDst)
      return emitOpError() << "owns " << getOwnedEntities() << " entities in "
                           << parts << " parts, fewer than the relation's "
                           << numDst << " destinations";
  }
  return success();
}

LogicalResult HaloOp::verify() {
  if (getDepth() < -1 || getDepth() == 0)
    return emitOpError() << "has depth = " << getDepth()
                         << "; expected a positive depth or -1 (automatic)";
  if (getFields().empty())
    return emitOpError("needs at least one field");
  StringRef strategy = getStrategy();
  if (strategy != "auto" && strategy != "alltoall" && strategy != "neighbor")
    return emitOpError() << "has strategy '" << strategy
                         << "'; expected auto, alltoall or neighbor";
  return success();
}

void HaloPackOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getSend(), "send");
  setNameFn(getDone(), "done");
}

/// Halo byte counts: exact, or -1 when the relation is sized at run time.
static LogicalResult verifyHaloBytes(Operation *op, int64_t bytes) {
  if (bytes < -1)
    return op->emitOpError() << "has bytes = " << bytes
                             << "; expected a non-negative count, or -1 when "
                                "the relation is sized at run time";
  return success();
}

LogicalResult HaloPackOp::verify() {
  if (failed(verifyHaloBytes(*this, getBytes())))
    return failure();
  if (failed(verifyPlannedField(*this, getPlan(), getField())))
    return failure();
  return verifyVersion(*this, getPlan(), getSnapshotVersion());
}

void HaloExchangeOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getReceive(), "receive");
  setNameFn(getDone(), "done");
}

LogicalResult HaloExchangeOp::verify() {
  if (failed(verifyHaloBytes(*this, getBytes())))
    return failure();
  if (getGroup().empty())
    return emitOpError("needs a communication group");
  if (std::optional<int64_t> packed = gf::peerInt(gf::peerOp<HaloPackOp>(getSend()), "bytes"))
    if (*packed != getBytes())
      return emitOpError() << "exchanges " << getBytes()
                           << " bytes but its send buffer was packed with "
                           << *packed;
  return verifyVersion(*this, getPlan(), getSnapshotVersion());
}

LogicalResult HaloUnpackOp::verify() {
  if (failed(verifyPlannedField(*this, getPlan(), getField())))
    return failure();
  return verifyVersion(*this, getPlan(), getSnapshotVersion());
}

TaskKind LaunchOp::getTaskKindEnum() {
  std::optional<TaskKind> kind = symbolizeTaskKind(getTaskKind());
  assert(kind && "gf_task.launch with an unknown task_kind (not verified?)");
  return *kind;
}

LogicalResult LaunchOp::verify() {
  StringRef name = getTaskKind();
  std::optional<TaskKind> kind = symbolizeTaskKind(name);
  if (!kind)
    return emitOpError() << "has task_kind '" << name << "'; expected "
                         << gf::describeCases<TaskKind>(
                                getMaxEnumValForTaskKind(), symbolizeTaskKind,
                                "'");
  bool whole = *kind == TaskKind::Whole;
  if (whole == static_cast<bool>(getPartition()))
    return emitOpError() << "of kind '" << name << "' "
                         << (whole ? "must not take" : "needs")
                         << " a partition";
  // Boundary destinations read ghosts, so something must order them after
  // the halo arrives.
  if (*kind == TaskKind::Boundary && getDependencies().empty())
    return emitOpError("of kind 'boundary' must depend on the halo unpack "
                       "event");
  if (getSnapshotVersion() < 0)
    return emitOpError("has a negative snapshot_version");
  if (std::optional<int64_t> planned = versionOf(gf::peerOp<PartitionOp>(getPartition())))
    if (*planned != getSnapshotVersion())
      return emitOpError() << "runs on snapshot version "
                           << getSnapshotVersion()
                           << " but its partition is of version " << *planned;
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *callee =
      symbolTable.lookupNearestSymbolFrom(*this, getCalleeAttr().getAttr());
  if (!callee)
    return emitOpError() << "launches unknown function " << getCalleeAttr();
  if (!isa<FunctionOpInterface>(callee))
    return emitOpError() << "callee " << getCalleeAttr() << " is a '"
                         << callee->getName() << "', not a function";
  return success();
}

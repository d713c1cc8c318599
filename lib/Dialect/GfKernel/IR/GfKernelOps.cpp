//===- GfKernelOps.cpp - gf_kernel (Kernel IR) dialect ---------------------===//

#include "linnet/Dialect/GfKernel/IR/GfKernel.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace linnet;
using namespace linnet::gf_kernel;

#include "linnet/Dialect/GfKernel/IR/GfKernelOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "linnet/Dialect/GfKernel/IR/GfKernelOpsTypes.cpp.inc"

void GfKernelDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "linnet/Dialect/GfKernel/IR/GfKernelOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "linnet/Dialect/GfKernel/IR/GfKernelOps.cpp.inc"

unsigned LaunchOp::getNumTopologyOperands() {
  int64_t fields = 0;
  for (int64_t size : getInputSegmentSizes())
    fields += size;
  int64_t total = getArgs().size();
  return fields >= 0 && fields <= total ? total - fields : 0;
}

OperandRange LaunchOp::getTopology() {
  return getArgs().take_front(getNumTopologyOperands());
}

OperandRange LaunchOp::getInputs() {
  return getArgs().drop_front(getNumTopologyOperands());
}

gf::Traversal LaunchOp::getTraversalKind() {
  std::optional<gf::Traversal> kind = gf::symbolizeTraversal(getTraversal());
  assert(kind && "gf_kernel.launch with an unknown traversal (not verified?)");
  return *kind;
}

LogicalResult LaunchOp::verify() {
  int64_t fields = 0;
  for (int64_t size : getInputSegmentSizes())
    fields += size;
  if (fields > static_cast<int64_t>(getArgs().size()))
    return emitOpError() << "input_segment_sizes name " << fields
                         << " field inputs but the op has only "
                         << getArgs().size() << " operands";
  auto sig = gf::MessageSignature::get(*this, getInputs(), "gf_kernel.yield");
  if (failed(gf::verifyMessageSignature(*this, sig)))
    return failure();

  StringRef traversal = getTraversal();
  std::optional<gf::Traversal> kind = gf::symbolizeTraversal(traversal);
  if (!kind)
    return emitOpError() << "has unknown traversal '" << traversal
                         << "'; expected "
                         << gf::describeCases<gf::Traversal>(
                                gf::getMaxEnumValForTraversal(),
                                gf::symbolizeTraversal);
  int topology = gf::topologyOperandsForTraversal(*kind);
  if (getNumTopologyOperands() != static_cast<unsigned>(topology))
    return emitOpError() << "with traversal '" << traversal << "' reads "
                         << topology << " topology buffer(s) before its "
                         << "field inputs, got " << getNumTopologyOperands();
  if (getNumRows() < -1)
    return emitOpError("num_rows must be non-negative, or -1 when unknown");
  std::optional<int64_t> dmin = getDegreeMin(), dmax = getDegreeMax();
  if ((dmin && *dmin < 0) || (dmax && *dmax < 0))
    return emitOpError("degree bounds must be non-negative");
  if (dmin && dmax && *dmin > *dmax)
    return emitOpError() << "has degree_min = " << *dmin
                         << " greater than degree_max = " << *dmax;

  // The schedule is one decision: all of its properties or none.
  struct Field {
    StringRef name;
    bool present;
  };
  Field schedule[] = {
      {"schedule_kind", getScheduleKind().has_value()},
      {"block_rows", getBlockRows().has_value()},
      {"block_neighbors", getBlockNeighbors().has_value()},
      {"num_warps", getNumWarps().has_value()},
      {"pipeline_stages", getPipelineStages().has_value()},
      {"execution_roles", getExecutionRoles().has_value()},
      {"instruction_contracts", getInstructionContracts().has_value()},
      {"schedule_handoffs", getScheduleHandoffs().has_value()},
      {"schedule_resources", getScheduleResources().has_value()},
      {"target_contract", getTargetContract().has_value()}};
  const Field *firstPresent = nullptr, *firstMissing = nullptr;
  for (const Field &f : schedule) {
    if (f.present && !firstPresent)
      firstPresent = &f;
    if (!f.present && !firstMissing)
      firstMissing = &f;
  }
  if (firstPresent && firstMissing)
    return emitOpError() << "has a partial schedule: '" << firstPresent->name
                         << "' is set but '" << firstMissing->name
                         << "' is not";
  if (!firstPresent)
    return success();
  for (auto [name, value] :
       {std::pair<StringRef, int64_t>{"block_rows", *getBlockRows()},
        {"block_neighbors", *getBlockNeighbors()},
        {"num_warps", *getNumWarps()},
        {"pipeline_stages", *getPipelineStages()}})
    if (value <= 0)
      return emitOpError() << "has non-positive " << name << " = " << value;
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return gf::verifyMessageReducers(
      *this, gf::MessageSignature::get(*this, getInputs(), "gf_kernel.yield"),
      symbolTable);
}

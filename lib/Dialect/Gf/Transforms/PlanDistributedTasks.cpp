//===- PlanDistributedTasks.cpp - partition kernels over a mesh -----------===//
//
// Placement is a property of the relation (mesh_shape/mesh_axis), not of the
// kernel, so a launch is planned exactly when the gf.relation whose buffers
// it reads carries a mesh. Destinations are split into contiguous parts; a
// part reads remote values only through `src`-role inputs (edge inputs move
// with their destination's rows, dst inputs are owned), so only those fields
// get a halo. Sizes that depend on the topology's contents (the exact ghost
// count) are left to run time (-1) and storage is sized for the worst case;
// a relation sized at run time leaves every share and byte count to the
// runtime's partition (-1).
//
//===----------------------------------------------------------------------===//

#include "linnet/Dialect/Gf/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"

#include <map>

namespace linnet::gf {
#define GEN_PASS_DEF_GFPLANDISTRIBUTEDTASKS
#include "linnet/Dialect/Gf/Transforms/Passes.h.inc"
} // namespace linnet::gf

using namespace mlir;
using namespace linnet;

namespace {
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// a * b, saturating at INT64_MAX (degree^depth grows fast).
int64_t satMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/// Bytes one entity of an input occupies.
int64_t entityBytes(Type tensorType) {
  Type value = gf::entityValueType(tensorType);
  int64_t count = 1;
  if (auto shaped = dyn_cast<ShapedType>(value)) {
    for (int64_t d : shaped.getShape())
      count = ShapedType::isDynamic(d) ? count : satMul(count, d);
    value = shaped.getElementType();
  }
  return satMul(count, ceilDiv(value.getIntOrFloatBitWidth(), 8));
}

StringRef ownerMapAlgorithm(gf::RelationOp relation) {
  // Balancing edges splits the prefix sum of row degrees (row_ptr itself);
  // balancing destinations splits the rows evenly.
  return relation.getPartitionBalance().value_or("destinations") == "edges"
             ? "contiguous-destination-prefix"
             : "contiguous-destination-block";
}

StringRef ghostMapAlgorithm(gf::Realization realization) {
  switch (realization) {
  case gf::Realization::Materialized:
    return "csr-owned-row-remote-src-sort-unique";
  case gf::Realization::Radius:
  case gf::Realization::Knn:
    return "generated-neighbor-remote-src-sort-unique";
  case gf::Realization::Dense:
  case gf::Realization::Triangular:
  case gf::Realization::Paged:
    return "dense-remote-src-range";
  }
  llvm_unreachable("unknown realization");
}

StringRef neighborDiscovery(gf::Realization realization) {
  // Who needs which ids is only known from the topology's contents, except
  // for dense/triangular relations where the mesh alone decides it.
  switch (realization) {
  case gf::Realization::Dense:
  case gf::Realization::Triangular:
    return "static-from-mesh";
  case gf::Realization::Materialized:
  case gf::Realization::Radius:
  case gf::Realization::Knn:
  case gf::Realization::Paged:
    return "alltoall-counts-then-request-ids";
  }
  llvm_unreachable("unknown realization");
}

struct PlanDistributedTasks
    : gf::impl::GfPlanDistributedTasksBase<PlanDistributedTasks> {
  using Base::Base;

  void runOnOperation() override {
    if (haloStrategy != "auto" && haloStrategy != "alltoall" &&
        haloStrategy != "neighbor") {
      getOperation().emitError()
          << "unknown halo strategy '" << haloStrategy
          << "'; expected auto, alltoall or neighbor";
      return signalPassFailure();
    }
    if (ranks < 0) {
      getOperation().emitError() << "ranks = " << int64_t(ranks)
                                 << "; expected a positive rank count";
      return signalPassFailure();
    }
    SmallVector<gf_kernel::LaunchOp> launches;
    // Relations by (topology buffers, num_dst): the facts a launch keeps.
    std::map<std::pair<std::vector<void *>, int64_t>,
             SmallVector<gf::RelationOp, 1>>
        relations;
    getOperation().walk([&](Operation *op) {
      if (auto launch = dyn_cast<gf_kernel::LaunchOp>(op))
        launches.push_back(launch);
      else if (auto relation = dyn_cast<gf::RelationOp>(op))
        relations[keyOf(relation.getTopology(), relation.getNumDst())]
            .push_back(relation);
    });
    // `ranks` places every relation declared without a mesh on a 1-D mesh
    // of that many parts (linnet build --ranks N); a declared mesh wins.
    if (ranks > 0)
      for (auto &[key, list] : relations)
        for (gf::RelationOp r : list)
          if (!r.hasPlacement()) {
            OpBuilder b(r);
            r.setMeshShapeAttr(b.getDenseI64ArrayAttr({int64_t(ranks)}));
            r.setMeshAxisAttr(b.getI64IntegerAttr(0));
          }

    DominanceInfo dominance(getOperation());
    for (gf_kernel::LaunchOp launch : launches) {
      if (launch->hasAttr("gf_task.planned"))
        continue;
      auto it = relations.find(keyOf(launch.getTopology(), launch.getNumRows()));
      if (it == relations.end())
        continue;
      SmallVector<gf::RelationOp, 1> candidates;
      for (gf::RelationOp r : it->second)
        if (r.hasPlacement() &&
            dominance.properlyDominates(r.getOperation(), launch.getOperation()))
          candidates.push_back(r);
      if (candidates.empty())
        continue; // No placement metadata: nothing to distribute.
      // The import states one relation per reduction over the same
      // topology: the launch is partitioned by the closest one, which every
      // other candidate dominates. Unordered candidates are ambiguous.
      gf::RelationOp closest;
      for (gf::RelationOp c : candidates)
        if (llvm::all_of(candidates, [&](gf::RelationOp o) {
              return o == c || dominance.properlyDominates(o.getOperation(),
                                                           c.getOperation());
            }))
          closest = c;
      if (!closest) {
        launch.emitOpError("reads buffers of several gf.relation ops with "
                           "placement metadata, none closer than the others; "
                           "cannot tell which to partition by");
        return signalPassFailure();
      }
      if (failed(plan(launch, closest)))
        return signalPassFailure();
    }
  }

  static std::pair<std::vector<void *>, int64_t> keyOf(ValueRange topology,
                                                       int64_t numDst) {
    std::vector<void *> key;
    for (Value v : topology)
      key.push_back(v.getAsOpaquePointer());
    return {std::move(key), numDst};
  }

  LogicalResult plan(gf_kernel::LaunchOp launch, gf::RelationOp relation) {
    auto function = launch->getParentOfType<FunctionOpInterface>();
    if (!function)
      return launch.emitOpError("must be inside a function to be planned "
                                "as tasks");
    ArrayRef<int64_t> mesh = *relation.getMeshShape();
    int64_t axis = *relation.getMeshAxis();
    int64_t parts = mesh[axis];
    int64_t numDst = relation.getNumDst(), numSrc = relation.getNumSrc();
    // A relation sized at run time (CSR inputs of an entry) is split by
    // the runtime: shares, ghost counts and halo bytes are -1 here.
    bool runTimeSizes = numDst < 0 || numSrc < 0;
    int64_t version = relation.getVersion();
    int64_t depth = relation.getHaloDepth().value_or(-1);
    int64_t ownedDst = runTimeSizes ? -1 : ceilDiv(numDst, parts);
    int64_t ownedSrc = runTimeSizes ? -1 : ceilDiv(numSrc, parts);
    // Worst case of remote sources a part reads: every other source, or
    // everything `depth` hops of at most degree_max neighbors reach.
    int64_t ghosts = runTimeSizes ? -1 : numSrc - std::min(ownedSrc, numSrc);
    if (std::optional<int64_t> dmax = launch.getDegreeMax(); dmax && !runTimeSizes) {
      int64_t reach = ownedDst;
      for (int64_t hop = 0; hop < std::max<int64_t>(depth, 1); ++hop)
        reach = satMul(reach, *dmax);
      ghosts = std::min(ghosts, reach);
    }
    gf::Realization realization = relation.getRealizationKind();
    int64_t exactGhosts = realization == gf::Realization::Dense ? ghosts : -1;

    // The fields read through the src role: the only remote reads.
    llvm::MapVector<StringRef, std::pair<Value, int64_t>> haloFields;
    for (auto [input, role, name, snapshot] :
         llvm::zip(launch.getInputs(), launch.getInputRoles(),
                   launch.getInputNames(), launch.getSnapshotVersions()))
      if (cast<StringAttr>(role).getValue() == "src")
        haloFields.insert(
            {cast<StringAttr>(name).getValue(), {input, snapshot}});

    OpBuilder b(launch);
    Location loc = launch.getLoc();
    auto partition = b.create<gf_task::PartitionOp>(
        loc, b.getType<gf_task::PartitionType>(), relation.getResult(),
        b.getStringAttr("destination"), b.getDenseI64ArrayAttr(mesh),
        b.getI64IntegerAttr(axis), b.getI64IntegerAttr(ownedDst),
        b.getI64IntegerAttr(exactGhosts), b.getI64IntegerAttr(version));
    partition->setAttr("owner_map_algorithm",
                       b.getStringAttr(ownerMapAlgorithm(relation)));
    partition->setAttr("ghost_map_algorithm",
                       b.getStringAttr(ghostMapAlgorithm(realization)));
    partition->setAttr("neighbor_discovery",
                       b.getStringAttr(neighborDiscovery(realization)));

    SmallVector<Attribute> fieldNames;
    for (auto &entry : haloFields)
      fieldNames.push_back(b.getStringAttr(entry.first));
    SmallVector<Value> haloDone;
    if (!haloFields.empty()) {
      auto halo = b.create<gf_task::HaloOp>(
          loc, b.getType<gf_task::HaloPlanType>(), partition,
          b.getI64IntegerAttr(depth), b.getArrayAttr(fieldNames),
          b.getStringAttr(haloStrategy));
      for (auto &[field, info] : haloFields) {
        auto [input, snapshot] = info;
        int64_t bytes = entityBytes(input.getType());
        int64_t ghostBytes = runTimeSizes ? -1 : satMul(ghosts, bytes);
        auto region = b.create<gf_storage::RegionOp>(
            loc, b.getType<gf_storage::RegionType>(), input,
            b.getStringAttr(field), b.getI64IntegerAttr(numSrc),
            b.getI64IntegerAttr(snapshot));
        auto instance = [&](int64_t capacity, StringRef device) {
          return b.create<gf_storage::InstanceOp>(
              loc, b.getType<gf_storage::InstanceType>(), region,
              b.getI64IntegerAttr(capacity), b.getStringAttr(device),
              b.getBoolAttr(true), b.getStringAttr("partitioned"),
              b.getStringAttr("device"));
        };
        auto local = instance(runTimeSizes ? -1 : satMul(ownedSrc, bytes), "local");
        auto ghost = instance(ghostBytes, "ghost");
        auto pack = b.create<gf_task::HaloPackOp>(
            loc, b.getType<gf_task::HaloBufferType>(),
            b.getType<gf_storage::EventType>(), halo, local,
            b.getStringAttr(field), b.getI64IntegerAttr(ghostBytes),
            b.getI64IntegerAttr(snapshot));
        auto exchange = b.create<gf_task::HaloExchangeOp>(
            loc, b.getType<gf_task::HaloBufferType>(),
            b.getType<gf_storage::EventType>(), halo, pack.getSend(),
            pack.getDone(), b.getI64IntegerAttr(ghostBytes),
            b.getStringAttr(relation.getRelationId()),
            b.getI64IntegerAttr(snapshot));
        auto unpack = b.create<gf_task::HaloUnpackOp>(
            loc, b.getType<gf_storage::EventType>(), halo,
            exchange.getReceive(), ghost, exchange.getDone(),
            b.getStringAttr(field), b.getI64IntegerAttr(snapshot));
        haloDone.push_back(unpack.getDone());
      }
    }

    SmallVector<Attribute> writes;
    for (unsigned i = 0, e = launch.getNumResults(); i < e; ++i)
      writes.push_back(
          b.getStringAttr(e == 1 ? std::string("out") : "out" + std::to_string(i)));
    auto callee = FlatSymbolRefAttr::get(
        b.getStringAttr(SymbolTable::getSymbolName(function).getValue()));
    auto task = [&](gf_task::TaskKind kind, ValueRange deps) {
      return b.create<gf_task::LaunchOp>(
          loc, b.getType<gf_storage::EventType>(), partition, deps, callee,
          b.getStringAttr(gf_task::stringifyTaskKind(kind)),
          b.getArrayAttr(fieldNames), b.getArrayAttr(writes),
          b.getI64IntegerAttr(version));
    };
    if (haloDone.empty()) {
      // Nothing remote is read: every destination is interior.
      task(gf_task::TaskKind::Interior, {});
    } else if (realization == gf::Realization::Dense) {
      // Every destination of a dense relation reads every part's sources:
      // there is no interior to overlap with the exchange.
      task(gf_task::TaskKind::Boundary, haloDone);
    } else {
      // Only destinations next to a part boundary read ghosts; the others
      // run while the halo is in flight.
      auto interior = task(gf_task::TaskKind::Interior, {});
      auto boundary = task(gf_task::TaskKind::Boundary, haloDone);
      b.create<gf_storage::JoinOp>(
          loc, b.getType<gf_storage::EventType>(),
          ValueRange{interior.getDone(), boundary.getDone()},
          b.getI64IntegerAttr(version));
    }
    launch->setAttr("gf_task.planned", b.getUnitAttr());
    return success();
  }
};
} // namespace

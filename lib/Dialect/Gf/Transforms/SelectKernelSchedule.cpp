//===- SelectKernelSchedule.cpp - derive a kernel's schedule --------------===//
//
// The schedule is a function of (relation facts, reducer algebra, message
// types, target contract); see the pass description in Passes.td for the
// rules. Keeping the derivation in one pure function (deriveSchedule) makes
// every number on a scheduled launch traceable to a fact or a contract limit.
//
//===----------------------------------------------------------------------===//

#include "linnet/Dialect/Gf/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

namespace linnet::gf {
#define GEN_PASS_DEF_GFSELECTKERNELSCHEDULE
#include "linnet/Dialect/Gf/Transforms/Passes.h.inc"
} // namespace linnet::gf

using namespace mlir;
using namespace linnet;

namespace {
/// What a target promises any kernel it runs: the limits a schedule must fit.
struct TargetContract {
  StringRef name;
  int64_t subgroupWidth;     // lanes that reduce together
  int64_t maxSubgroups;      // subgroups per workgroup
  int64_t tileMessages;      // messages one workgroup tile should hold
  int64_t maxPipelineStages; // in-flight neighbor chunks
};

constexpr TargetContract kContracts[] = {
    // Any SIMT device: 32-lane subgroups, 128-lane workgroups holding a
    // 256-message tile (two messages per lane), double buffering at most.
    {"provider-neutral-v1", 32, 4, 256, 2},
    // One CPU core with 512-bit vectors: 16 f32 lanes, no subgroups beyond
    // the core itself, a tile that stays in L1 registers' reach.
    {"cpu-simd-v1", 16, 1, 64, 2},
};

const TargetContract *lookupContract(StringRef name) {
  for (const TargetContract &c : kContracts)
    if (c.name == name)
      return &c;
  return nullptr;
}

struct Schedule {
  std::string kind;
  int64_t blockRows, blockNeighbors, numWarps, pipelineStages;
  SmallVector<StringRef> roles, contracts, handoffs, resources;
};

struct Facts {
  int64_t numRows;                  // -1: unknown
  std::optional<int64_t> degreeMin; // absent: unknown
  std::optional<int64_t> degreeMax;
  gf::Traversal traversal;
  bool associative;    // every reducer declares associativity
  bool scalarMessages; // every message is a scalar
  bool deterministic;
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

Schedule deriveSchedule(const Facts &f, const TargetContract &c) {
  Schedule s;
  // Neighbors per row tile: the longest row, rounded to a power of two so
  // lanes split evenly, but no wider than one subgroup reduction.
  bool boundsKnown = f.degreeMax.has_value();
  int64_t widest = boundsKnown ? std::max<int64_t>(*f.degreeMax, 1)
                               : c.subgroupWidth;
  s.blockNeighbors =
      std::min<int64_t>(llvm::PowerOf2Ceil(widest), c.subgroupWidth);
  // Rows per tile: fill the contract's tile, but never more (padded) rows
  // than the relation has.
  s.blockRows = std::max<int64_t>(1, c.tileMessages / s.blockNeighbors);
  if (f.numRows >= 0)
    s.blockRows = std::min<int64_t>(
        s.blockRows, llvm::PowerOf2Ceil(std::max<int64_t>(f.numRows, 1)));
  // One lane per message up to the workgroup limit.
  s.numWarps = std::clamp<int64_t>(
      ceilDiv(s.blockRows * s.blockNeighbors, c.subgroupWidth), 1,
      c.maxSubgroups);
  // Rows longer than one neighbor tile loop over chunks; pipelining those
  // chunks is worth one stage per chunk up to the contract's limit.
  int64_t chunks = boundsKnown ? ceilDiv(widest, s.blockNeighbors) : 0;
  bool bounded = boundsKnown && chunks <= 1;
  s.pipelineStages =
      bounded ? 1
              : std::min<int64_t>(c.maxPipelineStages,
                                  chunks > 0 ? chunks : c.maxPipelineStages);

  bool ragged = !(f.degreeMin && f.degreeMax && *f.degreeMin == *f.degreeMax);
  bool partialTiles = !boundsKnown || *f.degreeMax % s.blockNeighbors != 0 ||
                      f.numRows < 0 || f.numRows % s.blockRows != 0;
  s.kind = (Twine(bounded ? "bounded" : "chunked") + "-" +
            (ragged ? "ragged" : "uniform") + "-row-neighbor")
               .str();

  s.roles.push_back("workgroup.destination-rows");
  s.roles.push_back(f.associative ? "subgroup.neighbor-reduction"
                                  : "lane.sequential-neighbors");
  s.roles.push_back(f.scalarMessages ? "lane.scalar" : "lane.vector");

  if (ragged || partialTiles)
    s.contracts.push_back("masked-memory");
  s.contracts.push_back(f.associative ? "associative-reduce"
                                      : "ordered-reduce");
  if (f.deterministic && f.associative)
    s.contracts.push_back("fixed-order-reduce");

  if (s.pipelineStages > 1) {
    s.handoffs.push_back("load.global-to-shared");
    s.handoffs.push_back("load.shared-to-register");
  } else {
    s.handoffs.push_back("load.global-to-register");
  }
  s.handoffs.push_back(f.associative ? "reduce.subgroup" : "reduce.lane-serial");
  s.handoffs.push_back("store.register-to-global");

  // Dense and triangular relations have no topology buffers to read.
  bool implicit = f.traversal == gf::Traversal::DenseRow ||
                  f.traversal == gf::Traversal::TriangularRow;
  s.resources.push_back(implicit ? "relation.implicit"
                                 : "relation.global.read");
  s.resources.push_back("input.global.read");
  if (s.pipelineStages > 1)
    s.resources.push_back("input.shared.staged");
  s.resources.push_back("state.register.private");
  s.resources.push_back("output.global.write");
  return s;
}

struct SelectKernelSchedule
    : gf::impl::GfSelectKernelScheduleBase<SelectKernelSchedule> {
  using Base::Base;

  void runOnOperation() override {
    const TargetContract *contract = lookupContract(targetContract);
    if (!contract) {
      getOperation().emitError()
          << "unknown target contract '" << targetContract
          << "'; known contracts: provider-neutral-v1, cpu-simd-v1";
      return signalPassFailure();
    }
    SymbolTableCollection symbols;
    WalkResult result = getOperation().walk([&](gf_kernel::LaunchOp launch) {
      if (launch.isScheduled())
        return WalkResult::advance();
      Facts facts{launch.getNumRows(), launch.getDegreeMin(),
                  launch.getDegreeMax(), launch.getTraversalKind(),
                  /*associative=*/true, /*scalarMessages=*/true,
                  launch.getDeterministic()};
      for (Attribute ref : launch.getReducers()) {
        auto reducer = symbols.lookupNearestSymbolFrom<gf::ReducerOp>(
            launch, cast<FlatSymbolRefAttr>(ref));
        if (!reducer) {
          launch.emitOpError() << "cannot be scheduled: unknown reducer "
                               << ref;
          return WalkResult::interrupt();
        }
        facts.associative &= reducer.getAssociative();
        for (Type t : reducer.getMessageTypes().getAsValueRange<TypeAttr>())
          facts.scalarMessages &= t.isIntOrIndexOrFloat();
      }
      Schedule s = deriveSchedule(facts, *contract);
      Builder b(launch.getContext());
      launch.setScheduleKindAttr(b.getStringAttr(s.kind));
      launch.setBlockRowsAttr(b.getI64IntegerAttr(s.blockRows));
      launch.setBlockNeighborsAttr(b.getI64IntegerAttr(s.blockNeighbors));
      launch.setNumWarpsAttr(b.getI64IntegerAttr(s.numWarps));
      launch.setPipelineStagesAttr(b.getI64IntegerAttr(s.pipelineStages));
      launch.setExecutionRolesAttr(b.getStrArrayAttr(s.roles));
      launch.setInstructionContractsAttr(b.getStrArrayAttr(s.contracts));
      launch.setScheduleHandoffsAttr(b.getStrArrayAttr(s.handoffs));
      launch.setScheduleResourcesAttr(b.getStrArrayAttr(s.resources));
      launch.setTargetContractAttr(b.getStringAttr(contract->name));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

//===- LowerKernelToLoops.cpp - gf_kernel.launch to scf loops over memrefs ===//
//
// The CPU code generator's first step: a scheduled gf_kernel.launch becomes
// plain upstream loops over memrefs, which the upstream conversions then take
// to the LLVM dialect (see CPUCodegen.cpp). The loop nest is
//
//   scf.parallel over tiles of block_rows destinations   (thread unit)
//     scf.for over the tile's destinations d
//       state = identity()
//       scf.for over d's neighbors (by traversal) iter_args(state)
//         message = <launch region>(inputs at src / d / edge)
//         state   = combine(state, lift(message))
//       out[d] = finalize(state)
//
// Reducers are inlined from their gf.reducer regions, so any reducer (sum,
// max, an online softmax with a tuple state) lowers the same way. Per-entity
// values with a static feature axis (tensor<Fxf32> in the region) are rebuilt
// as vector<Fxf32> so the feature axis is SIMD; LLVM splits wide vectors into
// the host's registers.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/Passes.h"

#include "linnet/Dialect/Gf/IR/Gf.h"
#include "linnet/Dialect/GfKernel/IR/GfKernel.h"
#include "linnet/Dialect/GfStorage/IR/GfStorage.h"
#include "linnet/Dialect/GfTask/IR/GfTask.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"

namespace linnet::cpu {
#define GEN_PASS_DEF_GFLOWERKERNELTOLOOPS
#include "linnet/Target/CPU/Passes.h.inc"
} // namespace linnet::cpu

using namespace mlir;
using namespace linnet;

namespace {

/// The value type a per-entity value has in the loops: scalars stay, a small
/// static 1-D tensor becomes a vector (of `slice` elements when a thread
/// holds a slice of the feature axis). Null when the CPU lowering has no
/// form.
Type loweredValueType(Type type, int64_t slice = 0) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return type;
  if (tensor.getRank() != 1 || !tensor.hasStaticShape())
    return {};
  return VectorType::get({slice > 0 ? slice : tensor.getDimSize(0)}, tensor.getElementType());
}

bool hasTensorType(TypeRange types) {
  return llvm::any_of(types, [](Type t) { return isa<TensorType>(t); });
}

/// Clones one op of a message or reducer region at `b`, rebuilding ops on
/// small tensors as the same ops on vectors (of `slice` elements: the
/// thread's slice of the feature axis, where sliceable() holds).
LogicalResult cloneLowered(OpBuilder &b, Operation &op, IRMapping &map, int64_t slice = 0) {
  if (!hasTensorType(op.getOperandTypes()) && !hasTensorType(op.getResultTypes())) {
    b.clone(op, map);
    return success();
  }
  SmallVector<Type> types;
  for (Type t : op.getResultTypes()) {
    Type lowered = loweredValueType(t, slice);
    if (!lowered)
      return op.emitOpError() << "produces " << t
                              << "; the CPU lowering handles scalars and 1-D "
                                 "static tensors (a feature axis) only";
    types.push_back(lowered);
  }
  SmallVector<Value> operands;
  for (Value v : op.getOperands())
    operands.push_back(map.lookupOrDefault(v));

  Operation *made = nullptr;
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    if (!dense)
      return op.emitOpError("tensor constant must be a dense elements attribute");
    if (slice > 0 && !dense.isSplat())
      return op.emitOpError("a constant of distinct features cannot be sliced");
    made = b.create<arith::ConstantOp>(
        op.getLoc(), types[0],
        slice > 0 ? DenseElementsAttr::get(cast<ShapedType>(types[0]), dense.getSplatValue<Attribute>())
                  : dense.reshape(cast<ShapedType>(types[0])));
  } else if (isa<tensor::SplatOp>(op)) {
    made = b.create<vector::BroadcastOp>(op.getLoc(), types[0], operands[0]);
  } else if (op.getNumRegions() == 0 &&
             isa<arith::ArithDialect, math::MathDialect>(op.getDialect())) {
    // Elementwise arith/math ops are defined on vectors as on tensors.
    OperationState state(op.getLoc(), op.getName());
    state.addOperands(operands);
    state.addTypes(types);
    state.addAttributes(op.getAttrs());
    made = b.create(state);
  } else {
    return op.emitOpError()
           << "on tensors has no CPU lowering; message and reducer regions "
              "may use scalar ops and elementwise arith/math ops on 1-D "
              "tensors";
  }
  map.map(op.getResults(), made->getResults());
  return success();
}

/// Whether every op of `region` computes each feature from the same
/// feature of its operands (splat constants, splats, elementwise arith and
/// math on 1-D tensors of `width` features, scalar ops): then a thread can
/// run it on a slice of the feature axis.
bool sliceable(Region &region, int64_t width) {
  auto ok = [&](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return !tensor || (tensor.getRank() == 1 && tensor.hasStaticShape() && tensor.getDimSize(0) == width);
  };
  for (Type t : region.front().getArgumentTypes())
    if (!ok(t))
      return false;
  WalkResult r = region.walk([&](Operation *op) {
    if (!llvm::all_of(op->getOperandTypes(), ok) || !llvm::all_of(op->getResultTypes(), ok))
      return WalkResult::interrupt();
    if (!hasTensorType(op->getOperandTypes()) && !hasTensorType(op->getResultTypes())) {
      // A scalar op with regions is cloned whole: nothing in it may be a tensor.
      bool nested = false;
      op->walk([&](Operation *in) {
        nested |= in != op && (hasTensorType(in->getOperandTypes()) || hasTensorType(in->getResultTypes()));
      });
      return nested ? WalkResult::interrupt() : WalkResult::advance();
    }
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
      return dense && dense.isSplat() ? WalkResult::advance() : WalkResult::interrupt();
    }
    if (isa<tensor::SplatOp>(op) ||
        (op->getNumRegions() == 0 && isa<arith::ArithDialect, math::MathDialect>(op->getDialect())))
      return WalkResult::advance();
    // Region terminators pass values through.
    return op->hasTrait<OpTrait::IsTerminator>() ? WalkResult::advance() : WalkResult::interrupt();
  });
  return !r.wasInterrupted();
}

/// Inlines a single-block region at `b` with its arguments bound to `args`;
/// returns the values its terminator yields.
FailureOr<SmallVector<Value>> inlineRegion(OpBuilder &b, Region &region,
                                           ValueRange args, int64_t slice = 0) {
  Block &block = region.front();
  if (block.getNumArguments() != args.size())
    return emitError(region.getLoc())
           << "region takes " << block.getNumArguments() << " values, given "
           << args.size();
  IRMapping map;
  map.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    if (failed(cloneLowered(b, op, map, slice)))
      return failure();
  SmallVector<Value> yielded;
  for (Value v : block.getTerminator()->getOperands())
    yielded.push_back(map.lookupOrDefault(v));
  return yielded;
}

/// One neighbor folded into the reducers' states: the launch's message
/// region on `regionArgs`, then each reducer's lift and combine (on
/// `slice` features where the feature axis is split).
FailureOr<SmallVector<Value>> foldNeighbor(OpBuilder &b, Region &body, ArrayRef<gf::ReducerOp> reducers,
                                           ValueRange regionArgs, ValueRange state, int64_t slice = 0) {
  auto messages = inlineRegion(b, body, regionArgs, slice);
  if (failed(messages))
    return failure();
  SmallVector<Value> next;
  unsigned msgAt = 0, stateAt = 0;
  for (gf::ReducerOp r : reducers) {
    unsigned nm = r.getMessageTypes().size(), ns = r.getStateTypes().size();
    auto lifted = inlineRegion(b, r.getLift(), ArrayRef<Value>(*messages).slice(msgAt, nm), slice);
    if (failed(lifted))
      return failure();
    SmallVector<Value> pair(state.slice(stateAt, ns));
    llvm::append_range(pair, *lifted);
    auto combined = inlineRegion(b, r.getCombine(), pair, slice);
    if (failed(combined))
      return failure();
    llvm::append_range(next, *combined);
    msgAt += nm;
    stateAt += ns;
  }
  return next;
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

Value toIndex(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isIndex())
    return v;
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), v);
}

/// A thread's slice of the feature axis: `width` features from `offset`
/// (width 0: the whole axis).
struct FeatureSlice {
  Value offset;
  int64_t width = 0;
};

/// Reads entity `idx` of a field buffer: a scalar, or a vector of its row
/// (of the slice's features).
Value loadEntity(OpBuilder &b, Location loc, Value mem, Value idx, FeatureSlice slice = {}) {
  auto type = cast<MemRefType>(mem.getType());
  if (type.getRank() == 1)
    return b.create<memref::LoadOp>(loc, mem, idx);
  SmallVector<Value> indices{idx, slice.width > 0 ? slice.offset : indexConst(b, loc, 0)};
  auto vec = slice.width > 0 ? VectorType::get({slice.width}, type.getElementType())
                             : VectorType::get(type.getShape().drop_front(), type.getElementType());
  return b.create<vector::LoadOp>(loc, vec, mem, indices);
}

void storeEntity(OpBuilder &b, Location loc, Value value, Value mem, Value idx, FeatureSlice slice = {}) {
  auto type = cast<MemRefType>(mem.getType());
  if (type.getRank() == 1) {
    b.create<memref::StoreOp>(loc, value, mem, idx);
    return;
  }
  SmallVector<Value> indices{idx, slice.width > 0 ? slice.offset : indexConst(b, loc, 0)};
  b.create<vector::StoreOp>(loc, value, mem, indices);
}

/// A buffer type the CPU loops can index: rank 1, or rank 2 with a static
/// feature axis read as a vector.
MemRefType bufferTypeFor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() < 1 || tensor.getRank() > 2)
    return {};
  if (tensor.getRank() == 2 && tensor.isDynamicDim(1))
    return {};
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// The schedule as the loops carry it to a target that maps them.
DictionaryAttr scheduleAttr(OpBuilder &b, gf_kernel::LaunchOp launch) {
  SmallVector<NamedAttribute> schedule;
  for (StringRef name : {"block_rows", "block_neighbors", "num_warps", "pipeline_stages", "schedule_kind"})
    if (Attribute a = launch->getAttr(name))
      schedule.push_back(b.getNamedAttr(name, a));
  return b.getDictionaryAttr(schedule);
}

/// A phase of a lane-split tile: `body(row of the tile, k)` for every row
/// below `rows` and k below `inner`, as an `scf.parallel` marked for a
/// target that runs the phases of a tile over a block's threads. Only dims
/// of more than one iteration become loop dims: canonicalization rebuilds a
/// parallel loop without its unit dims (or inlines a loop of one iteration)
/// and drops the markers with it, and then the target cannot find the tile
/// (a relation with a single destination row, say). A phase of one
/// iteration runs on k = 0 of `spread` iterations instead.
void buildPhase(OpBuilder &b, Location loc, int64_t rows, int64_t inner, int64_t spread, DictionaryAttr schedule,
                function_ref<void(OpBuilder &, Value, Value)> body) {
  Value c0 = indexConst(b, loc, 0), c1 = indexConst(b, loc, 1);
  bool single = rows == 1 && inner == 1 && spread > 1;
  SmallVector<Value> ubs;
  if (rows > 1)
    ubs.push_back(indexConst(b, loc, rows));
  if (inner > 1 || single || ubs.empty())
    ubs.push_back(indexConst(b, loc, single ? spread : inner));
  SmallVector<Value> lbs(ubs.size(), c0), steps(ubs.size(), c1);
  auto p = b.create<scf::ParallelOp>(loc, lbs, ubs, steps);
  p->setAttr("linnet.lanes", b.getUnitAttr());
  // The phases carry the schedule too: canonicalization inlines a tile
  // loop of one tile, and the target finds the tile again from them.
  p->setAttr("linnet.tile_schedule", schedule);
  OpBuilder inb = OpBuilder::atBlockBegin(p.getBody());
  ValueRange ivs = p.getInductionVars();
  Value row = rows > 1 ? ivs[0] : c0;
  Value k = inner > 1 || single ? ivs.back() : c0;
  if (!single)
    return body(inb, row, k);
  auto first = inb.create<scf::IfOp>(loc, inb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, k, c0),
                                     /*withElse=*/false);
  OpBuilder fb = first.getThenBodyBuilder();
  body(fb, row, c0);
}

struct LaunchLowering {
  gf_kernel::LaunchOp launch;
  SymbolTableCollection &symbols;
  /// Tensor value -> the memref holding it.
  IRMapping &buffers;
  /// Split each row's neighbors over `block_neighbors` lanes (the
  /// schedule's subgroup.neighbor-reduction), where every reducer is
  /// associative: -gf-lower-kernel-to-loops{lane-split}.
  bool laneSplit = false;

  LogicalResult lower(ArrayRef<Value> outs);

private:
  /// One row: its neighbors reduced and finalized into `outs`. With
  /// `lane`/`lanes`, only neighbors lane, lane + lanes, ... are reduced and
  /// the partial states are stored into `partials` at `slot` instead.
  LogicalResult emitRow(OpBuilder &b, Location loc, Value d,
                        ArrayRef<gf::ReducerOp> reducers, ArrayRef<Value> outs,
                        Value lane = {}, int64_t lanes = 1,
                        ArrayRef<Value> partials = {}, ValueRange slot = {});
  LogicalResult lowerLaneSplit(ArrayRef<gf::ReducerOp> reducers,
                               ArrayRef<Value> outs);
  /// The feature axis (`features` wide) split over `lanes` threads of a
  /// row, the row's neighbors in tiles staged through the block's scratch.
  LogicalResult lowerFeatureSplit(ArrayRef<gf::ReducerOp> reducers, ArrayRef<Value> outs, int64_t features,
                                  int64_t lanes);
  /// The lanes over features where the CSR launch can split its feature
  /// axis (0 where it cannot): every feature buffer F wide, every region
  /// computing each feature from the same feature.
  int64_t featureLanes(ArrayRef<gf::ReducerOp> reducers, ArrayRef<Value> outs, int64_t &features);
  /// The reducers' finalize regions on a row's states, stored at row `d`.
  LogicalResult finalizeRow(OpBuilder &b, Location loc, ArrayRef<gf::ReducerOp> reducers,
                            ValueRange states, ArrayRef<Value> outs, Value d);
  FailureOr<Value> numSources(OpBuilder &b, Location loc);
};

FailureOr<Value> LaunchLowering::numSources(OpBuilder &b, Location loc) {
  auto roles = launch.getInputRoles();
  for (auto [i, input] : llvm::enumerate(launch.getInputs()))
    if (cast<StringAttr>(roles[i]).getValue() == "src")
      return b.create<memref::DimOp>(loc, buffers.lookup(input), 0).getResult();
  // No source field: the dense relation's own fact is the only other source.
  auto func = launch->getParentOfType<func::FuncOp>();
  int64_t found = -1;
  func.walk([&](gf::RelationOp rel) {
    if (rel.getRealizationKind() == gf::Realization::Dense &&
        rel.getNumSrc() >= 0)
      found = found == -1 ? rel.getNumSrc() : -2;
  });
  if (found < 0)
    return launch.emitOpError(
        "dense-row launch without a src input needs exactly one dense "
        "gf.relation with a known num_src in its function");
  return indexConst(b, loc, found);
}

LogicalResult LaunchLowering::emitRow(OpBuilder &b, Location loc, Value d,
                                      ArrayRef<gf::ReducerOp> reducers,
                                      ArrayRef<Value> outs, Value lane,
                                      int64_t lanes, ArrayRef<Value> partials,
                                      ValueRange slot) {
  gf::Traversal traversal = launch.getTraversalKind();
  auto topology = launch.getTopology();
  auto roles = launch.getInputRoles();
  Value c1 = indexConst(b, loc, 1);

  // Destination-indexed inputs are the same for the whole row.
  SmallVector<Value> args(launch.getInputs().size());
  for (auto [i, input] : llvm::enumerate(launch.getInputs()))
    if (cast<StringAttr>(roles[i]).getValue() == "dst")
      args[i] = loadEntity(b, loc, buffers.lookup(input), d);

  SmallVector<Value> init;
  for (gf::ReducerOp r : reducers) {
    auto state = inlineRegion(b, r.getIdentity(), {});
    if (failed(state))
      return failure();
    llvm::append_range(init, *state);
  }

  // Row bounds, and the edge ids of the implicit relations: row-major over
  // the pairs.
  Value lo, hi, numSrc, rowBase;
  switch (traversal) {
  case gf::Traversal::CsrRow: {
    Value rowPtr = buffers.lookup(topology[0]);
    lo = toIndex(b, loc, b.create<memref::LoadOp>(loc, rowPtr, d));
    Value next = b.create<arith::AddIOp>(loc, d, c1);
    hi = toIndex(b, loc, b.create<memref::LoadOp>(loc, rowPtr, next));
    break;
  }
  case gf::Traversal::DenseRow: {
    auto n = numSources(b, loc);
    if (failed(n))
      return failure();
    numSrc = *n;
    lo = indexConst(b, loc, 0);
    hi = numSrc;
    rowBase = b.create<arith::MulIOp>(loc, d, numSrc);
    break;
  }
  case gf::Traversal::TriangularRow:
    lo = indexConst(b, loc, 0);
    hi = b.create<arith::AddIOp>(loc, d, c1); // sources j <= i
    rowBase = b.create<arith::DivUIOp>(
        loc, b.create<arith::MulIOp>(loc, d, hi), indexConst(b, loc, 2));
    break;
  case gf::Traversal::RadiusCell:
  case gf::Traversal::KnnRow:
    return launch.emitOpError() << "traversal '" << launch.getTraversal()
                                << "' has no CPU lowering yet";
  }

  // A lane takes every `lanes`-th neighbor from its own.
  Value step = c1;
  int64_t stride = 1;
  if (lane) {
    lo = b.create<arith::AddIOp>(loc, lo, lane);
    step = indexConst(b, loc, lanes);
    stride = lanes;
  }
  LogicalResult status = success();
  // One neighbor reduced into the state: `src` is its source (for CSR
  // the column index, loaded by the caller), `iv` its position.
  auto reduceOne = [&](OpBuilder &lb, Location l, Value iv, Value src, ValueRange state) {
    Value edge = iv;
    if (traversal != gf::Traversal::CsrRow) {
      src = iv;
      edge = lb.create<arith::AddIOp>(l, rowBase, iv);
    }
    SmallVector<Value> regionArgs(args);
    for (auto [i, input] : llvm::enumerate(launch.getInputs())) {
      StringRef role = cast<StringAttr>(roles[i]).getValue();
      if (role == "src")
        regionArgs[i] = loadEntity(lb, l, buffers.lookup(input), src);
      else if (role == "edge")
        regionArgs[i] = loadEntity(lb, l, buffers.lookup(input), edge);
    }
    auto next = foldNeighbor(lb, launch.getBodies()[0], reducers, regionArgs, state);
    if (failed(next)) {
      status = failure();
      return SmallVector<Value>(state);
    }
    return *next;
  };
  bool csr = traversal == gf::Traversal::CsrRow;
  auto column = [&](OpBuilder &lb, Location l, Value iv) -> Value {
    return csr ? toIndex(lb, l, lb.create<memref::LoadOp>(l, buffers.lookup(topology[1]), iv)) : Value();
  };
  // The column index at `e`, or 0 past the row's end (a prefetch).
  auto columnIfInRow = [&](OpBuilder &lb, Location l, Value e) -> Value {
    auto inRow = lb.create<scf::IfOp>(l, lb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, e, hi),
                                      [&](OpBuilder &tb, Location tl) { tb.create<scf::YieldOp>(tl, column(tb, tl, e)); },
                                      [&](OpBuilder &eb, Location el) {
                                        eb.create<scf::YieldOp>(el, ValueRange{indexConst(eb, el, 0)});
                                      });
    return inRow.getResult(0);
  };
  auto plainLoop = [&](OpBuilder &pb, Location pl, Value from, ValueRange state) {
    return pb.create<scf::ForOp>(pl, from, hi, step, state,
                                 [&](OpBuilder &lb, Location l, Value iv, ValueRange st) {
                                   lb.create<scf::YieldOp>(l, reduceOne(lb, l, iv, column(lb, l, iv), st));
                                 });
  };

  // The schedule, where the target maps it (lane-split: the CUDA target).
  // schedule_kind "bounded-*": the relation's degree_max bounds a lane's
  // neighbors to `trips`; those steps are peeled as a loop of constant
  // trip count (unrolled by LLVM), each guarded by the row's end, and the
  // rest, empty when the fact holds, stays a loop: the same sum either way.
  // pipeline_stages S > 1 (chunked rows): each lane keeps the column
  // indices of its next S - 1 neighbors in flight, loaded before the
  // neighbor in hand is gathered and reduced (the gather's address no
  // longer waits on the index load).
  int64_t stages = 1, trips = 0;
  if (laneSplit && csr) {
    stages = std::clamp<int64_t>(launch.getPipelineStages().value_or(1), 1, 4);
    std::optional<StringRef> kind = launch.getScheduleKind();
    if (kind && kind->starts_with("bounded") && launch.getDegreeMax()) {
      trips = (std::max<int64_t>(*launch.getDegreeMax(), 0) + stride - 1) / stride;
      stages = 1;
    }
  }
  scf::ForOp loop;
  if (trips > 0) {
    auto peeled = b.create<scf::ForOp>(
        loc, indexConst(b, loc, 0), indexConst(b, loc, trips), c1, init,
        [&](OpBuilder &lb, Location l, Value t, ValueRange st) {
          Value e = lb.create<arith::AddIOp>(l, lo, lb.create<arith::MulIOp>(l, t, step));
          auto inRow = lb.create<scf::IfOp>(
              l, lb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, e, hi),
              [&](OpBuilder &tb, Location tl) { tb.create<scf::YieldOp>(tl, reduceOne(tb, tl, e, column(tb, tl, e), st)); },
              [&](OpBuilder &eb, Location el) { eb.create<scf::YieldOp>(el, st); });
          lb.create<scf::YieldOp>(l, inRow.getResults());
        });
    peeled->setAttr("linnet.bounded_trips", b.getI64IntegerAttr(trips));
    Value rest = b.create<arith::AddIOp>(loc, lo, indexConst(b, loc, trips * stride));
    loop = plainLoop(b, loc, rest, peeled.getResults());
  } else if (stages > 1) {
    // Iteration state: the reducers' states, then the S - 1 columns ahead.
    SmallVector<Value> carried(init);
    for (int64_t k = 0; k + 1 < stages; ++k)
      carried.push_back(columnIfInRow(
          b, loc, k == 0 ? lo : b.create<arith::AddIOp>(loc, lo, indexConst(b, loc, k * stride)).getResult()));
    size_t n = init.size();
    loop = b.create<scf::ForOp>(
        loc, lo, hi, step, carried, [&](OpBuilder &lb, Location l, Value iv, ValueRange st) {
          Value ahead = lb.create<arith::AddIOp>(l, iv, indexConst(lb, l, (stages - 1) * stride));
          Value fetched = columnIfInRow(lb, l, ahead);
          SmallVector<Value> next = reduceOne(lb, l, iv, st[n], st.take_front(n));
          llvm::append_range(next, st.drop_front(n + 1));
          next.push_back(fetched);
          lb.create<scf::YieldOp>(l, next);
        });
    loop->setAttr("linnet.pipeline_stages", b.getI64IntegerAttr(stages));
  } else {
    loop = plainLoop(b, loc, lo, init);
  }
  if (failed(status))
    return failure();
  ValueRange states = loop.getResults().take_front(init.size());
  if (lane) {
    for (auto [k, v] : llvm::enumerate(states))
      b.create<memref::StoreOp>(loc, v, partials[k], slot);
    return success();
  }

  return finalizeRow(b, loc, reducers, states, outs, d);
}

LogicalResult LaunchLowering::finalizeRow(OpBuilder &b, Location loc,
                                          ArrayRef<gf::ReducerOp> reducers,
                                          ValueRange states, ArrayRef<Value> outs,
                                          Value d) {
  unsigned stateAt = 0, outAt = 0;
  for (gf::ReducerOp r : reducers) {
    unsigned ns = r.getStateTypes().size();
    auto results = inlineRegion(b, r.getFinalize(), states.slice(stateAt, ns));
    if (failed(results))
      return failure();
    for (Value v : *results)
      storeEntity(b, loc, v, outs[outAt++], d);
    stateAt += ns;
  }
  return success();
}

LogicalResult LaunchLowering::lower(ArrayRef<Value> outs) {
  if (launch.getBodies().size() != 1)
    return launch.emitOpError("the CPU lowering handles one edge region");
  SmallVector<gf::ReducerOp> reducers;
  for (Attribute a : launch.getReducers()) {
    auto r = symbols.lookupNearestSymbolFrom<gf::ReducerOp>(
        launch, cast<FlatSymbolRefAttr>(a));
    if (!r)
      return launch.emitOpError() << "uses unknown reducer " << a;
    reducers.push_back(r);
  }

  int64_t lanesPerRow = launch.getBlockNeighbors().value_or(1);
  bool associative = llvm::all_of(reducers, [](gf::ReducerOp r) { return r.getAssociative(); });
  int64_t features = 0;
  if (laneSplit && launch.getTraversalKind() == gf::Traversal::CsrRow)
    if (int64_t lanes = featureLanes(reducers, outs, features))
      return lowerFeatureSplit(reducers, outs, features, lanes);
  if (laneSplit && associative && lanesPerRow > 1)
    return lowerLaneSplit(reducers, outs);

  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value c0 = indexConst(b, loc, 0), c1 = indexConst(b, loc, 1);
  // Rows are the destinations the output buffers hold.
  Value rows = b.create<memref::DimOp>(loc, outs[0], 0);
  int64_t blockRows = std::max<int64_t>(launch.getBlockRows().value_or(1), 1);
  Value tile = indexConst(b, loc, blockRows);
  // (rows + tile - 1) / tile: arith.ceildivui has no direct LLVM lowering.
  Value tiles = b.create<arith::DivUIOp>(
      loc,
      b.create<arith::AddIOp>(loc, rows, indexConst(b, loc, blockRows - 1)),
      tile);

  auto par = b.create<scf::ParallelOp>(loc, ValueRange{c0}, ValueRange{tiles},
                                       ValueRange{c1});
  OpBuilder pb = OpBuilder::atBlockBegin(par.getBody());
  Value r0 = pb.create<arith::MulIOp>(loc, par.getInductionVars()[0], tile);
  Value r1 = pb.create<arith::MinUIOp>(
      loc, pb.create<arith::AddIOp>(loc, r0, tile), rows);
  LogicalResult status = success();
  auto rowLoop = pb.create<scf::ForOp>(loc, r0, r1, c1, ValueRange{},
                                       [&](OpBuilder &rb, Location l, Value d, ValueRange) {
                                         status = emitRow(rb, l, d, reducers, outs);
                                         rb.create<scf::YieldOp>(l);
                                       });
  // The schedule travels with the loops for targets that map them to a
  // grid (the CUDA target: a block per tile, its threads over the rows).
  if (laneSplit) {
    rowLoop->setAttr("linnet.rows", b.getUnitAttr());
    par->setAttr("linnet.schedule", scheduleAttr(b, launch));
  }
  return status;
}


/// A tile of block_rows rows, each row's neighbors over block_neighbors
/// lanes: phase one, every (row, lane) reduces its share of the row into a
/// partial state of the tile's scratch; phase two, each row combines its
/// lanes' partials in lane order (a fixed order: the same result every
/// run), finalizes and stores. Both phases are `scf.parallel` loops marked
/// `linnet.lanes` inside the tile's loop, the scratch an allocation there
/// marked `linnet.workgroup`: a GPU runs a tile as a block, the phases over
/// its threads with a barrier between them, the scratch in shared memory.
LogicalResult LaunchLowering::lowerLaneSplit(ArrayRef<gf::ReducerOp> reducers,
                                             ArrayRef<Value> outs) {
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value c0 = indexConst(b, loc, 0), c1 = indexConst(b, loc, 1);
  Value rows = b.create<memref::DimOp>(loc, outs[0], 0);
  int64_t blockRows = std::max<int64_t>(launch.getBlockRows().value_or(1), 1);
  int64_t lanes = std::max<int64_t>(launch.getBlockNeighbors().value_or(1), 1);
  Value tile = indexConst(b, loc, blockRows);
  Value tiles = b.create<arith::DivUIOp>(
      loc, b.create<arith::AddIOp>(loc, rows, indexConst(b, loc, blockRows - 1)), tile);
  auto par = b.create<scf::ParallelOp>(loc, ValueRange{c0}, ValueRange{tiles}, ValueRange{c1});
  par->setAttr("linnet.schedule", scheduleAttr(b, launch));
  OpBuilder pb = OpBuilder::atBlockBegin(par.getBody());
  Value r0 = pb.create<arith::MulIOp>(loc, par.getInductionVars()[0], tile);

  // The scratch: one buffer per state value, [row of the tile][lane].
  SmallVector<Value> partials;
  for (gf::ReducerOp r : reducers)
    for (Attribute ta : r.getStateTypes()) {
      Type t = loweredValueType(cast<TypeAttr>(ta).getValue());
      if (!t.isIntOrIndexOrFloat() && !isa<VectorType>(t))
        return launch.emitOpError() << "a reducer state of type " << t << " cannot be split over lanes";
      auto scratch = pb.create<memref::AllocOp>(loc, MemRefType::get({blockRows, lanes}, t));
      scratch->setAttr("linnet.workgroup", pb.getUnitAttr());
      partials.push_back(scratch);
    }

  // Phase one: (row of the tile, lane).
  DictionaryAttr schedule = scheduleAttr(pb, launch);
  LogicalResult status = success();
  buildPhase(pb, loc, blockRows, lanes, lanes, schedule, [&](OpBuilder &rb, Value i, Value lane) {
    Value d = rb.create<arith::AddIOp>(loc, r0, i);
    auto inside = rb.create<scf::IfOp>(loc, rb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, d, rows),
                                       /*withElse=*/false);
    OpBuilder ib = inside.getThenBodyBuilder();
    status = emitRow(ib, loc, d, reducers, outs, lane, lanes, partials, ValueRange{i, lane});
  });
  if (failed(status))
    return failure();

  // Phase two: each row of the tile combines its lanes in order.
  buildPhase(pb, loc, blockRows, 1, lanes, schedule, [&](OpBuilder &cb, Value i, Value) {
    Value d = cb.create<arith::AddIOp>(loc, r0, i);
    auto inside = cb.create<scf::IfOp>(loc, cb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, d, rows),
                                       /*withElse=*/false);
    OpBuilder ib = inside.getThenBodyBuilder();
    SmallVector<Value> first;
    for (Value p : partials)
      first.push_back(ib.create<memref::LoadOp>(loc, p, ValueRange{i, c0}));
    auto fold = ib.create<scf::ForOp>(
        loc, c1, indexConst(ib, loc, lanes), c1, first,
        [&](OpBuilder &lb, Location l, Value lane, ValueRange state) {
          SmallVector<Value> next;
          unsigned at = 0;
          for (gf::ReducerOp r : reducers) {
            unsigned ns = r.getStateTypes().size();
            SmallVector<Value> pair(state.slice(at, ns));
            for (unsigned k = 0; k < ns; ++k)
              pair.push_back(lb.create<memref::LoadOp>(l, partials[at + k], ValueRange{i, lane}));
            auto combined = inlineRegion(lb, r.getCombine(), pair);
            if (failed(combined)) {
              status = failure();
              next.assign(state.begin(), state.end());
              break;
            }
            llvm::append_range(next, *combined);
            at += ns;
          }
          lb.create<scf::YieldOp>(l, next);
        });
    if (succeeded(status))
      status = finalizeRow(ib, loc, reducers, fold.getResults(), outs, d);
  });
  // The buffer deallocation pipeline frees the scratch after its tile.
  return status;
}

int64_t LaunchLowering::featureLanes(ArrayRef<gf::ReducerOp> reducers, ArrayRef<Value> outs,
                                     int64_t &features) {
  features = 0;
  SmallVector<Value> fields(outs);
  for (Value input : launch.getInputs())
    fields.push_back(buffers.lookup(input));
  for (Value f : fields) {
    auto type = dyn_cast<MemRefType>(f.getType());
    if (!type || type.getRank() > 2)
      return 0;
    if (type.getRank() == 2) {
      int64_t width = type.getDimSize(1);
      if (ShapedType::isDynamic(width) || (features && width != features))
        return 0;
      features = width;
    }
  }
  // Narrow rows gain nothing from splitting; 16 features a thread at most.
  if (features < 16)
    return 0;
  int64_t lanes = 32;
  while (lanes > 1 && features % lanes)
    lanes /= 2;
  if (lanes < 8 || features / lanes > 16)
    return 0;
  if (!sliceable(launch.getBodies()[0], features))
    return 0;
  for (gf::ReducerOp r : reducers)
    for (Region *region : {&r.getIdentity(), &r.getLift(), &r.getCombine(), &r.getFinalize()})
      if (!sliceable(*region, features))
        return 0;
  return lanes;
}

/// A tile of block_rows rows; each row's feature axis over `lanes` threads
/// (features / lanes each, a coalesced slice of every row they read) and
/// its neighbors in tiles of block_neighbors, staged through the block's
/// scratch: the tile's threads load the next tile's column indices (and
/// scalar edge values) together, then every lane of a row reduces the tile
/// for its slice, in neighbor order (any reducer: each feature is reduced
/// as the sequential loop reduces it). The tile loop runs to the tile's
/// largest degree, a value every thread computes alike (`linnet.uniform`),
/// so a GPU can keep a barrier after each phase inside it
/// (`linnet.neighbor_tiles`). pipeline_stages = 2 double-buffers the
/// staging: tile t + 1 is staged in the phase that reduces tile t.
LogicalResult LaunchLowering::lowerFeatureSplit(ArrayRef<gf::ReducerOp> reducers, ArrayRef<Value> outs,
                                                int64_t features, int64_t lanes) {
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  auto roles = launch.getInputRoles();
  auto inputs = launch.getInputs();
  Value rowPtr = buffers.lookup(launch.getTopology()[0]), colIdx = buffers.lookup(launch.getTopology()[1]);
  Value c0 = indexConst(b, loc, 0), c1 = indexConst(b, loc, 1);
  Value rows = b.create<memref::DimOp>(loc, outs[0], 0);
  const int64_t width = features / lanes;
  const int64_t blockRows = std::max<int64_t>(launch.getBlockRows().value_or(1), 1);
  const int64_t tileWidth = std::clamp<int64_t>(launch.getBlockNeighbors().value_or(32), 1, 1024);
  const int64_t stages = std::clamp<int64_t>(launch.getPipelineStages().value_or(1), 1, 2);
  Value tile = indexConst(b, loc, blockRows), T = indexConst(b, loc, tileWidth);
  Value tiles = b.create<arith::DivUIOp>(
      loc, b.create<arith::AddIOp>(loc, rows, indexConst(b, loc, blockRows - 1)), tile);
  auto par = b.create<scf::ParallelOp>(loc, ValueRange{c0}, ValueRange{tiles}, ValueRange{c1});
  DictionaryAttr schedule = scheduleAttr(b, launch);
  par->setAttr("linnet.schedule", schedule);
  OpBuilder pb = OpBuilder::atBlockBegin(par.getBody());
  Value r0 = pb.create<arith::MulIOp>(loc, par.getInductionVars()[0], tile);
  auto scratch = [&](ArrayRef<int64_t> shape, Type t) -> Value {
    auto a = pb.create<memref::AllocOp>(loc, MemRefType::get(shape, t));
    a->setAttr("linnet.workgroup", pb.getUnitAttr());
    return a;
  };

  // The block's scratch: each (row, lane)'s states, and the staged tiles.
  SmallVector<Value> states;
  for (gf::ReducerOp r : reducers)
    for (Attribute ta : r.getStateTypes()) {
      Type t = loweredValueType(cast<TypeAttr>(ta).getValue(), width);
      if (!t || (!t.isIntOrIndexOrFloat() && !isa<VectorType>(t)))
        return launch.emitOpError() << "a reducer state of type " << cast<TypeAttr>(ta).getValue()
                                    << " cannot be split over lanes";
      states.push_back(scratch({blockRows, lanes}, t));
    }
  Value cols = scratch({stages, blockRows, tileWidth}, cast<MemRefType>(colIdx.getType()).getElementType());
  SmallVector<Value> staged(inputs.size());
  for (auto [i, input] : llvm::enumerate(inputs)) {
    auto type = cast<MemRefType>(buffers.lookup(input).getType());
    if (cast<StringAttr>(roles[i]).getValue() == "edge" && type.getRank() == 1)
      staged[i] = scratch({stages, blockRows, tileWidth}, type.getElementType());
  }

  // Row d's bounds, where d is a row of the output.
  auto rowBounds = [&](OpBuilder &ob, Value d) -> std::pair<Value, Value> {
    Value lo = toIndex(ob, loc, ob.create<memref::LoadOp>(loc, rowPtr, d));
    Value next = ob.create<arith::AddIOp>(loc, d, c1);
    Value hi = toIndex(ob, loc, ob.create<memref::LoadOp>(loc, rowPtr, next));
    return {lo, hi};
  };
  auto ifRow = [&](OpBuilder &ob, Value i, function_ref<void(OpBuilder &, Value)> body) {
    Value d = ob.create<arith::AddIOp>(loc, r0, i);
    auto inside = ob.create<scf::IfOp>(loc, ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, d, rows),
                                       /*withElse=*/false);
    OpBuilder ib = inside.getThenBodyBuilder();
    body(ib, d);
  };

  // The tile's largest degree, every thread alike.
  auto degree = pb.create<scf::ForOp>(
      loc, c0, tile, c1, ValueRange{c0}, [&](OpBuilder &lb, Location l, Value i, ValueRange most) {
        Value d = lb.create<arith::AddIOp>(l, r0, i);
        auto deg = lb.create<scf::IfOp>(
            l, lb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, d, rows),
            [&](OpBuilder &tb, Location tl) {
              auto [lo, hi] = rowBounds(tb, d);
              tb.create<scf::YieldOp>(tl, ValueRange{tb.create<arith::SubIOp>(tl, hi, lo).getResult()});
            },
            [&](OpBuilder &eb, Location el) { eb.create<scf::YieldOp>(el, ValueRange{c0}); });
        lb.create<scf::YieldOp>(l, ValueRange{lb.create<arith::MaxSIOp>(l, most[0], deg.getResult(0)).getResult()});
      });
  degree->setAttr("linnet.uniform", pb.getUnitAttr());
  Value ntiles = pb.create<arith::DivUIOp>(
      loc, pb.create<arith::AddIOp>(loc, degree.getResult(0), indexConst(pb, loc, tileWidth - 1)), T);

  // A phase: (row of the tile, k < inner) over the block's threads.
  auto phase = [&](OpBuilder &ob, int64_t inner, function_ref<void(OpBuilder &, Value, Value)> body) {
    buildPhase(ob, loc, blockRows, inner, lanes, schedule, body);
  };
  auto loadStates = [&](OpBuilder &ob, Value i, Value l) {
    SmallVector<Value> st;
    for (Value s : states)
      st.push_back(ob.create<memref::LoadOp>(loc, s, ValueRange{i, l}));
    return st;
  };
  auto storeStates = [&](OpBuilder &ob, ValueRange st, Value i, Value l) {
    for (auto [s, v] : llvm::zip(states, st))
      ob.create<memref::StoreOp>(loc, v, s, ValueRange{i, l});
  };
  LogicalResult status = success();

  // The reducers' identities.
  phase(pb, lanes, [&](OpBuilder &ob, Value i, Value l) {
    SmallVector<Value> init;
    for (gf::ReducerOp r : reducers) {
      auto state = inlineRegion(ob, r.getIdentity(), {}, width);
      if (failed(state)) {
        status = failure();
        return;
      }
      llvm::append_range(init, *state);
    }
    storeStates(ob, init, i, l);
  });
  // Stage tile t of row i, entry k, into slot `slot`.
  auto stage = [&](OpBuilder &ob, Value i, Value k, Value t, Value slot) {
    ifRow(ob, i, [&](OpBuilder &ib, Value d) {
      auto [lo, hi] = rowBounds(ib, d);
      Value e = ib.create<arith::AddIOp>(loc, lo, ib.create<arith::AddIOp>(loc, ib.create<arith::MulIOp>(loc, t, T), k));
      auto in = ib.create<scf::IfOp>(loc, ib.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, e, hi),
                                     /*withElse=*/false);
      OpBuilder sb = in.getThenBodyBuilder();
      sb.create<memref::StoreOp>(loc, sb.create<memref::LoadOp>(loc, colIdx, e), cols, ValueRange{slot, i, k});
      for (auto [n, input] : llvm::enumerate(inputs))
        if (staged[n])
          sb.create<memref::StoreOp>(loc, sb.create<memref::LoadOp>(loc, buffers.lookup(input), e), staged[n],
                                     ValueRange{slot, i, k});
    });
  };
  // Reduce tile t (in `slot`) into row i's states, for lane l's features.
  auto reduce = [&](OpBuilder &ob, Value i, Value l, Value t, Value slot) {
    ifRow(ob, i, [&](OpBuilder &ib, Value d) {
      auto [lo, hi] = rowBounds(ib, d);
      Value base = ib.create<arith::AddIOp>(loc, lo, ib.create<arith::MulIOp>(loc, t, T));
      Value n = ib.create<arith::MinSIOp>(
          loc, ib.create<arith::MaxSIOp>(loc, ib.create<arith::SubIOp>(loc, hi, base), c0), T);
      FeatureSlice slice{ib.create<arith::MulIOp>(loc, l, indexConst(ib, loc, width)), width};
      SmallVector<Value> args(inputs.size());
      for (auto [n2, input] : llvm::enumerate(inputs))
        if (cast<StringAttr>(roles[n2]).getValue() == "dst")
          args[n2] = loadEntity(ib, loc, buffers.lookup(input), d, slice);
      auto loop = ib.create<scf::ForOp>(
          loc, c0, n, c1, loadStates(ib, i, l), [&](OpBuilder &lb, Location l2, Value k, ValueRange st) {
            Value src = toIndex(lb, l2, lb.create<memref::LoadOp>(l2, cols, ValueRange{slot, i, k}));
            Value e = lb.create<arith::AddIOp>(l2, base, k);
            SmallVector<Value> regionArgs(args);
            for (auto [n2, input] : llvm::enumerate(inputs)) {
              StringRef role = cast<StringAttr>(roles[n2]).getValue();
              if (role == "src")
                regionArgs[n2] = loadEntity(lb, l2, buffers.lookup(input), src, slice);
              else if (role == "edge")
                regionArgs[n2] = staged[n2] ? lb.create<memref::LoadOp>(l2, staged[n2], ValueRange{slot, i, k})
                                            : loadEntity(lb, l2, buffers.lookup(input), e, slice);
            }
            auto next = foldNeighbor(lb, launch.getBodies()[0], reducers, regionArgs, st, width);
            if (failed(next))
              status = failure();
            lb.create<scf::YieldOp>(l2, succeeded(next) ? ValueRange(*next) : st);
          });
      storeStates(ib, loop.getResults(), i, l);
    });
  };

  Value zero = c0;
  auto tilesLoop = pb.create<scf::ForOp>(loc, c0, ntiles, c1);
  tilesLoop->setAttr("linnet.neighbor_tiles", pb.getUnitAttr());
  tilesLoop->setAttr("linnet.tile_schedule", schedule);
  tilesLoop->setAttr("linnet.pipeline_stages", pb.getI64IntegerAttr(stages));
  if (stages == 1) {
    OpBuilder tb = OpBuilder::atBlockBegin(tilesLoop.getBody());
    Value t = tilesLoop.getInductionVar();
    phase(tb, tileWidth, [&](OpBuilder &ob, Value i, Value k) { stage(ob, i, k, t, zero); });
    phase(tb, lanes, [&](OpBuilder &ob, Value i, Value l) { reduce(ob, i, l, t, zero); });
  } else {
    // Tile 0 before the loop; tile t + 1 staged while tile t is reduced.
    OpBuilder before(tilesLoop);
    phase(before, tileWidth, [&](OpBuilder &ob, Value i, Value k) { stage(ob, i, k, zero, zero); });
    OpBuilder tb = OpBuilder::atBlockBegin(tilesLoop.getBody());
    Value t = tilesLoop.getInductionVar();
    Value two = indexConst(tb, loc, 2);
    Value next = tb.create<arith::AddIOp>(loc, t, c1);
    Value slot = tb.create<arith::RemUIOp>(loc, t, two), nextSlot = tb.create<arith::RemUIOp>(loc, next, two);
    Value more = tb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, next, ntiles);
    phase(tb, std::max(tileWidth, lanes), [&](OpBuilder &ob, Value i, Value k) {
      Value staging = ob.create<arith::AndIOp>(
          loc, more, ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, k, T));
      auto s = ob.create<scf::IfOp>(loc, staging, /*withElse=*/false);
      OpBuilder sb = s.getThenBodyBuilder();
      stage(sb, i, k, next, nextSlot);
      auto r = ob.create<scf::IfOp>(
          loc, ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, k, indexConst(ob, loc, lanes)),
          /*withElse=*/false);
      OpBuilder rb = r.getThenBodyBuilder();
      reduce(rb, i, k, t, slot);
    });
  }
  if (failed(status))
    return failure();

  // Finalize: each lane stores its slice (a scalar result, the same in
  // every lane, from lane 0).
  pb.setInsertionPointAfter(tilesLoop);
  phase(pb, lanes, [&](OpBuilder &ob, Value i, Value l) {
    ifRow(ob, i, [&](OpBuilder &ib, Value d) {
      FeatureSlice slice{ib.create<arith::MulIOp>(loc, l, indexConst(ib, loc, width)), width};
      SmallVector<Value> st = loadStates(ib, i, l);
      Value lane0 = ib.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, l, c0);
      unsigned stateAt = 0, outAt = 0;
      for (gf::ReducerOp r : reducers) {
        unsigned ns = r.getStateTypes().size();
        auto results = inlineRegion(ib, r.getFinalize(), ArrayRef<Value>(st).slice(stateAt, ns), width);
        if (failed(results)) {
          status = failure();
          return;
        }
        for (Value v : *results) {
          Value out = outs[outAt++];
          if (cast<MemRefType>(out.getType()).getRank() == 2) {
            storeEntity(ib, loc, v, out, d, slice);
          } else {
            auto first = ib.create<scf::IfOp>(loc, lane0, /*withElse=*/false);
            OpBuilder fb = first.getThenBodyBuilder();
            storeEntity(fb, loc, v, out, d);
          }
        }
        stateAt += ns;
      }
    });
  });
  return status;
}

/// Allocates the buffer of a launch result nobody passes in.
FailureOr<Value> allocResult(OpBuilder &b, gf_kernel::LaunchOp launch,
                             MemRefType type, IRMapping &buffers) {
  Location loc = launch.getLoc();
  SmallVector<Value> dyn;
  if (type.isDynamicDim(0)) {
    Value rows;
    if (launch.getTraversalKind() == gf::Traversal::CsrRow) {
      Value n = b.create<memref::DimOp>(loc, buffers.lookup(launch.getTopology()[0]), 0);
      rows = b.create<arith::SubIOp>(loc, n, indexConst(b, loc, 1));
    } else if (launch.getNumRows() >= 0) {
      rows = indexConst(b, loc, launch.getNumRows());
    } else {
      auto roles = launch.getInputRoles();
      for (auto [i, input] : llvm::enumerate(launch.getInputs()))
        if (!rows && cast<StringAttr>(roles[i]).getValue() == "dst")
          rows = b.create<memref::DimOp>(loc, buffers.lookup(input), 0);
      if (!rows)
        return launch.emitOpError(
            "an intermediate result needs a known row count (num_rows or a "
            "dst input)");
    }
    dyn.push_back(rows);
  }
  return b.create<memref::AllocOp>(loc, type, dyn).getResult();
}

bool isPlanningOp(Operation *op) {
  return isa<gf::RelationOp>(op) ||
         isa<gf_task::GfTaskDialect, gf_storage::GfStorageDialect>(op->getDialect());
}

LogicalResult lowerFunction(func::FuncOp func, SymbolTableCollection &symbols, bool laneSplit) {
  Block &entry = func.front();
  if (!llvm::hasSingleElement(func.getBody()))
    return func.emitOpError("with launches must have a single block");
  IRMapping buffers;

  // Arguments: tensors become memrefs in place.
  SmallVector<Type> argTypes;
  for (BlockArgument arg : entry.getArguments()) {
    if (isa<TensorType>(arg.getType())) {
      MemRefType mem = bufferTypeFor(arg.getType());
      if (!mem)
        return func.emitOpError() << "argument #" << arg.getArgNumber()
                                  << " of type " << arg.getType()
                                  << " has no CPU buffer form (rank 1, or rank "
                                     "2 with a static feature axis)";
      arg.setType(mem);
    }
    buffers.map(arg, arg);
    argTypes.push_back(arg.getType());
  }
  // Results: each tensor result becomes a trailing output buffer.
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  SmallVector<Type> resultTypes;
  SmallVector<Value> outArgs(ret.getNumOperands());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (!isa<TensorType>(v.getType())) {
      resultTypes.push_back(v.getType());
      continue;
    }
    MemRefType mem = bufferTypeFor(v.getType());
    if (!mem)
      return func.emitOpError() << "result #" << i << " of type " << v.getType()
                                << " has no CPU buffer form";
    outArgs[i] = entry.addArgument(mem, func.getLoc());
    argTypes.push_back(mem);
  }

  SmallVector<Operation *> dead;
  SmallVector<Value> allocs;
  DenseSet<Value> claimed;
  for (Operation &op : llvm::make_early_inc_range(entry.without_terminator())) {
    if (isPlanningOp(&op)) {
      dead.push_back(&op);
      continue;
    }
    // Buffers made in the function (-gf-expand-paged-relations): a tensor
    // read as a buffer is that buffer, a buffer read as a tensor names it
    // (and one allocated here is freed at the return).
    if (auto toMemref = dyn_cast<bufferization::ToMemrefOp>(op)) {
      // Its operand: the argument, already made a buffer in place (so not
      // read through the typed getTensor()).
      Value buf = buffers.lookupOrNull(toMemref->getOperand(0));
      if (!buf)
        return op.emitOpError("reads a tensor the CPU lowering has no buffer for");
      OpBuilder b(&op);
      if (buf.getType() != toMemref.getType())
        buf = b.create<memref::CastOp>(op.getLoc(), toMemref.getType(), buf);
      toMemref.getResult().replaceAllUsesWith(buf);
      dead.push_back(&op);
      continue;
    }
    if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(op)) {
      buffers.map(toTensor.getResult(), toTensor.getMemref());
      if (toTensor.getMemref().getDefiningOp<memref::AllocOp>())
        allocs.push_back(toTensor.getMemref());
      dead.push_back(&op);
      continue;
    }
    auto launch = dyn_cast<gf_kernel::LaunchOp>(op);
    if (!launch) {
      if (hasTensorType(op.getOperandTypes()) || hasTensorType(op.getResultTypes()))
        return op.emitOpError("on tensors has no CPU lowering in a kernel function");
      continue;
    }
    OpBuilder b(launch);
    SmallVector<Value> outs;
    for (Value result : launch.getResults()) {
      MemRefType mem = bufferTypeFor(result.getType());
      if (!mem)
        return launch.emitOpError() << "result of type " << result.getType()
                                    << " has no CPU buffer form";
      Value out;
      // Write straight into the caller's buffer when the result is returned.
      for (OpOperand &use : result.getUses())
        if (use.getOwner() == ret && !claimed.contains(outArgs[use.getOperandNumber()])) {
          out = outArgs[use.getOperandNumber()];
          claimed.insert(out);
          break;
        }
      if (!out) {
        auto made = allocResult(b, launch, mem, buffers);
        if (failed(made))
          return failure();
        out = *made;
        allocs.push_back(out);
      }
      buffers.map(result, out);
      outs.push_back(out);
    }
    if (failed(LaunchLowering{launch, symbols, buffers, laneSplit}.lower(outs)))
      return failure();
    dead.push_back(launch);
  }

  // Return: copy whatever was not computed in place, free the temporaries.
  OpBuilder b(ret);
  SmallVector<Value> scalars;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (!outArgs[i]) {
      scalars.push_back(v);
      continue;
    }
    Value src = buffers.lookupOrNull(v);
    if (!src)
      return ret.emitOpError() << "returns a tensor the CPU lowering did not compute";
    if (src != outArgs[i])
      b.create<memref::CopyOp>(ret.getLoc(), src, outArgs[i]);
  }
  for (Value a : allocs)
    b.create<memref::DeallocOp>(ret.getLoc(), a);
  b.create<func::ReturnOp>(ret.getLoc(), scalars);
  ret.erase();

  for (Operation *op : llvm::reverse(dead)) {
    op->dropAllUses();
    op->erase();
  }
  func.setType(FunctionType::get(func.getContext(), argTypes, resultTypes));
  func->setAttr("llvm.emit_c_interface", UnitAttr::get(func.getContext()));
  return success();
}

struct GfLowerKernelToLoopsPass
    : linnet::cpu::impl::GfLowerKernelToLoopsBase<GfLowerKernelToLoopsPass> {
  using GfLowerKernelToLoopsBase::GfLowerKernelToLoopsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SmallVector<func::FuncOp> funcs;
    module.walk([&](func::FuncOp f) {
      if (!f.isExternal() && !f.getBody().getOps<gf_kernel::LaunchOp>().empty())
        funcs.push_back(f);
    });
    for (func::FuncOp f : funcs)
      if (failed(lowerFunction(f, symbols, laneSplit)))
        return signalPassFailure();
    // A paged relation keeps its gf.apply (it has no Iter form): refused
    // here, at the apply, rather than by LLVM translation.
    WalkResult paged = module.walk([&](gf::ApplyOp apply) {
      auto relation = apply.getRelation().getDefiningOp<gf::RelationOp>();
      if (!relation || relation.getRealizationKind() != gf::Realization::Paged)
        return WalkResult::advance();
      apply.emitOpError() << "over a paged relation ('" << relation.getRelationId()
                          << "') has no page_size: only a paged relation with a block table, row lengths and a page_size lowers (-gf-expand-paged-relations)";
      return WalkResult::interrupt();
    });
    if (paged.wasInterrupted())
      return signalPassFailure();
    // Reducers were inlined; drop them once no gf op can refer to them.
    bool gfLeft = false;
    module.walk([&](Operation *op) {
      if (!isa<gf::ReducerOp>(op) && op->getDialect() &&
          isa<gf::GfDialect, gf_kernel::GfKernelDialect>(op->getDialect()) &&
          !op->getParentOfType<gf::ReducerOp>())
        gfLeft = true;
    });
    if (!gfLeft)
      for (auto r : llvm::make_early_inc_range(module.getOps<gf::ReducerOp>()))
        r.erase();
  }
};

} // namespace

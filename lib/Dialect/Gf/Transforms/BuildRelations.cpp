//===- BuildRelations.cpp - radius and kNN relations as compressed rows ----===//
//
// A relation built from coordinates (language §10.5) exists only once its
// pairs are found: a generated neighbourhood (radius: the sources within r,
// by grid binning, at most k per row) or ranked pairs (kNN: each row's k
// nearest, a bounded selection). Both are built by the target's routine
// (RelationBuilder.h), once per call, parallel over destination rows, into
// compressed rows that every reduction over the relation then shares with
// the CSR kernels of every target.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "linnet/Dialect/Gf/Transforms/Passes.h"
#include "linnet/Dialect/Gf/Transforms/RelationBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace linnet::gf {
#define GEN_PASS_DEF_GFBUILDRELATIONS
#include "linnet/Dialect/Gf/Transforms/Passes.h.inc"
} // namespace linnet::gf

using namespace mlir;
using namespace linnet;

namespace {

/// The operands of a radius/kNN relation, sorted by type (the verifier
/// checked the order): positions, then 0-d parameters.
struct BuiltOperands {
  Value dst, src, radius, k;
};

BuiltOperands classify(gf::RelationOp rel) {
  BuiltOperands o;
  for (Value v : rel.getTopology()) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() == 2)
      (o.dst ? o.src : o.dst) = v;
    else if (isa<FloatType>(t.getElementType()))
      o.radius = v;
    else
      o.k = v;
  }
  if (!o.src)
    o.src = o.dst;
  return o;
}

/// Positions as f64 (exact from every narrower float): a linalg.generic on
/// tensors, so bufferization owns its buffer like any other intermediate.
Value asF64(OpBuilder &b, Location loc, Value pos) {
  auto t = cast<RankedTensorType>(pos.getType());
  if (t.getElementType().isF64())
    return pos;
  Type f64 = b.getF64Type();
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < 2; ++d)
    if (t.isDynamicDim(d))
      dyn.push_back(b.create<tensor::DimOp>(loc, pos, d));
  Value init = b.create<tensor::EmptyOp>(loc, t.getShape(), f64, dyn);
  AffineMap id = b.getMultiDimIdentityMap(2);
  auto generic = b.create<linalg::GenericOp>(
      loc, init.getType(), ValueRange{pos}, ValueRange{init}, ArrayRef<AffineMap>{id, id},
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &gb, Location l, ValueRange args) {
        Value x = args[0];
        if (cast<FloatType>(x.getType()).getWidth() > 64)
          x = gb.create<arith::TruncFOp>(l, f64, x);
        else
          x = gb.create<arith::ExtFOp>(l, f64, x);
        gb.create<linalg::YieldOp>(l, x);
      });
  return generic.getResult(0);
}

/// A 0-d tensor's element, converted to `to` (i64 or f64).
Value scalar(OpBuilder &b, Location loc, Value t, Type to) {
  Value x = b.create<tensor::ExtractOp>(loc, t, ValueRange{});
  Type from = x.getType();
  if (from == to)
    return x;
  if (isa<FloatType>(to))
    return cast<FloatType>(from).getWidth() < 64 ? b.create<arith::ExtFOp>(loc, to, x).getResult()
                                                 : b.create<arith::TruncFOp>(loc, to, x).getResult();
  return from.getIntOrFloatBitWidth() < 64 ? b.create<arith::ExtSIOp>(loc, to, x).getResult()
                                           : b.create<arith::TruncIOp>(loc, to, x).getResult();
}

void declareBuilder(ModuleOp module, Location loc) {
  if (module.lookupSymbol(gf::kRelationBuilder))
    return;
  OpBuilder mb(module.getContext());
  mb.setInsertionPointToStart(module.getBody());
  Type f64 = mb.getF64Type(), i64 = mb.getI64Type();
  auto dyn2 = MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, f64);
  auto dyn1 = MemRefType::get({ShapedType::kDynamic}, i64);
  auto decl = mb.create<func::FuncOp>(loc, gf::kRelationBuilder,
                                      mb.getFunctionType({dyn2, dyn2, dyn1, dyn1, i64, i64, i64, f64}, {}));
  decl.setPrivate();
  decl->setAttr("llvm.emit_c_interface", mb.getUnitAttr());
}

/// Replaces a gf.edges by (rowPtr, colIdx), cast to the types it declared.
void replaceOne(gf::EdgesOp edges, Value rowPtr, Value colIdx) {
  OpBuilder b(edges);
  auto fit = [&](Value v, Type want) -> Value {
    return v.getType() == want ? v : b.create<tensor::CastOp>(edges.getLoc(), want, v).getResult();
  };
  edges.getRowPtr().replaceAllUsesWith(fit(rowPtr, edges.getRowPtr().getType()));
  edges.getColIdx().replaceAllUsesWith(fit(colIdx, edges.getColIdx().getType()));
  edges.erase();
}

/// Replaces every gf.edges of `rel`.
void replaceEdges(gf::RelationOp rel, Value rowPtr, Value colIdx) {
  for (Operation *user : llvm::make_early_inc_range(rel->getUsers()))
    if (auto edges = dyn_cast<gf::EdgesOp>(user))
      replaceOne(edges, rowPtr, colIdx);
}

void build(gf::RelationOp rel) {
  OpBuilder b(rel);
  Location loc = rel.getLoc();
  auto module = rel->getParentOfType<ModuleOp>();
  declareBuilder(module, loc);
  bool radius = rel.getRealizationKind() == gf::Realization::Radius;
  BuiltOperands o = classify(rel);
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  Value dst = asF64(b, loc, o.dst);
  Value src = o.src == o.dst ? dst : asF64(b, loc, o.src);

  auto extent = [&](Value t) -> std::pair<std::optional<int64_t>, Value> {
    auto tt = cast<RankedTensorType>(t.getType());
    if (!tt.isDynamicDim(0))
      return {tt.getDimSize(0), b.create<arith::ConstantIndexOp>(loc, tt.getDimSize(0))};
    return {std::nullopt, b.create<tensor::DimOp>(loc, t, 0)};
  };
  auto [m, mv] = extent(dst);
  auto [n, nv] = extent(src);

  // k: the attribute, the operand, or (a radius relation with no bound)
  // every source.
  std::optional<int64_t> k = rel.getK();
  if (!k && !o.k && radius)
    k = n;
  Value kv = k ? b.create<arith::ConstantIntOp>(loc, *k, 64).getResult()
           : o.k ? scalar(b, loc, o.k, i64)
                 : b.create<arith::IndexCastOp>(loc, i64, nv).getResult();
  // A negative run-time k builds no edges.
  if (!k)
    kv = b.create<arith::MaxSIOp>(loc, kv, b.create<arith::ConstantIntOp>(loc, 0, 64));
  Value kIndex = b.create<arith::IndexCastOp>(loc, b.getIndexType(), kv);
  Value r = !radius        ? b.create<arith::ConstantFloatOp>(loc, APFloat(0.0), b.getF64Type()).getResult()
            : rel.getRadius() ? b.create<arith::ConstantFloatOp>(loc, *rel.getRadius(), b.getF64Type()).getResult()
                              : scalar(b, loc, o.radius, f64);

  // Row offsets [M + 1] and column indices [M * k], owned by the tensors
  // made of them (bufferization frees them with the call's other buffers).
  std::optional<int64_t> rows = m ? std::optional<int64_t>(*m + 1) : std::nullopt;
  std::optional<int64_t> cap = m && k ? std::optional<int64_t>(*m * std::max<int64_t>(*k, 0)) : std::nullopt;
  auto alloc = [&](std::optional<int64_t> size, Value dynSize) {
    auto mt = MemRefType::get({size ? *size : ShapedType::kDynamic}, i64);
    return b.create<memref::AllocOp>(loc, mt, size ? ValueRange{} : ValueRange{dynSize}, b.getI64IntegerAttr(64));
  };
  auto rowPtr = alloc(rows, b.create<arith::AddIOp>(loc, mv, b.create<arith::ConstantIndexOp>(loc, 1)));
  auto colIdx = alloc(cap, b.create<arith::MulIOp>(loc, mv, kIndex));

  auto dyn2 = MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, f64);
  auto dyn1 = MemRefType::get({ShapedType::kDynamic}, i64);
  auto castTo = [&](Value v, MemRefType to) -> Value {
    return v.getType() == to ? v : b.create<memref::CastOp>(loc, to, v).getResult();
  };
  auto asMemref = [&](Value t) -> Value {
    auto tt = cast<RankedTensorType>(t.getType());
    return castTo(
        b.create<bufferization::ToMemrefOp>(loc, MemRefType::get(tt.getShape(), f64), t, /*read_only=*/true), dyn2);
  };
  Value dstM = asMemref(dst);
  Value srcM = src == dst ? dstM : asMemref(src);
  b.create<func::CallOp>(loc, gf::kRelationBuilder, TypeRange{},
                         ValueRange{dstM, srcM, castTo(rowPtr, dyn1), castTo(colIdx, dyn1),
                                    b.create<arith::ConstantIntOp>(loc, radius ? 1 : 0, 64), kv,
                                    b.create<arith::ConstantIntOp>(loc, rel.getExcludeSelf() ? 1 : 0, 64), r});
  auto asTensor = [&](memref::AllocOp a) -> Value {
    auto mt = a.getType();
    return b.create<bufferization::ToTensorOp>(loc, RankedTensorType::get(mt.getShape(), i64), a.getResult(),
                                               /*restrict=*/true, /*writable=*/true);
  };
  Value rowPtrT = asTensor(rowPtr), colIdxT = asTensor(colIdx);

  // Each row has at most k sources, the bound the schedule reads; a kNN
  // row has exactly min(k, candidates) of them.
  // The relation's own facts stay (the positions may be dynamic where the
  // relation's counts are not).
  std::optional<int64_t> sources = n;
  if (!sources && rel.getNumSrc() >= 0)
    sources = rel.getNumSrc();
  std::optional<int64_t> candidates, dmin = rel.getDegreeMin(), dmax = rel.getDegreeMax();
  if (sources)
    candidates = rel.getExcludeSelf() ? std::max<int64_t>(*sources - 1, 0) : *sources;
  std::optional<int64_t> bound = k ? k : candidates;
  if (bound && candidates)
    bound = std::min(*bound, *candidates);
  if (bound)
    dmax = dmax ? std::min(*dmax, *bound) : *bound;
  if (!radius && k && candidates)
    dmin = std::min(*k, *candidates);
  IntegerAttr degreeMin = dmin ? b.getI64IntegerAttr(*dmin) : IntegerAttr();
  IntegerAttr degreeMax = dmax ? b.getI64IntegerAttr(*dmax) : IntegerAttr();
  replaceEdges(rel, rowPtrT, colIdxT);
  gf::replaceWithMaterialized(b, rel, rowPtrT, colIdxT, degreeMin, degreeMax);
}

struct BuildRelations : gf::impl::GfBuildRelationsBase<BuildRelations> {
  void runOnOperation() override {
    SmallVector<gf::RelationOp> built;
    getOperation().walk([&](gf::RelationOp rel) {
      auto kind = rel.getRealizationKind();
      if (kind == gf::Realization::Radius || kind == gf::Realization::Knn)
        built.push_back(rel);
    });
    for (gf::RelationOp rel : built)
      build(rel);
    // Every other relation's edges are its operands (materialized) or do
    // not exist as compressed rows.
    SmallVector<gf::EdgesOp> reads;
    getOperation().walk([&](gf::EdgesOp edges) { reads.push_back(edges); });
    for (gf::EdgesOp edges : reads) {
      auto rel = edges.getRelation().getDefiningOp<gf::RelationOp>();
      if (rel && rel.getRealizationKind() == gf::Realization::Materialized &&
          cast<RankedTensorType>(rel.getTopology()[0].getType()).getElementType().isInteger(64) &&
          cast<RankedTensorType>(rel.getTopology()[1].getType()).getElementType().isInteger(64)) {
        replaceOne(edges, rel.getTopology()[0], rel.getTopology()[1]);
        continue;
      }
      edges.emitOpError() << "reads the edges of "
                          << (rel ? "a '" + rel.getRealization().str() + "' relation" : std::string("a relation not defined here"))
                          << ", which has no i64 compressed rows to read";
      return signalPassFailure();
    }
  }
};

} // namespace

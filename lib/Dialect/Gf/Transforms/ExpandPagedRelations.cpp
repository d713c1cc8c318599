//===- ExpandPagedRelations.cpp - paged relations as compressed rows -------===//
//
// A paged relation (a paged KV cache's block table) names its edges through
// pages: row d's j-th edge is slot block_table[d, j / P] * P + j % P of a
// pool. Expanding the block table into row offsets and column indices costs
// one index per edge, against the rows of data each edge reads, and lets
// every reduction over it use the compressed-row kernels of every target.
// With a known pool (`num_src`), a slot outside it is no edge: the table is
// run-time data, and a bad entry must not read outside the pool.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "linnet/Dialect/Gf/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace linnet::gf {
#define GEN_PASS_DEF_GFEXPANDPAGEDRELATIONS
#include "linnet/Dialect/Gf/Transforms/Passes.h.inc"
} // namespace linnet::gf

using namespace mlir;
using namespace linnet;

namespace {

Value index(OpBuilder &b, Location loc, int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }

/// An integer element as i64 (block tables and lengths may be any width).
Value toI64(OpBuilder &b, Location loc, Value v) {
  unsigned w = v.getType().getIntOrFloatBitWidth();
  if (w == 64)
    return v;
  return w < 64 ? b.create<arith::ExtSIOp>(loc, b.getI64Type(), v).getResult()
                : b.create<arith::TruncIOp>(loc, b.getI64Type(), v).getResult();
}

void expand(gf::RelationOp rel) {
  OpBuilder b(rel);
  Location loc = rel.getLoc();
  Value table = rel.getTopology()[0], lengths = rel.getTopology()[1];
  auto tableT = cast<RankedTensorType>(table.getType());
  auto lengthsT = cast<RankedTensorType>(lengths.getType());
  int64_t page = *rel.getPageSize();
  Type i64 = b.getI64Type();
  // Buffers, not tensors: the loops below write each offset and index once,
  // and every CPU path (bufferized entries, hand-written kernel functions)
  // takes buffers made this way.
  Value tableM = b.create<bufferization::ToMemrefOp>(
      loc, MemRefType::get(tableT.getShape(), tableT.getElementType()), table, /*read_only=*/true);
  Value lengthsM = b.create<bufferization::ToMemrefOp>(
      loc, MemRefType::get(lengthsT.getShape(), lengthsT.getElementType()), lengths, /*read_only=*/true);
  Value c0 = index(b, loc, 0), c1 = index(b, loc, 1);
  Value rows = b.create<memref::DimOp>(loc, lengthsM, 0);
  Value blocks = b.create<memref::DimOp>(loc, tableM, 1);
  Value cap = b.create<arith::IndexCastOp>(loc, i64, b.create<arith::MulIOp>(loc, blocks, index(b, loc, page)));
  Value zero = b.create<arith::ConstantIntOp>(loc, 0, 64);
  auto vector = MemRefType::get({ShapedType::kDynamic}, i64);

  // The slot of edge j of row d, and whether the pool holds it: with a
  // known pool of N slots, an edge whose slot is outside [0, N) is not
  // related (a hostile block table reads nothing outside the pool).
  int64_t pool = rel.getNumSrc();
  Value pageV = b.create<arith::ConstantIntOp>(loc, page, 64);
  auto slotOf = [&](OpBuilder &ib, Location il, Value d, Value j) -> std::pair<Value, Value> {
    Value blk = ib.create<arith::DivUIOp>(il, j, index(ib, il, page));
    Value off = ib.create<arith::IndexCastOp>(il, i64, ib.create<arith::RemUIOp>(il, j, index(ib, il, page)));
    Value pg = toI64(ib, il, ib.create<memref::LoadOp>(il, tableM, ValueRange{d, blk}));
    Value slot = ib.create<arith::AddIOp>(il, ib.create<arith::MulIOp>(il, pg, pageV), off);
    if (pool < 0)
      return {slot, Value()};
    // pg * P + off < N without overflow: pg <= (N - 1 - off) / P, N > off.
    Value poolV = ib.create<arith::ConstantIntOp>(il, pool, 64);
    Value room = ib.create<arith::SubIOp>(il, poolV, off);
    Value ok = ib.create<arith::AndIOp>(
        il, ib.create<arith::CmpIOp>(il, arith::CmpIPredicate::sgt, room, zero),
        ib.create<arith::AndIOp>(
            il, ib.create<arith::CmpIOp>(il, arith::CmpIPredicate::sge, pg, zero),
            ib.create<arith::CmpIOp>(
                il, arith::CmpIPredicate::sle, pg,
                ib.create<arith::DivSIOp>(il, ib.create<arith::SubIOp>(il, room, ib.create<arith::ConstantIntOp>(il, 1, 64)),
                                          pageV))));
    return {slot, ok};
  };
  auto lengthOf = [&](OpBuilder &lb, Location l, Value d) {
    Value n = toI64(lb, l, lb.create<memref::LoadOp>(l, lengthsM, ValueRange{d}));
    n = lb.create<arith::MinSIOp>(l, lb.create<arith::MaxSIOp>(l, n, zero), cap);
    return lb.create<arith::IndexCastOp>(l, lb.getIndexType(), n).getResult();
  };

  // Row offsets: the prefix sum of each row's edges in the pool, its length
  // clamped to [0, B * P].
  Value rowPtr = b.create<memref::AllocOp>(loc, vector, ValueRange{b.create<arith::AddIOp>(loc, rows, c1)});
  b.create<memref::StoreOp>(loc, zero, rowPtr, ValueRange{c0});
  auto prefix = b.create<scf::ForOp>(
      loc, c0, rows, c1, ValueRange{zero}, [&](OpBuilder &lb, Location l, Value d, ValueRange carried) {
        Value n = lengthOf(lb, l, d);
        Value total;
        if (pool < 0) {
          total = lb.create<arith::AddIOp>(l, carried[0], lb.create<arith::IndexCastOp>(l, i64, n));
        } else {
          auto count = lb.create<scf::ForOp>(
              l, index(lb, l, 0), n, index(lb, l, 1), ValueRange{carried[0]},
              [&](OpBuilder &ib, Location il, Value j, ValueRange acc) {
                Value ok = slotOf(ib, il, d, j).second;
                Value one = ib.create<arith::ExtUIOp>(il, i64, ok);
                ib.create<scf::YieldOp>(il, ValueRange{ib.create<arith::AddIOp>(il, acc[0], one)});
              });
          total = count.getResult(0);
        }
        lb.create<memref::StoreOp>(l, total, rowPtr, ValueRange{lb.create<arith::AddIOp>(l, d, index(lb, l, 1))});
        lb.create<scf::YieldOp>(l, ValueRange{total});
      });
  Value edges = b.create<arith::IndexCastOp>(loc, b.getIndexType(), prefix.getResult(0));

  // Column indices: row by row, the slot of each of the row's edges.
  Value cols = b.create<memref::AllocOp>(loc, vector, ValueRange{edges});
  b.create<scf::ForOp>(loc, c0, rows, c1, ValueRange{}, [&](OpBuilder &ob, Location l, Value d, ValueRange) {
    Value begin = ob.create<arith::IndexCastOp>(l, ob.getIndexType(),
                                                ob.create<memref::LoadOp>(l, rowPtr, ValueRange{d}));
    ob.create<scf::ForOp>(
        l, index(ob, l, 0), lengthOf(ob, l, d), index(ob, l, 1), ValueRange{begin},
        [&](OpBuilder &ib, Location il, Value j, ValueRange at) {
          auto [slot, ok] = slotOf(ib, il, d, j);
          if (!ok) {
            ib.create<memref::StoreOp>(il, slot, cols, ValueRange{at[0]});
            ib.create<scf::YieldOp>(il, ValueRange{ib.create<arith::AddIOp>(il, at[0], index(ib, il, 1))});
            return;
          }
          auto write = ib.create<scf::IfOp>(
              il, ok,
              [&](OpBuilder &tb, Location tl) {
                tb.create<memref::StoreOp>(tl, slot, cols, ValueRange{at[0]});
                tb.create<scf::YieldOp>(tl, ValueRange{tb.create<arith::AddIOp>(tl, at[0], index(tb, tl, 1))});
              },
              [&](OpBuilder &eb, Location el) { eb.create<scf::YieldOp>(el, ValueRange{at[0]}); });
          ib.create<scf::YieldOp>(il, write.getResults());
        });
    ob.create<scf::YieldOp>(l);
  });
  auto asTensor = [&](Value m) {
    return b.create<bufferization::ToTensorOp>(loc, RankedTensorType::get({ShapedType::kDynamic}, i64), m,
                                               /*restrict=*/true, /*writable=*/true);
  };

  IntegerAttr degreeMax;
  if (!tableT.isDynamicDim(1))
    degreeMax = b.getI64IntegerAttr(tableT.getDimSize(1) * page);
  Value rowPtrT = asTensor(rowPtr), colsT = asTensor(cols); // in this order
  gf::replaceWithMaterialized(b, rel, rowPtrT, colsT, IntegerAttr(), degreeMax);
}

struct ExpandPagedRelations : gf::impl::GfExpandPagedRelationsBase<ExpandPagedRelations> {
  void runOnOperation() override {
    SmallVector<gf::RelationOp> paged;
    getOperation().walk([&](gf::RelationOp rel) {
      if (rel.getRealizationKind() == gf::Realization::Paged && rel.getPageSize())
        paged.push_back(rel);
    });
    for (gf::RelationOp rel : paged)
      expand(rel);
  }
};

} // namespace

//===- ExactExp.cpp - f32 exponentials as vector code, bit for bit libm's ---===//
//
// -linnet-cpu-exact-exp (Passes.td). On x86 LLVM has no vector exponential:
// `math.exp` becomes one expf call per element, which keeps its loop scalar
// (SwiGLU's sigmoid over a decode step's 1,376 features cost 8 us a layer,
// ~8% of a q4_0 token). The interpreter's exponential is expf, so the
// compiled one may not be any other function. This pass emits expf's own
// algorithm (ExactExp.h) as arithmetic on the op's shape: double lanes,
// FMAs, a gather from its 32-entry table and selects for its special
// arguments. It runs only where that is the function the C library
// computes: on CPUs with FMA and AVX2 (whose expf variant it is; the
// pipeline adds the pass only then), and after checking the scalar mirror
// against this process's expf on probes across every exponent.
//
//===----------------------------------------------------------------------===//

#include "ExactExp.h"

#include "linnet/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace linnet::cpu {
#define GEN_PASS_DEF_LINNETCPUEXACTEXP
#include "linnet/Target/CPU/Passes.h.inc"
} // namespace linnet::cpu

using namespace mlir;
namespace ee = linnet::cpu::exactexp;

namespace {

constexpr llvm::StringLiteral kTableName = "linnet_expf_table";

/// Whether exactExpf is this process's expf: every exponent, both signs,
/// several mantissas each, and the special arguments' edges.
bool mirrorsLibm() {
  auto same = [](uint32_t u) {
    float x = ee::asFloat(u);
    float a = ee::exactExpf(x), e = std::exp(x);
    return std::memcmp(&a, &e, sizeof a) == 0;
  };
  for (uint32_t u = 0; u < 0xffff0000u; u += 0x10001u * 7)
    if (!same(u))
      return false;
  for (uint32_t u : {ee::kOverflow, ee::kUnderflow, ee::kMayUnderflow, 0x7f800000u, 0xff800000u,
                     0x7fc00000u, 0x42b00000u, 0xc2b00000u})
    for (int d = -2; d <= 2; ++d)
      if (!same(u + d))
        return false;
  return true;
}

struct ExactExpPass : public linnet::cpu::impl::LinnetCPUExactExpBase<ExactExpPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<math::ExpOp> exps;
    module.walk([&](math::ExpOp op) {
      Type t = op.getType();
      auto v = dyn_cast<VectorType>(t);
      if (v && (v.getRank() != 1 || v.isScalable()))
        return;
      if (isa<Float32Type>(getElementTypeOrSelf(t)))
        exps.push_back(op);
    });
    if (exps.empty() || !mirrorsLibm())
      return;
    OpBuilder b(module.getBodyRegion());
    auto tableType = MemRefType::get({32}, b.getI64Type());
    if (!SymbolTable::lookupSymbolIn(module, kTableName)) {
      b.setInsertionPointToStart(module.getBody());
      SmallVector<int64_t> entries(std::begin(ee::kTable), std::end(ee::kTable));
      b.create<memref::GlobalOp>(module.getLoc(), kTableName, b.getStringAttr("private"), tableType,
                                 DenseElementsAttr::get(RankedTensorType::get({32}, b.getI64Type()),
                                                        ArrayRef<int64_t>(entries)),
                                 /*constant=*/true, /*alignment=*/b.getI64IntegerAttr(64));
    }
    for (math::ExpOp op : exps)
      rewrite(op, tableType);
  }

  void rewrite(math::ExpOp op, MemRefType tableType) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto vec = dyn_cast<VectorType>(op.getType());
    auto like = [&](Type elem) -> Type { return vec ? Type(VectorType::get(vec.getShape(), elem)) : elem; };
    auto cst = [&](Type elem, TypedAttr scalar) -> Value {
      if (!vec)
        return b.create<arith::ConstantOp>(loc, scalar);
      return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(cast<ShapedType>(like(elem)), scalar));
    };
    Type f32 = b.getF32Type(), f64 = b.getF64Type(), i32 = b.getI32Type(), i64 = b.getI64Type();
    auto d = [&](uint64_t bits) { return cst(f64, b.getF64FloatAttr(ee::asDouble(bits))); };
    auto f = [&](float v) { return cst(f32, b.getF32FloatAttr(v)); };
    auto i32c = [&](uint32_t v) { return cst(i32, b.getI32IntegerAttr(static_cast<int32_t>(v))); };
    auto i64c = [&](int64_t v) { return cst(i64, b.getI64IntegerAttr(v)); };

    Value x = op.getOperand();
    // The main path: no fastmath flags, so nothing contracts or reassociates
    // beyond the FMAs written here.
    Value xd = b.create<arith::ExtFOp>(loc, like(f64), x);
    Value invLn2N = d(ee::kInvLn2N), shift = d(ee::kShift);
    Value kd = b.create<math::FmaOp>(loc, invLn2N, xd, shift);
    Value ki = b.create<arith::BitcastOp>(loc, like(i64), kd);
    kd = b.create<arith::SubFOp>(loc, kd, shift);
    Value r = b.create<math::FmaOp>(loc, invLn2N, xd, b.create<arith::NegFOp>(loc, kd));
    Value index = b.create<arith::AndIOp>(loc, ki, i64c(31));
    Value table = b.create<memref::GetGlobalOp>(loc, tableType, kTableName);
    Value t;
    if (vec) {
      Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
      Value lanes = b.create<arith::TruncIOp>(loc, like(i32), index);
      Value all = cst(b.getI1Type(), b.getBoolAttr(true));
      t = b.create<vector::GatherOp>(loc, like(i64), table, ValueRange{zero}, lanes, all, i64c(0));
    } else {
      Value at = b.create<arith::IndexCastOp>(loc, b.getIndexType(), index);
      t = b.create<memref::LoadOp>(loc, table, ValueRange{at});
    }
    t = b.create<arith::AddIOp>(loc, t, b.create<arith::ShLIOp>(loc, ki, i64c(47)));
    Value s = b.create<arith::BitcastOp>(loc, like(f64), t);
    Value z = b.create<math::FmaOp>(loc, d(ee::kC0), r, d(ee::kC1));
    Value r2 = b.create<arith::MulFOp>(loc, r, r);
    Value y = b.create<math::FmaOp>(loc, d(ee::kC2), r, cst(f64, b.getF64FloatAttr(1.0)));
    y = b.create<math::FmaOp>(loc, z, r2, y);
    y = b.create<arith::MulFOp>(loc, y, s);
    Value result = b.create<arith::TruncFOp>(loc, like(f32), y);

    // The special arguments (|x| >= 88 or NaN), innermost first.
    Value u = b.create<arith::BitcastOp>(loc, like(i32), x);
    Value top = b.create<arith::AndIOp>(loc, b.create<arith::ShRUIOp>(loc, u, i32c(20)), i32c(0x7ff));
    auto below = [&](uint32_t bound) {
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, f(ee::asFloat(bound)));
    };
    result = b.create<arith::SelectOp>(loc, below(ee::kMayUnderflow), f(ee::asFloat(1)), result);
    result = b.create<arith::SelectOp>(loc, below(ee::kUnderflow), f(0.0f), result);
    Value over = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, f(ee::asFloat(ee::kOverflow)));
    result = b.create<arith::SelectOp>(loc, over, f(INFINITY), result);
    Value nonFinite = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ugt, top, i32c(ee::kInfTop));
    result = b.create<arith::SelectOp>(loc, nonFinite, b.create<arith::AddFOp>(loc, x, x), result);
    Value negInf = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, u, i32c(0xff800000u));
    result = b.create<arith::SelectOp>(loc, negInf, f(0.0f), result);
    op.replaceAllUsesWith(result);
    op.erase();
  }
};

} // namespace

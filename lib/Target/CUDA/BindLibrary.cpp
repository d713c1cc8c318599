//===- BindLibrary.cpp - matrix products to cuBLAS, with a fallback --------===//
//
// Passes.td, LinnetCUDABindLibrary. The artifact must run where only the
// CUDA driver is installed (cuBLAS is not part of it), so the library call
// is a choice made at run time: the host runtime's `linnet_cuda_sgemm`
// (`linnet_cuda_gemm` for half operands) returns non-zero when it has no cuBLAS, and the generated kernel, kept
// under scf.if, runs then. The emulated build (--emulate) defines the
// same entry point on the CPU in the same column-major convention, so the
// arguments written here are checked against the interpreter without a GPU.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/Abi.h"
#include "linnet/Target/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace linnet::cuda {

#define GEN_PASS_DEF_LINNETCUDABINDLIBRARY
#include "linnet/Target/CUDA/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kSgemm = "linnet_cuda_sgemm";
constexpr llvm::StringLiteral kGemm = "linnet_cuda_gemm";

/// The position of loop `dim` among the results of operand `operand`'s map.
int resultPos(linalg::LinalgOp op, unsigned operand, unsigned dim) {
  AffineMap m = op.getIndexingMapsArray()[operand];
  for (unsigned i = 0; i < m.getNumResults(); ++i)
    if (auto d = dyn_cast<AffineDimExpr>(m.getResult(i)); d && d.getPosition() == dim)
      return int(i);
  return -1;
}

bool unitInnerStride(Value v, Type elem) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || type.getRank() != 2 || type.getElementType() != elem)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(getStridesAndOffset(type, strides, offset)) && strides.back() == 1;
}

struct Gemm {
  unsigned m, n, k;
  bool transA, transB; // A stored (k, m), B stored (n, k)
  Type ab;             // A's and B's element type: f32, or a half type
};

/// The body of a product summed in f32: `acc + a * b` on f32, or on the f32
/// extensions of half a and b (`acc + extf(a) * extf(b)`: the f32-compute
/// numerics policy's exact products, which cublasGemmEx computes). A
/// product rounded to a half type before the sum (as written) is not.
bool sumOfProducts(Block *body, bool half) {
  auto it = body->begin();
  Value lhs = body->getArgument(0), rhs = body->getArgument(1);
  if (half) {
    if (body->getOperations().size() != 5)
      return false;
    auto e0 = dyn_cast<arith::ExtFOp>(*it++);
    auto e1 = dyn_cast<arith::ExtFOp>(*it++);
    if (!e0 || !e1 || !e0.getType().isF32() || !e1.getType().isF32())
      return false;
    bool ins = (e0.getIn() == lhs && e1.getIn() == rhs) || (e0.getIn() == rhs && e1.getIn() == lhs);
    if (!ins)
      return false;
    lhs = e0.getResult();
    rhs = e1.getResult();
  } else if (body->getOperations().size() != 3) {
    return false;
  }
  auto mul = dyn_cast<arith::MulFOp>(*it++);
  auto add = dyn_cast<arith::AddFOp>(*it++);
  auto yield = dyn_cast<linalg::YieldOp>(*it);
  if (!mul || !add || !yield || yield.getNumOperands() != 1 || yield.getOperand(0) != add.getResult())
    return false;
  bool operands = (mul.getLhs() == lhs && mul.getRhs() == rhs) || (mul.getLhs() == rhs && mul.getRhs() == lhs);
  Value acc = body->getArgument(2);
  bool sum = (add.getLhs() == acc && add.getRhs() == mul.getResult()) ||
             (add.getRhs() == acc && add.getLhs() == mul.getResult());
  return operands && sum;
}

std::optional<Gemm> match(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims) || !dims->batch.empty() || dims->m.size() != 1 || dims->n.size() != 1 || dims->k.size() != 1)
    return std::nullopt;
  Type ab = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  bool half = ab.isBF16() || ab.isF16();
  if (!(half || ab.isF32()) || !unitInnerStride(op.getDpsInputs()[0], ab) ||
      !unitInnerStride(op.getDpsInputs()[1], ab) ||
      !unitInnerStride(op.getDpsInits()[0], Float32Type::get(op->getContext())))
    return std::nullopt;
  // A body that converts (other than widening half operands), negates or
  // rounds its products is not a gemm.
  if (!sumOfProducts(op.getBlock(), half))
    return std::nullopt;
  Gemm g{dims->m[0], dims->n[0], dims->k[0], false, false, ab};
  if (resultPos(op, 2, g.m) != 0 || resultPos(op, 2, g.n) != 1)
    return std::nullopt;
  int am = resultPos(op, 0, g.m), ak = resultPos(op, 0, g.k), bk = resultPos(op, 1, g.k),
      bn = resultPos(op, 1, g.n);
  if (am < 0 || ak < 0 || bk < 0 || bn < 0)
    return std::nullopt;
  g.transA = am == 1;
  g.transB = bk == 1;
  // A matrix-vector product (a static unit m or n) stays the warp-split
  // kernel, which reads the matrix once at the memory's speed.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges[g.m] == 1 || ranges[g.n] == 1)
    return std::nullopt;
  return g;
}

/// linnet_cuda_sgemm, or linnet_cuda_gemm (a leading element type word)
/// for half operands.
func::FuncOp declareGemm(ModuleOp module, bool typed) {
  StringRef name = typed ? kGemm : kSgemm;
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
  // ([type,] transa, transb, m, n, k, A, lda, B, ldb, beta, C, ldc) -> status
  SmallVector<Type> params = {i32, i32, i64, i64, i64, i64, i64, i64, i64, f32, i64, i64};
  if (typed)
    params.insert(params.begin(), i32);
  auto f = b.create<func::FuncOp>(module.getLoc(), name, b.getFunctionType(params, {i32}));
  f.setPrivate();
  return f;
}

/// The address of element 0 of a 2-D view and its leading dimension.
std::pair<Value, Value> addressAndLd(OpBuilder &b, Location loc, Value memref) {
  auto meta = b.create<memref::ExtractStridedMetadataOp>(loc, memref);
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
  int64_t elemBytes = cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
  Value bytes = b.create<arith::MulIOp>(loc, meta.getOffset(), b.create<arith::ConstantIndexOp>(loc, elemBytes));
  Value address = b.create<arith::AddIOp>(loc, base, bytes);
  Type i64 = b.getI64Type();
  return {b.create<arith::IndexCastOp>(loc, i64, address),
          b.create<arith::IndexCastOp>(loc, i64, meta.getStrides()[0])};
}

void bind(linalg::LinalgOp op, const Gemm &g, bool tf32) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value A = op.getDpsInputs()[0], B = op.getDpsInputs()[1], C = op.getDpsInits()[0];
  Type i64 = b.getI64Type();
  auto dim = [&](Value v, unsigned d) {
    return b.create<arith::IndexCastOp>(loc, i64, b.create<memref::DimOp>(loc, v, d)).getResult();
  };
  Value M = dim(C, 0), N = dim(C, 1), K = dim(A, g.transA ? 0 : 1);
  auto [pa, lda] = addressAndLd(b, loc, A);
  auto [pb, ldb] = addressAndLd(b, loc, B);
  auto [pc, ldc] = addressAndLd(b, loc, C);
  auto i32c = [&](int v) { return b.create<arith::ConstantIntOp>(loc, v, 32).getResult(); };
  Value beta = b.create<arith::ConstantFloatOp>(loc, APFloat(1.0f), b.getF32Type());
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: B's
  // operand first, m and n swapped; a row-major (k, n) B is a column-major
  // (n, k) matrix, untransposed.
  // An f32 product under --matmul-precision tf32 is GemmEx's too.
  bool typed = !g.ab.isF32() || tf32;
  func::FuncOp gemm = declareGemm(op->getParentOfType<ModuleOp>(), typed);
  SmallVector<Value> args = {i32c(g.transB ? 1 : 0), i32c(g.transA ? 1 : 0), N, M, K, pb, ldb, pa, lda, beta, pc, ldc};
  if (typed)
    args.insert(args.begin(), i32c(g.ab.isF32() ? kGemmTF32 : g.ab.isBF16() ? kGemmBF16 : kGemmF16));
  auto call = b.create<func::CallOp>(loc, gemm, args);
  Value fallback = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, call.getResult(0), i32c(0));
  auto guard = b.create<scf::IfOp>(loc, fallback, /*withElse=*/false);
  op->moveBefore(guard.thenBlock()->getTerminator());
  op->setAttr("linnet.cuda.library",
              b.getStringAttr(!typed ? "cublasSgemm" : g.ab.isF32() ? "cublasGemmEx-tf32" : "cublasGemmEx"));
}

struct BindLibraryPass : public impl::LinnetCUDABindLibraryBase<BindLibraryPass> {
  using Base::Base;

  void runOnOperation() override {
    if (implementation != "auto" && implementation != "generated" && implementation != "blas") {
      getOperation().emitError("-linnet-cuda-bind-library: unknown implementation policy '")
          << implementation << "' (auto | generated | blas)";
      return signalPassFailure();
    }
    if (implementation == "generated")
      return;
    SmallVector<std::pair<linalg::LinalgOp, Gemm>> gemms;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (auto g = match(op))
        gemms.push_back({op, *g});
    });
    for (auto &[op, g] : gemms)
      bind(op, g, tf32);
  }
};

} // namespace
} // namespace linnet::cuda

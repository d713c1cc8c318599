//===- GenerateHaloKernels.cpp - Halo pack/unpack as generated functions --===//
//
// -linnet-cpu-generate-halo-kernels: the Task IR's `gf_task.halo_pack` and
// `gf_task.halo_unpack` become the functions the concrete plan names for
// them (`linnet_<fn>_k<i>_halo_pack_<field>`), row gathers and scatters the
// distributed runtime calls; the exchange itself is the runtime's MPI. The
// planning ops are then erased: they have said what the plans needed.
//
//===----------------------------------------------------------------------===//
#include "linnet/Target/CPU/Passes.h"

#include "linnet/Dialect/GfKernel/IR/GfKernel.h"
#include "linnet/Dialect/GfStorage/IR/GfStorage.h"
#include "linnet/Dialect/GfTask/IR/GfTask.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace linnet::cpu {

#define GEN_PASS_DEF_LINNETCPUGENERATEHALOKERNELS
#include "linnet/Target/CPU/Passes.h.inc"

namespace {

/// The planner's symbol for a task (planning::symbolFor): `linnet_` and the
/// task id after `task.`, with `.` and `-` as `_`.
std::string haloSymbol(StringRef fn, unsigned kernel, StringRef what, StringRef field) {
  std::string s = ("linnet_" + fn + "_k" + Twine(kernel) + "_halo_" + what + "_" + field).str();
  for (char &c : s)
    if (c == '.' || c == '-')
      c = '_';
  return s;
}

/// The tensor a storage instance holds part of (instance <- region <- value).
Value fieldTensor(Value instance) {
  auto inst = instance.getDefiningOp<gf_storage::InstanceOp>();
  if (!inst)
    return {};
  auto region = inst.getRegion().getDefiningOp<gf_storage::RegionOp>();
  return region ? region.getValue() : Value();
}

/// `to[toRow(i), ...] = from[fromRow(i), ...]` for i < dim(index, 0), where
/// one side is indexed by `index` (pack: gather, unpack: scatter).
func::FuncOp buildRowCopy(OpBuilder &mb, Location loc, StringRef name, MemRefType rows, bool gather) {
  MLIRContext *ctx = mb.getContext();
  auto index = MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 64));
  // pack(src, rows, send); unpack(recv, slots, dst).
  auto fn = mb.create<func::FuncOp>(loc, name, mb.getFunctionType({rows, index, rows}, {}));
  fn->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  Block *body = fn.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(body);
  Value from = body->getArgument(0), idx = body->getArgument(1), to = body->getArgument(2);
  Value c0 = b.create<arith::ConstantIndexOp>(loc, 0), c1 = b.create<arith::ConstantIndexOp>(loc, 1);
  Value n = b.create<memref::DimOp>(loc, idx, 0);
  // A static innermost axis moves as one vector (the kernels' row form);
  // the axes before it are loops.
  int64_t rank = rows.getRank();
  bool vectorRow = rank >= 2 && !rows.isDynamicDim(rank - 1) && rows.getDimSize(rank - 1) > 1;
  SmallVector<Value> extents;
  for (int64_t d = 1; d < (vectorRow ? rank - 1 : rank); ++d)
    extents.push_back(rows.isDynamicDim(d) ? b.create<memref::DimOp>(loc, from, d).getResult()
                                           : b.create<arith::ConstantIndexOp>(loc, rows.getDimSize(d)).getResult());
  // Rows are independent: one parallel loop (OpenMP threads where the
  // build has them), the row's elements innermost and contiguous.
  b.create<scf::ParallelOp>(loc, ValueRange{c0}, ValueRange{n}, ValueRange{c1},
                            [&](OpBuilder &pb, Location l, ValueRange iv) {
                              Value i = iv[0];
                              Value at = pb.create<arith::IndexCastOp>(
                                  l, pb.getIndexType(), pb.create<memref::LoadOp>(l, idx, ValueRange{i}));
                              Value fromRow = gather ? at : i, toRow = gather ? i : at;
                              std::function<void(OpBuilder &, SmallVector<Value>)> nest =
                                  [&](OpBuilder &nb, SmallVector<Value> inner) {
                                    if (inner.size() == extents.size()) {
                                      SmallVector<Value> fi{fromRow}, ti{toRow};
                                      fi.append(inner);
                                      ti.append(inner);
                                      if (vectorRow) {
                                        fi.push_back(c0);
                                        ti.push_back(c0);
                                        auto vt = VectorType::get({rows.getDimSize(rank - 1)}, rows.getElementType());
                                        Value v = nb.create<vector::LoadOp>(l, vt, from, fi);
                                        nb.create<vector::StoreOp>(l, v, to, ti);
                                        return;
                                      }
                                      Value v = nb.create<memref::LoadOp>(l, from, fi);
                                      nb.create<memref::StoreOp>(l, v, to, ti);
                                      return;
                                    }
                                    nb.create<scf::ForOp>(l, c0, extents[inner.size()], c1, ValueRange{},
                                                          [&](OpBuilder &fb, Location, Value j, ValueRange) {
                                                            SmallVector<Value> next = inner;
                                                            next.push_back(j);
                                                            nest(fb, next);
                                                            fb.create<scf::YieldOp>(l);
                                                          });
                                  };
                              nest(pb, {});
                            });
  b.create<func::ReturnOp>(loc);
  return fn;
}

struct GenerateHaloKernels : public impl::LinnetCPUGenerateHaloKernelsBase<GenerateHaloKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    SymbolTable symbols(module);
    SmallVector<Attribute> table;
    SmallVector<Operation *> planning;
    for (auto fn : llvm::to_vector(module.getOps<func::FuncOp>())) {
      // The i-th launch of F is kernel F.k<i> (-linnet-outline-relation-
      // kernels counts the same way); its halo ops precede it.
      unsigned kernel = 0;
      SmallVector<Operation *> pending;
      WalkResult r = fn.walk([&](Operation *op) {
        if (isa<gf_task::GfTaskDialect, gf_storage::GfStorageDialect>(op->getDialect())) {
          planning.push_back(op);
          if (isa<gf_task::HaloPackOp, gf_task::HaloUnpackOp>(op))
            pending.push_back(op);
          return WalkResult::advance();
        }
        auto launch = dyn_cast<gf_kernel::LaunchOp>(op);
        if (!launch)
          return WalkResult::advance();
        std::string kernelName = (fn.getSymName() + ".k" + Twine(kernel)).str();
        llvm::MapVector<StringRef, DictionaryAttr> halos;
        for (Operation *h : pending) {
          bool pack = isa<gf_task::HaloPackOp>(h);
          StringRef field = pack ? cast<gf_task::HaloPackOp>(h).getField() : cast<gf_task::HaloUnpackOp>(h).getField();
          Value tensor = fieldTensor(h->getOperand(pack ? 1 : 2));
          auto it = tensor ? llvm::find(launch->getOperands(), tensor) : launch->operand_end();
          auto type = tensor ? dyn_cast<RankedTensorType>(tensor.getType()) : RankedTensorType();
          if (it == launch->operand_end() || !type) {
            h->emitOpError() << "moves field '" << field << "', which kernel " << kernelName
                             << " does not read as a ranked tensor";
            return WalkResult::interrupt();
          }
          SmallVector<int64_t> shape(type.getShape());
          shape[0] = ShapedType::kDynamic;
          auto rows = MemRefType::get(shape, type.getElementType());
          std::string name = haloSymbol(fn.getSymName(), kernel, pack ? "pack" : "unpack", field);
          if (symbols.lookup(name)) {
            h->emitOpError() << "needs function '" << name << "', which the module already defines";
            return WalkResult::interrupt();
          }
          OpBuilder mb(ctx);
          mb.setInsertionPoint(fn);
          symbols.insert(buildRowCopy(mb, h->getLoc(), name, rows, pack));
          NamedAttrList entry(halos.lookup(field));
          entry.set("field", StringAttr::get(ctx, field));
          entry.set("arg", IntegerAttr::get(IntegerType::get(ctx, 64), it - launch->operand_begin()));
          entry.set(pack ? "pack" : "unpack", StringAttr::get(ctx, name));
          halos[field] = entry.getDictionary(ctx);
        }
        for (auto &[field, entry] : halos) {
          NamedAttrList e(entry);
          e.set("kernel", StringAttr::get(ctx, kernelName));
          table.push_back(e.getDictionary(ctx));
        }
        pending.clear();
        ++kernel;
        return WalkResult::advance();
      });
      if (r.wasInterrupted())
        return signalPassFailure();
    }
    // Uses first: every planning op is only used by later planning ops.
    for (Operation *op : llvm::reverse(planning)) {
      op->dropAllUses();
      op->erase();
    }
    if (!table.empty())
      module->setAttr("linnet.distributed.halo", ArrayAttr::get(ctx, table));
  }
};

} // namespace
} // namespace linnet::cpu

//===- MapToGPU.cpp - Host loops to gpu.launch ----------------------------===//
//
// The CUDA target's mapping decision (Passes.td, LinnetCUDAMapToGPU): which
// ops of a function run on the device, in which launch shape. It runs on
// memrefs, after the lowering the CPU and CUDA targets share, so every
// kernel is the loop nest the CPU would run, distributed over a grid.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/Passes.h"
#include "linnet/Target/ElementLoops.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace linnet::cuda {

#define GEN_PASS_DEF_LINNETCUDAMAPTOGPU
#include "linnet/Target/CUDA/Passes.h.inc"

namespace {

Value cst(OpBuilder &b, Location loc, int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }

/// True when `op` holds device work of its own: a parallel loop, or a
/// kernel already placed (a relation tile mapped first).
bool containsParallel(Operation *op) {
  bool found = false;
  op->walk([&](Operation *inner) {
    if (!isa<scf::ParallelOp, gpu::LaunchOp>(inner))
      return WalkResult::advance();
    found = true;
    return WalkResult::interrupt();
  });
  return found;
}

/// True when an op nested in `op` frees a buffer: the host's work (the
/// runtime's device allocations), so `op` is host control flow. Ownership-
/// based deallocation guards a free with a flag it computes (`scf.if %owned
/// { memref.dealloc }`).
bool containsDealloc(Operation *op) {
  return op->walk([](memref::DeallocOp) { return WalkResult::interrupt(); }).wasInterrupted();
}

/// True when `op` (or an op nested in it) reads or writes memory: device
/// work. Allocation and deallocation alone are host work (they become
/// device allocations through the runtime); so are calls, whose callees are
/// mapped on their own.
bool touchesMemory(Operation *op) {
  bool touches = false;
  op->walk([&](Operation *inner) {
    if (isa<func::CallOp, memref::AllocOp, memref::DeallocOp, memref::AllocaOp>(inner))
      return WalkResult::advance();
    if (isa<memref::LoadOp, memref::StoreOp, memref::CopyOp, memref::AtomicRMWOp,
            memref::GenericAtomicRMWOp>(inner) ||
        inner->getDialect() == inner->getContext()->getLoadedDialect<vector::VectorDialect>()) {
      // vector ops without memory (arith on vectors) are harmless either way.
      touches = true;
      return WalkResult::interrupt();
    }
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(inner)) {
      if (effects.hasEffect<MemoryEffects::Read>() || effects.hasEffect<MemoryEffects::Write>()) {
        touches = true;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return touches;
}

/// A one-thread kernel's or a grid kernel's launch, its body to be filled
/// before the terminator it ends with.
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, Value grid, int64_t threads) {
  Value one = cst(b, loc, 1);
  auto launch = b.create<gpu::LaunchOp>(loc, grid, one, one, cst(b, loc, threads), one, one);
  OpBuilder body = OpBuilder::atBlockEnd(&launch.getBody().front());
  body.create<gpu::TerminatorOp>(loc);
  return launch;
}

/// scf.parallel nested inside a kernel: run by the thread, in order.
void sequentialize(scf::ParallelOp par) {
  OpBuilder b(par);
  Location loc = par.getLoc();
  IRMapping map;
  std::function<void(OpBuilder &, unsigned)> build = [&](OpBuilder &ob, unsigned dim) {
    if (dim == par.getNumLoops()) {
      for (Operation &op : par.getBody()->without_terminator())
        ob.clone(op, map);
      return;
    }
    ob.create<scf::ForOp>(loc, map.lookupOrDefault(par.getLowerBound()[dim]),
                          map.lookupOrDefault(par.getUpperBound()[dim]),
                          map.lookupOrDefault(par.getStep()[dim]), ValueRange{},
                          [&](OpBuilder &fb, Location, Value iv, ValueRange) {
                            map.map(par.getInductionVars()[dim], iv);
                            build(fb, dim + 1);
                            fb.create<scf::YieldOp>(loc);
                          });
  };
  build(b, 0);
  par.erase();
}

struct MapToGPUPass : public impl::LinnetCUDAMapToGPUBase<MapToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A comprehension's element loop runs its iterations in parallel
    // before anything inside it is mapped: each element a thread.
    if (laneTilesOnly)
      target::parallelizeElementLoops(module, [](Operation *op) { return isa<gpu::LaunchOp>(op); });
    // Lane tiles first, where the host runs them: inside a function's body
    // and host control flow that carries no values (what mapRegion leaves
    // on the host); one inside other work runs whole in that work's kernel.
    regroupFoldedTiles(module);
    SmallVector<scf::ParallelOp> tiles;
    module.walk([&](scf::ParallelOp par) {
      bool lanes = false;
      par.getBody()->walk([&](scf::ParallelOp inner) { lanes |= inner->hasAttr("linnet.lanes"); });
      if (!lanes || !par->hasAttr("linnet.schedule") || par.getNumLoops() != 1)
        return;
      for (Operation *up = par->getParentOp(); !isa<func::FuncOp>(up); up = up->getParentOp())
        if (up->getNumResults() > 0 || isa<scf::ParallelOp, gpu::LaunchOp>(up) || !isa<scf::ForOp, scf::IfOp>(up))
          return;
      tiles.push_back(par);
    });
    for (scf::ParallelOp par : tiles) {
      OpBuilder b(par);
      Location loc = par.getLoc();
      Value lb = par.getLowerBound()[0], ub = par.getUpperBound()[0], st = par.getStep()[0];
      Value t = b.create<arith::DivUIOp>(
          loc, b.create<arith::AddIOp>(loc, b.create<arith::SubIOp>(loc, ub, lb),
                                       b.create<arith::SubIOp>(loc, st, cst(b, loc, 1))),
          st);
      Value trips = b.create<arith::SelectOp>(
          loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, ub, lb), cst(b, loc, 0), t);
      if (failed(mapLaneTile(par, par->getAttrOfType<DictionaryAttr>("linnet.schedule"), trips)))
        return signalPassFailure();
    }
    if (laneTilesOnly)
      return;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      if (failed(mapRegion(fn.getBody())))
        return signalPassFailure();
    }
    // Integer abs has no NVVM lowering, and on `index` (of a dim
    // expression) none in the host's LLVM lowering either: x < 0 ? 0 - x : x,
    // once, for the kernels and the host code alike.
    module.walk([&](math::AbsIOp abs) {
      OpBuilder ab(abs);
      Location l = abs.getLoc();
      Value x = abs.getOperand();
      Value zero = ab.create<arith::ConstantOp>(l, ab.getZeroAttr(x.getType()));
      Value negative = ab.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, x, zero);
      abs.replaceAllUsesWith(
          ab.create<arith::SelectOp>(l, negative, ab.create<arith::SubIOp>(l, zero, x), x).getResult());
      abs.erase();
    });
    // A tile's scratch is the block's only where the tile became the
    // kernel; a tile inside other work (a kernel that runs it whole) has
    // thread-private scratch like any other buffer.
    module.walk([&](memref::AllocOp a) {
      if (a->hasAttr("linnet.workgroup") && !isa<gpu::LaunchOp>(a->getParentOp()))
        a->removeAttr("linnet.workgroup");
    });
    // A kernel argument is a memref or a scalar: vectors the host built
    // (splat constants) are built again in the kernel.
    WalkResult sunk = module.walk([&](gpu::LaunchOp launch) {
      return failed(sinkVectors(launch)) || failed(privatizeAllocations(launch)) ? WalkResult::interrupt()
                                                                                 : WalkResult::advance();
    });
    if (sunk.wasInterrupted())
      return signalPassFailure();
    // What now runs inside a kernel runs sequentially in its thread.
    SmallVector<scf::ParallelOp> nested;
    module.walk([&](scf::ParallelOp par) {
      if (par->getParentOfType<gpu::LaunchOp>())
        nested.push_back(par);
    });
    // Innermost first: sequentialize clones the body.
    for (scf::ParallelOp par : llvm::reverse(nested))
      if (par.getNumResults() == 0)
        sequentialize(par);
  }

  /// A buffer allocated inside a kernel (a comprehension nested in a
  /// thread's work) is the thread's own, never from the host allocator,
  /// which device code cannot call: stack memory allocated once at the
  /// kernel's start (its contents are undefined at each allocation anyway)
  /// when its size is known at build time; otherwise the thread's slice of
  /// one buffer the host allocates for the launch, a slice per thread, when
  /// its size is known before the launch (work of run-time size in a
  /// branch of an element, which stays there: it may not run).
  LogicalResult privatizeAllocations(gpu::LaunchOp launch) {
    SmallVector<memref::AllocOp> allocs;
    launch.getBody().walk([&](memref::AllocOp a) { allocs.push_back(a); });
    Block &entry = launch.getBody().front();
    for (memref::AllocOp a : allocs) {
      if (a->hasAttr("linnet.workgroup"))
        continue; // the block's, not the thread's
      for (Operation *user : a->getUsers())
        if (isa<scf::YieldOp, func::ReturnOp, gpu::TerminatorOp>(user))
          return a.emitError("the cuda target cannot yet pass a buffer allocated inside a kernel out of it");
      if (!a.getType().hasStaticShape()) {
        if (failed(sliceOfLaunchBuffer(launch, a)))
          return failure();
        continue;
      }
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      auto alloca = b.create<memref::AllocaOp>(a.getLoc(), a.getType(), ValueRange{}, a.getAlignmentAttr());
      replaceAllocation(a, alloca.getResult());
    }
    return success();
  }

  /// Replaces a kernel's allocation by `memory` (the thread's own), its
  /// deallocations dropped: the memory is freed with the stack or the launch.
  static void replaceAllocation(memref::AllocOp a, Value memory) {
    for (Operation *user : llvm::make_early_inc_range(a->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    a.replaceAllUsesWith(memory);
    a.erase();
  }

  /// `a` (run-time sized, in `launch`) as the thread's slice of a byte
  /// buffer the host allocates before the launch and frees after it: a
  /// `memref.view` at the thread's linear id times the slice's bytes
  /// (rounded up to 64). Its sizes must be known outside the kernel.
  LogicalResult sliceOfLaunchBuffer(gpu::LaunchOp launch, memref::AllocOp a) {
    for (Value d : a.getDynamicSizes())
      if (!d.getParentRegion()->isProperAncestor(&launch.getBody()))
        return a.emitError("the cuda target cannot yet allocate a buffer inside a kernel whose size "
                           "the kernel computes");
    MemRefType t = a.getType();
    if (!t.getLayout().isIdentity() || !t.getElementType().isIntOrIndexOrFloat() ||
        t.getElementType().isIndex())
      return a.emitError("the cuda target cannot yet allocate a buffer of run-time size inside a kernel");
    Location loc = a.getLoc();
    OpBuilder hb(launch);
    // Bytes per thread: the element count times the element's size, to 64.
    unsigned bytes = std::max<unsigned>(t.getElementTypeBitWidth() / 8, 1);
    Value count = cst(hb, loc, bytes);
    unsigned dyn = 0;
    for (int64_t d : t.getShape())
      count = hb.create<arith::MulIOp>(loc, count,
                                       ShapedType::isDynamic(d) ? a.getDynamicSizes()[dyn++] : cst(hb, loc, d));
    Value per = hb.create<arith::MulIOp>(
        loc, hb.create<arith::DivUIOp>(loc, hb.create<arith::AddIOp>(loc, count, cst(hb, loc, 63)), cst(hb, loc, 64)),
        cst(hb, loc, 64));
    Value threads = cst(hb, loc, 1);
    for (Value v : {launch.getGridSizeX(), launch.getGridSizeY(), launch.getGridSizeZ(), launch.getBlockSizeX(),
                    launch.getBlockSizeY(), launch.getBlockSizeZ()})
      threads = hb.create<arith::MulIOp>(loc, threads, v);
    Value total = hb.create<arith::MulIOp>(loc, threads, per);
    auto bufT = MemRefType::get({ShapedType::kDynamic}, hb.getI8Type());
    Value buf = hb.create<memref::AllocOp>(loc, bufT, ValueRange{total}, hb.getI64IntegerAttr(64));
    OpBuilder after(launch->getContext());
    after.setInsertionPointAfter(launch);
    after.create<memref::DeallocOp>(loc, buf);
    // The thread's linear id: block-major, then the thread in its block.
    OpBuilder kb(a);
    gpu::KernelDim3 bid = launch.getBlockIds(), tid = launch.getThreadIds();
    gpu::KernelDim3 gs = launch.getGridSize(), bs = launch.getBlockSize();
    auto mul = [&](Value x, Value y) { return kb.create<arith::MulIOp>(loc, x, y).getResult(); };
    auto add = [&](Value x, Value y) { return kb.create<arith::AddIOp>(loc, x, y).getResult(); };
    Value block = add(mul(add(mul(bid.z, gs.y), bid.y), gs.x), bid.x);
    Value thread = add(mul(add(mul(tid.z, bs.y), tid.y), bs.x), tid.x);
    Value linear = add(mul(block, mul(mul(bs.x, bs.y), bs.z)), thread);
    auto view = kb.create<memref::ViewOp>(loc, t, buf, mul(linear, per), a.getDynamicSizes());
    replaceAllocation(a, view.getResult());
    return success();
  }

  LogicalResult sinkVectors(gpu::LaunchOp launch) {
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(launch.getBody(), above);
    OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
    IRMapping map;
    std::function<LogicalResult(Value)> sink = [&](Value v) -> LogicalResult {
      if (map.contains(v))
        return success();
      Operation *def = v.getDefiningOp();
      if (!def || !isMemoryEffectFree(def) || def->getNumRegions() > 0)
        return launch.emitError("the cuda target cannot pass a value of type ")
               << v.getType() << " to a kernel";
      for (Value operand : def->getOperands())
        if (isa<VectorType>(operand.getType()) && failed(sink(operand)))
          return failure();
      b.clone(*def, map);
      return success();
    };
    for (Value v : above) {
      if (!isa<VectorType>(v.getType()))
        continue;
      if (failed(sink(v)))
        return failure();
      Value inner = map.lookup(v);
      v.replaceUsesWithIf(inner, [&](OpOperand &use) { return launch->isProperAncestor(use.getOwner()); });
    }
    return success();
  }

  LogicalResult mapRegion(Region &region) {
    for (Block &block : region)
      if (failed(mapBlock(block)))
        return failure();
    return success();
  }

  LogicalResult mapBlock(Block &block) {
    SmallVector<Operation *> group;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (op.hasTrait<OpTrait::IsTerminator>()) {
        if (failed(flush(group)))
          return failure();
        continue;
      }
      if (op.hasAttr("linnet.cuda.host_read") || isa<gpu::LaunchOp>(op))
        continue; // a kernel or its read-back, already placed
      // Operands of the op or of any op nested in it (a host loop whose
      // body reads a scalar the group computes).
      bool usesGroup = false;
      op.walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (Operation *def = v.getDefiningOp(); def && llvm::is_contained(group, def)) {
            usesGroup = true;
            return WalkResult::interrupt();
          }
        return WalkResult::advance();
      });
      // Parallel loops, copies and the host control flow around them stay
      // on the host; a scalar they take from the kernel of the ops before
      // (a bound, a condition read from an input) comes back to the host
      // when that kernel is placed (flush: `linnet.cuda.host_read`).
      if (auto par = dyn_cast<scf::ParallelOp>(&op); par && par.getNumResults() == 0) {
        if (failed(flush(group)) || failed(mapParallel(par)))
          return failure();
        continue;
      }
      if (auto copy = dyn_cast<memref::CopyOp>(&op)) {
        if (failed(flush(group)) || failed(mapCopy(copy)))
          return failure();
        continue;
      }
      // Host control flow around parallel loops stays on the host, its
      // parallel loops kernels, when what it carries (loop iter_args, if
      // results) the host can hold: buffers (allocated on the host) and
      // scalars (a kernel computing one hands it back: flush). So does
      // control flow carrying a buffer, which only the host allocates (a
      // loop whose one-element comprehension became scalar code), and control
      // flow around a deallocation. Carrying anything else (a vector), it runs
      // whole in one kernel.
      auto hostHeld = [](Type t) { return isa<MemRefType>(t) || t.isIntOrIndexOrFloat(); };
      bool carriesBuffer = llvm::any_of(op.getResultTypes(), [](Type t) { return isa<MemRefType>(t); });
      if (op.getNumRegions() > 0 && (carriesBuffer || containsParallel(&op) || containsDealloc(&op)) &&
          llvm::all_of(op.getResultTypes(), hostHeld) && llvm::all_of(op.getRegions(), [&](Region &r) {
            return llvm::all_of(r.getArgumentTypes(), hostHeld);
          })) {
        if (failed(flush(group)))
          return failure();
        for (Region &r : op.getRegions())
          if (failed(mapRegion(r)))
            return failure();
        continue;
      }
      // A view or an allocation whose offset or size the kernel before
      // computes (a slice at a position read from an input): the scalar
      // comes back to the host, the view or allocation stays there.
      if (usesGroup && op.getNumRegions() == 0 && (isMemoryEffectFree(&op) || isa<memref::AllocOp>(op)) &&
          llvm::any_of(op.getResultTypes(), [](Type t) { return isa<BaseMemRefType>(t); })) {
        if (failed(flush(group)))
          return failure();
        continue;
      }
      // A call (its callee's kernels read and write memory) and a
      // deallocation stay on the host in program order: the kernel of the
      // ops before them is placed before them, not after the next ones (a
      // state written, then read by a called function's kernel).
      if (isa<func::CallOp, memref::DeallocOp>(op)) {
        if (failed(flush(group)))
          return failure();
        continue;
      }
      // A read of a scalar buffer (an entry's `pos: i64`) that no kernel
      // still to be placed writes is a copy of its element to the host, not
      // a kernel storing it into another buffer for the host to copy: the
      // runtime serves an input's from the copy it made, without waiting for
      // the device, and a call that reads no value the device computed can
      // run as a CUDA graph. The host arithmetic on it stays on the host.
      if (auto load = dyn_cast<memref::LoadOp>(op); load && group.empty() &&
                                                     load.getMemRefType().getRank() == 0 &&
                                                     load.getMemRefType().getLayout().isIdentity()) {
        load->setAttr("linnet.cuda.host_read", OpBuilder(load).getUnitAttr());
        continue;
      }
      if (usesGroup || touchesMemory(&op) || (op.getNumRegions() > 0 && containsParallel(&op)))
        group.push_back(&op);
    }
    return flush(group);
  }

  /// `t` in the language's words: `Tensor[4, ?; f32]` for a memref.
  static std::string userType(Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    if (auto m = dyn_cast<MemRefType>(t)) {
      os << "Tensor[";
      llvm::interleaveComma(m.getShape(), os, [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      });
      os << "; " << m.getElementType() << "]";
    } else {
      os << t;
    }
    return s;
  }

  /// The ops of `group` (in order) become one kernel of one thread, placed
  /// after the last of them.
  LogicalResult flush(SmallVector<Operation *> &group) {
    if (group.empty())
      return success();
    // Scalars the host reads back (a position read from an input, a loop
    // bound): the kernel stores each into a one-element buffer, the host
    // loads it after the launch (`linnet.cuda.host_read`: a copy to the
    // host, -linnet-cuda-lower-launches).
    SmallVector<Value> escaping;
    for (Operation *op : group)
      for (Value r : op->getResults())
        for (Operation *user : r.getUsers())
          if (!llvm::is_contained(group, user) &&
              !llvm::any_of(group, [&](Operation *g) { return g->isAncestor(user); })) {
            // Reported where the value is made (a run-time loop carrying a
            // tensor): its user is often code the lowering added, unlocated.
            if (!r.getType().isIntOrIndexOrFloat())
              return op->emitError("the cuda target cannot yet bring a tensor (")
                     << userType(r.getType())
                     << ") computed on the device back to host code, as a loop with a run-time "
                        "bound that carries one needs (the cpu target compiles it)";
            if (!llvm::is_contained(escaping, r))
              escaping.push_back(r);
          }
    Operation *last = group.back();
    Location loc = last->getLoc();
    OpBuilder b(last->getContext());
    b.setInsertionPoint(group.front());
    SmallVector<Value> buffers;
    for (Value v : escaping)
      buffers.push_back(b.create<memref::AllocOp>(loc, MemRefType::get({1}, v.getType())));
    b.setInsertionPointAfter(last);
    gpu::LaunchOp launch = createLaunch(b, loc, cst(b, loc, 1), 1);
    Operation *term = launch.getBody().front().getTerminator();
    for (Operation *op : group)
      op->moveBefore(term);
    OpBuilder kb(term);
    for (auto [v, buf] : llvm::zip(escaping, buffers))
      kb.create<memref::StoreOp>(loc, v, buf, ValueRange{cst(kb, loc, 0)});
    b.setInsertionPointAfter(launch);
    for (auto [v, buf] : llvm::zip(escaping, buffers)) {
      auto load = b.create<memref::LoadOp>(loc, buf, ValueRange{cst(b, loc, 0)});
      load->setAttr("linnet.cuda.host_read", b.getUnitAttr());
      v.replaceUsesWithIf(load, [&](OpOperand &use) { return !launch->isProperAncestor(use.getOwner()); });
      b.create<memref::DeallocOp>(loc, buf);
    }
    group.clear();
    return success();
  }

  /// Canonicalization inlines the tile loop of a relation with a single
  /// tile, leaving its lane phases (and the scratch they share) in the
  /// function. Put them back in a loop of one tile when nothing between
  /// them is used after them; otherwise they stay apart, each phase a
  /// kernel of its own with the scratch in global memory (the kernel
  /// boundary is the barrier): slower, as correct.
  void regroupFoldedTiles(ModuleOp module) {
    // The phases, and the neighbor-tile loops that hold phases of their own.
    SmallVector<Operation *> orphans;
    module.walk([&](Operation *op) {
      bool phase = isa<scf::ParallelOp>(op) && op->hasAttr("linnet.lanes");
      bool tilesLoop = isa<scf::ForOp>(op) && op->hasAttr("linnet.neighbor_tiles");
      if ((!phase && !tilesLoop) || !op->hasAttr("linnet.tile_schedule"))
        return;
      Operation *parent = op->getParentOp();
      if ((isa<scf::ParallelOp>(parent) && parent->hasAttr("linnet.schedule")) ||
          (isa<scf::ForOp>(parent) && parent->hasAttr("linnet.neighbor_tiles")) ||
          op->getParentOfType<gpu::LaunchOp>())
        return;
      orphans.push_back(op);
    });
    // A group: the phases that share a scratch allocation, in block order.
    while (!orphans.empty()) {
      Operation *first = orphans.front();
      llvm::SetVector<Operation *> scratch;
      auto scratchOf = [&](Operation *p, llvm::SetVector<Operation *> &out) {
        p->walk([&](Operation *op) {
          for (Value v : op->getOperands())
            if (Operation *def = v.getDefiningOp(); def && def->hasAttr("linnet.workgroup"))
              out.insert(def);
        });
      };
      scratchOf(first, scratch);
      SmallVector<Operation *> group = {first};
      for (Operation *p : ArrayRef(orphans).drop_front()) {
        llvm::SetVector<Operation *> mine;
        scratchOf(p, mine);
        if (p->getBlock() == first->getBlock() && llvm::any_of(mine, [&](Operation *s) { return scratch.contains(s); }))
          group.push_back(p);
      }
      orphans.erase(llvm::remove_if(orphans, [&](Operation *p) { return llvm::is_contained(group, p); }),
                    orphans.end());
      Block *block = first->getBlock();
      if (llvm::any_of(scratch, [&](Operation *s) { return s->getBlock() != block; }))
        continue;
      // The range: the scratch, the phases, what lies between and the
      // scratch's deallocations.
      Operation *begin = first, *end = group.back();
      for (Operation *s : scratch)
        if (s->isBeforeInBlock(begin))
          begin = s;
      for (Operation *s : scratch)
        for (Operation *user : s->getUsers())
          if (isa<memref::DeallocOp>(user) && user->getBlock() == block && end->isBeforeInBlock(user))
            end = user;
      SmallVector<Operation *> range;
      for (Operation *op = begin;; op = op->getNextNode()) {
        range.push_back(op);
        if (op == end)
          break;
      }
      // Ops of the range that do not belong to the tile stay before it.
      bool escapes = false;
      for (Operation *op : range)
        for (Value r : op->getResults())
          for (Operation *user : r.getUsers()) {
            Operation *top = block->findAncestorOpInBlock(*user);
            escapes |= !top || !llvm::is_contained(range, top);
          }
      if (escapes)
        continue;
      OpBuilder b(begin);
      Location loc = first->getLoc();
      Value c0 = cst(b, loc, 0), c1 = cst(b, loc, 1);
      auto tile = b.create<scf::ParallelOp>(loc, ValueRange{c0}, ValueRange{c1}, ValueRange{c1});
      tile->setAttr("linnet.schedule", first->getAttr("linnet.tile_schedule"));
      Operation *terminator = tile.getBody()->getTerminator();
      for (Operation *op : range)
        op->moveBefore(terminator);
    }
  }

  /// A relation tile split over lanes (-gf-lower-kernel-to-loops{lane-split}):
  /// a block per tile of num_warps * 32 threads; each `linnet.lanes` phase
  /// runs its iterations over the block's threads (strided when there are
  /// more), a barrier after each; a `linnet.neighbor_tiles` loop (bounds
  /// alike in every thread) stays a loop in every thread with its phases'
  /// barriers inside; the tile's `linnet.workgroup` scratch stays at the
  /// kernel's top for -linnet-cuda-promote-workgroup.
  LogicalResult mapLaneTile(scf::ParallelOp par, DictionaryAttr schedule, Value tiles) {
    OpBuilder b(par);
    Location loc = par.getLoc();
    int64_t warps = 1;
    if (auto w = schedule.getAs<IntegerAttr>("num_warps"))
      warps = std::max<int64_t>(w.getInt(), 1);
    int64_t threads = std::min<int64_t>(warps * 32, 1024);
    gpu::LaunchOp launch = createLaunch(b, loc, tiles, threads);
    launch->setAttr("linnet.schedule", schedule);
    OpBuilder kb(launch.getBody().front().getTerminator());
    IRMapping map;
    map.map(par.getInductionVars()[0],
            kb.create<arith::AddIOp>(loc, par.getLowerBound()[0],
                                     kb.create<arith::MulIOp>(loc, launch.getBlockIds().x, par.getStep()[0])));
    Value tid = launch.getThreadIds().x;
    // The tile's ops in order; a neighbor-tile loop (its bounds the same in
    // every thread) keeps its phases, and their barriers, inside it.
    std::function<void(Block &, OpBuilder &)> mapOps = [&](Block &from, OpBuilder &kb) {
      for (Operation &op : from.without_terminator()) {
        if (auto loop = dyn_cast<scf::ForOp>(op); loop && loop->hasAttr("linnet.neighbor_tiles")) {
          auto inner = kb.create<scf::ForOp>(loc, map.lookupOrDefault(loop.getLowerBound()),
                                             map.lookupOrDefault(loop.getUpperBound()),
                                             map.lookupOrDefault(loop.getStep()));
          inner->setAttrs(loop->getAttrs());
          map.map(loop.getInductionVar(), inner.getInductionVar());
          OpBuilder ib = OpBuilder::atBlockBegin(inner.getBody());
          mapOps(*loop.getBody(), ib);
          continue;
        }
        auto phase = dyn_cast<scf::ParallelOp>(op);
        if (!phase || !phase->hasAttr("linnet.lanes")) {
          if (auto d = dyn_cast<memref::DeallocOp>(op))
            if (Operation *def = d.getMemref().getDefiningOp(); def && def->hasAttr("linnet.workgroup")) {
              // Scratch the tile allocates is shared memory, which lives as
              // long as the block. Scratch allocated before the tile (hoisted
              // out of a tile of one block) stays a buffer of the host's:
              // freed there once the kernel ran.
              if (!map.contains(d.getMemref())) {
                OpBuilder hb(launch);
                hb.setInsertionPointAfter(launch);
                hb.create<memref::DeallocOp>(d.getLoc(), d.getMemref());
              }
              continue;
            }
          kb.clone(op, map);
          continue;
        }
        // The phase's iterations, linearized (the last dim fastest), over
        // the threads: iteration tid, tid + threads, ...
        unsigned dims = phase.getNumLoops();
        SmallVector<Value> trips;
        Value total = cst(kb, loc, 1);
        for (unsigned d = 0; d < dims; ++d) {
          Value lb = map.lookupOrDefault(phase.getLowerBound()[d]), ub = map.lookupOrDefault(phase.getUpperBound()[d]),
                st = map.lookupOrDefault(phase.getStep()[d]);
          Value t = kb.create<arith::DivUIOp>(
              loc, kb.create<arith::AddIOp>(loc, kb.create<arith::SubIOp>(loc, ub, lb),
                                            kb.create<arith::SubIOp>(loc, st, cst(kb, loc, 1))),
              st);
          trips.push_back(t);
          total = kb.create<arith::MulIOp>(loc, total, t);
        }
        auto loop = kb.create<scf::ForOp>(loc, tid, total, cst(kb, loc, threads));
        OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
        Value rest = loop.getInductionVar();
        for (int d = int(dims) - 1; d >= 0; --d) {
          Value idx = d == 0 ? rest : lb.create<arith::RemUIOp>(loc, rest, trips[d]).getResult();
          if (d > 0)
            rest = lb.create<arith::DivUIOp>(loc, rest, trips[d]);
          map.map(phase.getInductionVars()[d],
                  lb.create<arith::AddIOp>(loc, map.lookupOrDefault(phase.getLowerBound()[d]),
                                           lb.create<arith::MulIOp>(loc, idx, map.lookupOrDefault(phase.getStep()[d]))));
        }
        for (Operation &inner : phase.getBody()->without_terminator())
          lb.clone(inner, map);
        kb.create<gpu::BarrierOp>(loc);
      }
    };
    mapOps(*par.getBody(), kb);
    par.erase();
    return success();
  }

  LogicalResult mapParallel(scf::ParallelOp par) {
    OpBuilder b(par);
    Location loc = par.getLoc();
    unsigned n = par.getNumLoops();
    // Trip counts, as the loop's bounds give them: ceil((ub - lb) / step).
    SmallVector<Value> trips;
    for (unsigned d = 0; d < n; ++d) {
      Value span = b.create<arith::SubIOp>(loc, par.getUpperBound()[d], par.getLowerBound()[d]);
      Value stepM1 = b.create<arith::SubIOp>(loc, par.getStep()[d], cst(b, loc, 1));
      Value t = b.create<arith::DivUIOp>(loc, b.create<arith::AddIOp>(loc, span, stepM1), par.getStep()[d]);
      // An empty range gives no iterations (span may be negative).
      Value empty = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, par.getUpperBound()[d],
                                            par.getLowerBound()[d]);
      trips.push_back(b.create<arith::SelectOp>(loc, empty, cst(b, loc, 0), t));
    }
    auto schedule = par->getAttrOfType<DictionaryAttr>("linnet.schedule");
    IRMapping map;
    if (schedule && n == 1 && !par->hasAttr("linnet.lanes")) {
      // A relation kernel: one block per tile of block_rows rows; the
      // block's threads take the tile's rows in turn.
      int64_t warps = 1;
      if (auto w = schedule.getAs<IntegerAttr>("num_warps"))
        warps = std::max<int64_t>(w.getInt(), 1);
      int64_t threads = std::min<int64_t>(warps * 32, 1024);
      gpu::LaunchOp launch = createLaunch(b, loc, trips[0], threads);
      launch->setAttr("linnet.schedule", schedule);
      OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
      Value iv = kb.create<arith::AddIOp>(
          loc, par.getLowerBound()[0], kb.create<arith::MulIOp>(loc, launch.getBlockIds().x, par.getStep()[0]));
      map.map(par.getInductionVars()[0], iv);
      Value tid = launch.getThreadIds().x;
      for (Operation &op : par.getBody()->without_terminator()) {
        Operation *clone = kb.clone(op, map);
        // The tile's row loop: row r0 + tid, step by the block's threads.
        if (auto rows = dyn_cast<scf::ForOp>(clone); rows && rows->getParentOp() == launch &&
                                                   rows->getAttr("linnet.rows")) {
          OpBuilder rb(rows);
          rows.setLowerBound(rb.create<arith::AddIOp>(
              loc, rows.getLowerBound(), rb.create<arith::MulIOp>(loc, tid, rows.getStep())));
          rows.setStep(rb.create<arith::MulIOp>(loc, rows.getStep(), cst(rb, loc, threads)));
        }
      }
      bool distributed = false;
      launch.walk([&](scf::ForOp f) { distributed |= f->hasAttr("linnet.rows"); });
      if (!distributed) {
        // No row loop to share: thread 0 runs the tile.
        return par.emitError("relation kernel without its row loop (linnet.rows): cannot map it");
      }
      par.erase();
      return success();
    }
    // Any other parallel loop: its iterations linearized over a 1-D grid.
    Value total = cst(b, loc, 1);
    for (Value t : trips)
      total = b.create<arith::MulIOp>(loc, total, t);
    int64_t threads = std::clamp<int64_t>(blockSize, 1, 1024);
    Value grid = b.create<arith::DivUIOp>(loc, b.create<arith::AddIOp>(loc, total, cst(b, loc, threads - 1)),
                                          cst(b, loc, threads));
    gpu::LaunchOp launch = createLaunch(b, loc, grid, threads);
    OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value linear = kb.create<arith::AddIOp>(
        loc, kb.create<arith::MulIOp>(loc, launch.getBlockIds().x, cst(kb, loc, threads)), launch.getThreadIds().x);
    Value inRange = kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, linear, total);
    auto guard = kb.create<scf::IfOp>(loc, inRange, /*withElse=*/false);
    OpBuilder gb = guard.getThenBodyBuilder();
    // The last dim varies fastest, as the loop nest would run it.
    Value rest = linear;
    SmallVector<Value> ivs(n);
    for (int d = int(n) - 1; d >= 0; --d) {
      Value idx = d == 0 ? rest : gb.create<arith::RemUIOp>(loc, rest, trips[d]);
      if (d > 0)
        rest = gb.create<arith::DivUIOp>(loc, rest, trips[d]);
      ivs[d] = gb.create<arith::AddIOp>(loc, par.getLowerBound()[d],
                                        gb.create<arith::MulIOp>(loc, idx, par.getStep()[d]));
    }
    for (unsigned d = 0; d < n; ++d)
      map.map(par.getInductionVars()[d], ivs[d]);
    for (Operation &op : par.getBody()->without_terminator())
      gb.clone(op, map);
    par.erase();
    return success();
  }

  /// memref.copy: one thread per element.
  LogicalResult mapCopy(memref::CopyOp copy) {
    auto type = dyn_cast<MemRefType>(copy.getSource().getType());
    if (!type)
      return copy.emitError("the cuda target copies ranked memrefs only");
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      lbs.push_back(cst(b, loc, 0));
      ubs.push_back(b.create<memref::DimOp>(loc, copy.getSource(), d));
      steps.push_back(cst(b, loc, 1));
    }
    if (type.getRank() == 0) {
      lbs.push_back(cst(b, loc, 0));
      ubs.push_back(cst(b, loc, 1));
      steps.push_back(cst(b, loc, 1));
    }
    auto par = b.create<scf::ParallelOp>(loc, lbs, ubs, steps,
                                         [&](OpBuilder &pb, Location l, ValueRange ivs) {
                                           ValueRange idx = type.getRank() == 0 ? ValueRange{} : ivs;
                                           Value v = pb.create<memref::LoadOp>(l, copy.getSource(), idx);
                                           pb.create<memref::StoreOp>(l, v, copy.getTarget(), idx);
                                         });
    copy.erase();
    return mapParallel(par);
  }
};

} // namespace
} // namespace linnet::cuda

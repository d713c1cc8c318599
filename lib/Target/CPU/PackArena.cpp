//===- PackArena.cpp - A block's temporaries as views of one arena --------===//
//
// -linnet-cpu-pack-arena (Passes.td). Bufferization gives each temporary
// its own memref.alloc, freed at the end of its block: the default Llama's
// decode made 70 heap allocations a token. Here the buffers a block frees
// itself share one arena, packed by live range into slots, so a block
// takes one piece of memory however many temporaries it has; the arena
// comes from the thread's workspace stack (-linnet-cpu-lower-workspace),
// so at steady state nothing is allocated at all.
//
// Slots keep the packing valid for every value of a dynamic size: two
// buffers share a slot only where their lives are disjoint, and a slot's
// size is the same expression for all of its buffers (dynamic) or the
// largest of them (static). Static slots come first, so their offsets fold
// to constants.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/Passes.h"

#include "mlir/Analysis/DataLayoutAnalysis.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace linnet::cpu {
#define GEN_PASS_DEF_LINNETCPUPACKARENA
#include "linnet/Target/CPU/Passes.h.inc"
} // namespace linnet::cpu

using namespace mlir;

namespace {

constexpr int64_t kAlign = 64;

int64_t alignUp(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

/// A temporary of the block: its alloc, its dealloc, its live range (in
/// the positions of the block's ops) and its size, elementBytes times the
/// static dims times the dynamic ones.
struct Temp {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  unsigned start = 0, end = 0;
  int64_t factor = 1;
  SmallVector<Value> dynamic;
  bool isStatic() const { return dynamic.empty(); }
};

struct Slot {
  int64_t staticBytes = 0;         // static slots: the largest member
  int64_t factor = 0;              // dynamic slots: the members' expression
  SmallVector<Value> dynamic;
  unsigned freeFrom = 0;           // the position after its last member's end
  bool isStatic() const { return dynamic.empty(); }
};

/// The op of `block` that holds `op` (itself, or an ancestor), or null.
Operation *inBlock(Block *block, Operation *op) {
  while (op && op->getBlock() != block)
    op = op->getParentOp();
  return op;
}

/// The last position in `block` where the buffer `root` is used (through
/// views), and its one dealloc; nullopt where the buffer escapes: returned,
/// yielded, selected, deallocated through a view or more than once.
std::optional<unsigned> lastUse(Block *block, Value root, const DenseMap<Operation *, unsigned> &pos,
                                memref::DeallocOp &dealloc) {
  unsigned last = 0;
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto d = dyn_cast<memref::DeallocOp>(user)) {
        if (v != root || dealloc || d->getBlock() != block)
          return std::nullopt;
        dealloc = d;
        continue;
      }
      if (user->hasTrait<OpTrait::IsTerminator>())
        return std::nullopt;
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      bool viewOf = (view && view.getViewSource() == v) || isa<memref::CastOp>(user);
      if (viewOf) {
        for (Value r : user->getResults())
          work.push_back(r);
      } else if (isa<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        // The address flows on as an integer (a BLAS call's pointer, CSE'd
        // between calls): the buffer lives while anything computed from
        // it is used.
        SmallVector<Value> derived(user->getResults());
        DenseSet<Operation *> seen;
        while (!derived.empty())
          for (Operation *u : derived.pop_back_val().getUsers()) {
            if (!seen.insert(u).second)
              continue;
            Operation *at = inBlock(block, u);
            if (!at)
              return std::nullopt;
            last = std::max(last, pos.lookup(at));
            llvm::append_range(derived, u->getResults());
          }
      } else if (llvm::any_of(user->getResultTypes(), [](Type t) { return isa<BaseMemRefType>(t); }) ||
                 isa<memref::ExtractStridedMetadataOp>(user)) {
        return std::nullopt; // an op that could hand the buffer on
      }
      Operation *at = inBlock(block, user);
      if (!at)
        return std::nullopt;
      last = std::max(last, pos.lookup(at));
    }
  }
  if (!dealloc)
    return std::nullopt;
  return last;
}

/// Whether `v` is defined before position `at` of `block` (or outside it).
bool availableAt(Value v, Block *block, unsigned at, const DenseMap<Operation *, unsigned> &pos) {
  // An argument, or a value of an enclosing block: it dominates the
  // alloc that uses it, so it dominates all of this block.
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != block)
    return true;
  return pos.lookup(def) < at;
}

/// Moves the side-effect free ops that compute `v` (a clamp of an
/// argument, a dim) before `before`, the arena's place, where their
/// operands allow it; whether `v` is then available there. Moving such an
/// op earlier in its block changes nothing but where it is computed.
bool hoist(Value v, Block *block, Operation *before, DenseMap<Operation *, unsigned> &pos,
           unsigned depth = 0) {
  unsigned at = pos.lookup(before);
  if (availableAt(v, block, at, pos))
    return true;
  Operation *def = v.getDefiningOp();
  if (depth > 8 || def->getNumRegions() || !isMemoryEffectFree(def))
    return false;
  for (Value operand : def->getOperands())
    if (!hoist(operand, block, before, pos, depth + 1))
      return false;
  def->moveBefore(before);
  pos[def] = at == 0 ? 0 : at - 1;
  return true;
}

/// A value as a linear form over the values it is computed from (sums,
/// differences, multiples, index casts of them) plus a constant.
struct Linear {
  llvm::SmallDenseMap<Value, int64_t, 4> terms;
  int64_t constant = 0;
};

Linear linear(Value v, unsigned depth = 0) {
  Linear l;
  Operation *def = v.getDefiningOp();
  auto add = [&](const Linear &o, int64_t k) {
    for (auto [t, c] : o.terms)
      l.terms[t] += k * c;
    l.constant += k * o.constant;
  };
  if (def && depth < 16) {
    if (auto c = dyn_cast<arith::ConstantOp>(def))
      if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
        l.constant = i.getInt();
        return l;
      }
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
      return linear(def->getOperand(0), depth + 1);
    if (isa<arith::AddIOp, arith::SubIOp>(def)) {
      add(linear(def->getOperand(0), depth + 1), 1);
      add(linear(def->getOperand(1), depth + 1), isa<arith::SubIOp>(def) ? -1 : 1);
      return l;
    }
  }
  l.terms[v] = 1;
  return l;
}

/// An upper bound of a - b, where the clamps they are built of give one:
/// decode's new rows, `max(min(P + 1, W), c) - c` with c = `max(min(P, W),
/// 0)`, are at most 1. Min and max expand into their operands (for two
/// mins, pairwise: min(a1, a2) - min(b1, b2) <= max(a1 - b1, a2 - b2));
/// what remains must differ by a constant.
std::optional<int64_t> diffBound(Value a, Value b, unsigned depth = 0) {
  if (depth > 12)
    return std::nullopt;
  Linear la = linear(a), lb = linear(b);
  bool same = la.terms.size() == lb.terms.size();
  for (auto [t, c] : la.terms)
    same = same && lb.terms.lookup(t) == c;
  if (same)
    return la.constant - lb.constant;
  auto opOf = [](Value v) { return v.getDefiningOp(); };
  auto isMax = [&](Value v) { return isa_and_nonnull<arith::MaxSIOp>(opOf(v)); };
  auto isMin = [&](Value v) { return isa_and_nonnull<arith::MinSIOp>(opOf(v)); };
  auto lo = [](std::optional<int64_t> x, std::optional<int64_t> y) -> std::optional<int64_t> {
    if (x && y)
      return std::min(*x, *y);
    return x ? x : y;
  };
  auto hi = [](std::optional<int64_t> x, std::optional<int64_t> y) -> std::optional<int64_t> {
    if (x && y)
      return std::max(*x, *y);
    return std::nullopt;
  };
  auto arg = [&](Value v, unsigned i) { return opOf(v)->getOperand(i); };
  unsigned d = depth + 1;
  if (isMax(a))
    return hi(diffBound(arg(a, 0), b, d), diffBound(arg(a, 1), b, d));
  if (isMax(b))
    return lo(diffBound(a, arg(b, 0), d), diffBound(a, arg(b, 1), d));
  if (isMin(a) && isMin(b))
    return lo(hi(diffBound(arg(a, 0), arg(b, 0), d), diffBound(arg(a, 1), arg(b, 1), d)),
              hi(diffBound(arg(a, 0), arg(b, 1), d), diffBound(arg(a, 1), arg(b, 0), d)));
  if (isMin(a))
    return lo(diffBound(arg(a, 0), b, d), diffBound(arg(a, 1), b, d));
  if (isMin(b))
    return hi(diffBound(a, arg(b, 0), d), diffBound(a, arg(b, 1), d));
  return std::nullopt;
}

/// An upper bound of the size `v`: a difference's bound, or its bound
/// against zero.
std::optional<int64_t> upperBound(Value v) {
  if (auto sub = v.getDefiningOp<arith::SubIOp>())
    return diffBound(sub.getLhs(), sub.getRhs());
  OpBuilder b(v.getContext());
  // A zero to subtract: a constant op outside any block, erased after.
  auto zero = b.create<arith::ConstantIndexOp>(UnknownLoc::get(v.getContext()), 0);
  std::optional<int64_t> ub = diffBound(v, zero);
  zero.erase();
  return ub;
}

/// The address of a view's data, where code takes it as an integer (a
/// BLAS call's pointer), as the arena's address plus the view's offset:
/// -expand-strided-metadata rewrites the address of a view-like op's
/// result to its source's, which holds for subviews and reshapes (their
/// base address is their source's) but not for memref.view, whose base is
/// shifted. Followed through the ops that keep the base address.
void addressThroughArena(Value view, Value arena, Value offset) {
  SmallVector<Value> work{view};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : llvm::make_early_inc_range(v.getUsers())) {
      if (auto extract = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        OpBuilder b(extract);
        Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(extract.getLoc(), arena);
        extract.replaceAllUsesWith(b.create<arith::AddIOp>(extract.getLoc(), base, offset).getResult());
        extract.erase();
        continue;
      }
      if (isa<memref::SubViewOp, memref::CastOp, memref::CollapseShapeOp, memref::ExpandShapeOp,
              memref::ReinterpretCastOp, memref::TransposeOp>(user))
        work.push_back(user->getResult(0));
    }
  }
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

/// Packs the temporaries of `block`; returns the arena's size (its upper
/// bound where it is dynamic), 0 where it has none, nullopt where a dynamic
/// size has no bound.
std::optional<int64_t> packBlock(Block &block, const DataLayout &layout) {
  DenseMap<Operation *, unsigned> pos;
  unsigned i = 0;
  for (Operation &op : block)
    pos[&op] = i++;

  SmallVector<Temp> temps;
  int64_t align = kAlign;
  for (Operation &op : block) {
    auto alloc = dyn_cast<memref::AllocOp>(&op);
    if (!alloc || alloc->hasAttr("linnet.workspace"))
      continue;
    MemRefType type = alloc.getType();
    if (!type.getLayout().isIdentity() || type.getMemorySpace() || !alloc.getSymbolOperands().empty())
      continue;
    Type elem = type.getElementType();
    if (!elem.isIntOrIndexOrFloat())
      continue;
    Temp t;
    t.alloc = alloc;
    t.start = pos[&op];
    std::optional<unsigned> end = lastUse(&block, alloc.getResult(), pos, t.dealloc);
    if (!end)
      continue;
    t.end = std::max(*end, t.start);
    t.factor = static_cast<int64_t>(layout.getTypeSize(elem).getFixedValue());
    for (int64_t d : type.getShape())
      if (!ShapedType::isDynamic(d))
        t.factor *= d;
    t.dynamic.assign(alloc.getDynamicSizes().begin(), alloc.getDynamicSizes().end());
    // The arena is taken before the first temporary: the sizes of the
    // others must be known there.
    if (!temps.empty() &&
        !llvm::all_of(t.dynamic, [&](Value v) { return hoist(v, &block, temps.front().alloc, pos); }))
      continue;
    if (auto a = alloc.getAlignment())
      align = std::max<int64_t>(align, *a);
    temps.push_back(std::move(t));
  }
  // One temporary alone still moves to the workspace stack: no call
  // allocates at steady state.
  if (temps.empty())
    return 0;

  // Slots, in the order the temporaries are allocated.
  SmallVector<Slot> slots;
  SmallVector<unsigned> slotOf;
  for (const Temp &t : temps) {
    int best = -1;
    for (auto [k, s] : llvm::enumerate(slots)) {
      if (s.freeFrom > t.start || s.isStatic() != t.isStatic())
        continue;
      if (!t.isStatic()) {
        if (s.factor == t.factor && s.dynamic == t.dynamic) {
          best = k;
          break;
        }
        continue;
      }
      // Static: the smallest slot that holds it, else the largest to grow.
      int64_t need = alignUp(t.factor, align);
      if (best < 0) {
        best = k;
        continue;
      }
      int64_t have = slots[best].staticBytes, cand = s.staticBytes;
      bool haveFits = have >= need, candFits = cand >= need;
      if ((candFits && (!haveFits || cand < have)) || (!candFits && !haveFits && cand > have))
        best = k;
    }
    if (best < 0) {
      slots.push_back({});
      best = slots.size() - 1;
      slots[best].factor = t.factor;
      slots[best].dynamic = t.dynamic;
    }
    Slot &s = slots[best];
    if (t.isStatic())
      s.staticBytes = std::max(s.staticBytes, alignUp(t.factor, align));
    s.freeFrom = t.end + 1;
    slotOf.push_back(best);
  }

  // Offsets: static slots first (constants), then the dynamic ones.
  Operation *first = temps.front().alloc;
  Location loc = first->getLoc();
  OpBuilder b(first);
  SmallVector<Value> offsets(slots.size());
  int64_t staticEnd = 0;
  for (auto [k, s] : llvm::enumerate(slots))
    if (s.isStatic()) {
      offsets[k] = indexConst(b, loc, staticEnd);
      staticEnd += s.staticBytes;
    }
  Value end = indexConst(b, loc, staticEnd);
  bool dynamic = false;
  for (auto [k, s] : llvm::enumerate(slots)) {
    if (s.isStatic())
      continue;
    dynamic = true;
    offsets[k] = end;
    Value bytes = indexConst(b, loc, s.factor);
    for (Value d : s.dynamic)
      bytes = b.create<arith::MulIOp>(loc, bytes, d);
    // Rounded up to the alignment.
    Value mask = indexConst(b, loc, align - 1);
    bytes = b.create<arith::AndIOp>(loc, b.create<arith::AddIOp>(loc, bytes, mask),
                                    indexConst(b, loc, ~(align - 1)));
    end = b.create<arith::AddIOp>(loc, end, bytes);
  }
  auto arenaType = MemRefType::get({dynamic ? ShapedType::kDynamic : staticEnd}, b.getI8Type());
  auto arena = b.create<memref::AllocOp>(loc, arenaType, dynamic ? ValueRange{end} : ValueRange{},
                                         b.getI64IntegerAttr(align));
  arena->setAttr("linnet.workspace", b.getUnitAttr());
  if (!dynamic)
    arena->setAttr("linnet.workspace_bytes", b.getI64IntegerAttr(staticEnd));

  Operation *lastDealloc = nullptr;
  for (auto [k, t] : llvm::enumerate(temps)) {
    OpBuilder at(t.alloc);
    Value view = at.create<memref::ViewOp>(t.alloc.getLoc(), t.alloc.getType(), arena.getResult(),
                                           offsets[slotOf[k]], t.dynamic);
    t.alloc.getResult().replaceAllUsesWith(view);
    t.alloc.erase();
    addressThroughArena(view, arena.getResult(), offsets[slotOf[k]]);
    if (!lastDealloc || lastDealloc->isBeforeInBlock(t.dealloc))
      lastDealloc = t.dealloc;
  }
  OpBuilder after(lastDealloc);
  after.create<memref::DeallocOp>(lastDealloc->getLoc(), arena.getResult());
  for (Temp &t : temps)
    t.dealloc.erase();
  if (!dynamic)
    return staticEnd;
  // The most a dynamic arena takes, where its sizes are bounded.
  int64_t bound = staticEnd;
  for (const Slot &s : slots) {
    if (s.isStatic())
      continue;
    int64_t bytes = s.factor;
    for (Value d : s.dynamic) {
      std::optional<int64_t> ub = upperBound(d);
      if (!ub || *ub < 0)
        return std::nullopt;
      bytes *= *ub;
    }
    bound += alignUp(bytes, align);
  }
  arena->setAttr("linnet.workspace_bound", b.getI64IntegerAttr(bound));
  return bound;
}

struct PackArenaPass : public linnet::cpu::impl::LinnetCPUPackArenaBase<PackArenaPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    const DataLayout &layout = getAnalysis<DataLayoutAnalysis>().getAtOrAbove(module);
    // Inner blocks first: an outer block's packing does not look inside.
    DenseMap<Block *, std::optional<int64_t>> arenaOf;
    module.walk<WalkOrder::PostOrder>([&](Operation *op) {
      for (Region &r : op->getRegions())
        for (Block &b : r)
          if (!isa<ModuleOp>(op))
            arenaOf[&b] = packBlock(b, layout);
    });

    // The workspace one thread holds while a function runs.
    SymbolTable symbols(module);
    DenseMap<Operation *, std::optional<int64_t>> peakOf;
    std::function<std::optional<int64_t>(func::FuncOp)> funcPeak;
    std::function<std::optional<int64_t>(Block &)> blockPeak = [&](Block &b) -> std::optional<int64_t> {
      auto it = arenaOf.find(&b);
      std::optional<int64_t> own = it == arenaOf.end() ? std::optional<int64_t>(0) : it->second;
      if (!own)
        return std::nullopt;
      int64_t inner = 0;
      for (Operation &op : b) {
        if (auto call = dyn_cast<func::CallOp>(&op)) {
          if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()); callee && !callee.isExternal()) {
            std::optional<int64_t> p = funcPeak(callee);
            if (!p)
              return std::nullopt;
            inner = std::max(inner, *p);
          }
        }
        for (Region &r : op.getRegions())
          for (Block &nb : r) {
            std::optional<int64_t> p = blockPeak(nb);
            if (!p)
              return std::nullopt;
            inner = std::max(inner, *p);
          }
      }
      return *own + inner;
    };
    funcPeak = [&](func::FuncOp f) -> std::optional<int64_t> {
      if (auto it = peakOf.find(f); it != peakOf.end())
        return it->second;
      peakOf[f] = std::nullopt; // recursion: no static peak
      std::optional<int64_t> p = blockPeak(f.getBody().front());
      for (Block &b : llvm::drop_begin(f.getBody().getBlocks()))
        if (std::optional<int64_t> q = blockPeak(b); !q || !p)
          p = std::nullopt;
        else
          p = std::max(*p, *q);
      peakOf[f] = p;
      return p;
    };
    Builder b(module.getContext());
    SmallVector<NamedAttribute> entries;
    module.walk([&](func::FuncOp f) {
      if (f.isExternal())
        return;
      std::optional<int64_t> p = funcPeak(f);
      if (p)
        f->setAttr("linnet.workspace_peak", b.getI64IntegerAttr(*p));
      else
        f->removeAttr("linnet.workspace_peak");
      // The entries' peaks, for the runtime description (null: unbounded).
      if (f.isPublic())
        entries.push_back(b.getNamedAttr(f.getSymName(), p ? Attribute(b.getI64IntegerAttr(*p))
                                                           : Attribute(b.getUnitAttr())));
    });
    module->setAttr("linnet.workspace_peaks", b.getDictionaryAttr(entries));
  }
};

} // namespace

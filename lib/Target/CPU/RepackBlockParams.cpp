//===- RepackBlockParams.cpp - q4_0 params in groups of eight rows --------===//
//
// -linnet-cpu-repack-block-params (Passes.td): a q4_0 param that only
// linalg.generic ops read, at the block bytes the importer names, takes the
// layout of BlockRepack.h. Each function reads it through one view of the
// grouped shape, and every generic's maps are rewritten to the bytes'
// new places, so the IR stays exact for any reader; the streamed products
// (BlockMatvec.cpp) recognize the view and compute eight rows a step.
//
//===----------------------------------------------------------------------===//

#include "BlockRepack.h"

#include "linnet/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <set>

namespace linnet::cpu {
#define GEN_PASS_DEF_LINNETCPUREPACKBLOCKPARAMS
#include "linnet/Target/CPU/Passes.h.inc"
} // namespace linnet::cpu

using namespace mlir;
using namespace linnet::cpu;

namespace {

/// `e mod 16 + 2`: a q4_0 quant byte as the importer indexes it
/// (support::blockBytes), so within 2 .. 17.
bool isQuantByte(AffineExpr e) {
  auto add = dyn_cast<AffineBinaryOpExpr>(e);
  if (!add || add.getKind() != AffineExprKind::Add)
    return false;
  auto two = dyn_cast<AffineConstantExpr>(add.getRHS());
  auto mod = dyn_cast<AffineBinaryOpExpr>(add.getLHS());
  auto sixteen = mod ? dyn_cast<AffineConstantExpr>(mod.getRHS()) : nullptr;
  return two && two.getValue() == 2 && mod && mod.getKind() == AffineExprKind::Mod && sixteen &&
         sixteen.getValue() == 16;
}

bool isScaleByte(AffineExpr e) {
  auto c = dyn_cast<AffineConstantExpr>(e);
  return c && (c.getValue() == 0 || c.getValue() == 1);
}

/// A q4_0 param's blocks as a function takes them: memref<N x KB x 18 x i8>,
/// contiguous, N a multiple of 8.
bool isCandidateType(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  return m && m.hasStaticShape() && m.getRank() == 3 && m.getLayout().isIdentity() &&
         m.getElementType().isInteger(8) && m.getDimSize(2) == 18 && m.getDimSize(0) % kRepackRows == 0 &&
         m.getDimSize(0) > 0;
}

/// A function argument that may take the grouped layout.
using Node = std::pair<Operation *, unsigned>;
func::FuncOp fn(const Node &n) { return cast<func::FuncOp>(n.first); }
BlockArgument argOf(const Node &n) { return fn(n).getArgument(n.second); }

/// Whether `use` reads the blocks as the grouped layout can be read: an
/// input of a generic whose body dequantizes q4_0 and whose map for it is
/// (row, block, scale or quant byte).
bool isBlockRead(OpOperand &use) {
  auto g = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!g || !g.isDpsInput(&use))
    return false;
  bool q4 = false;
  g.getRegion().walk([&](Operation *o) {
    if (auto tag = o->getAttrOfType<StringAttr>("linnet.dequant"))
      q4 |= tag.getValue() == "q4_0";
  });
  AffineMap m = g.getMatchingIndexingMap(&use);
  return q4 && m.getNumResults() == 3 && (isScaleByte(m.getResult(2)) || isQuantByte(m.getResult(2)));
}

struct RepackBlockParams : linnet::cpu::impl::LinnetCPURepackBlockParamsBase<RepackBlockParams> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Candidates: every function argument of the blocks' type. Params
    // (linnet.tensors) carry their path: the runtime binds one buffer a
    // path for every entry, so every function must agree on it. Layers
    // are functions the entries call with the params, so the layout
    // follows calls: a private callee's argument takes it when every call
    // passes it a candidate, and a candidate passed to a call needs the
    // callee's argument to take it.
    std::map<Node, std::string> pathOf;
    std::set<Node> ok;
    for (auto f : module.getOps<func::FuncOp>()) {
      if (f.isExternal())
        continue;
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        if (isCandidateType(f.getArgument(i).getType()))
          ok.insert({f.getOperation(), i});
      if (auto tensors = f->getAttrOfType<ArrayAttr>("linnet.tensors"))
        for (Attribute a : tensors) {
          auto d = dyn_cast<DictionaryAttr>(a);
          auto kind = d ? d.getAs<StringAttr>("kind") : nullptr;
          auto path = d ? d.getAs<StringAttr>("path") : nullptr;
          auto at = d ? d.getAs<IntegerAttr>("arg") : nullptr;
          if (kind && kind.getValue() == "param" && path && at && at.getInt() >= 0 &&
              at.getInt() < f.getNumArguments())
            pathOf[{f.getOperation(), unsigned(at.getInt())}] = path.getValue().str();
        }
    }
    // A candidate that is neither a param nor a private function's
    // argument (a public function's other arguments) is bound by no one.
    for (auto it = ok.begin(); it != ok.end();)
      it = (!pathOf.count(*it) && !fn(*it).isPrivate()) ? ok.erase(it) : std::next(it);
    auto nodeOf = [&](Value v) -> std::optional<Node> {
      auto arg = dyn_cast<BlockArgument>(v);
      auto f = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()) : nullptr;
      if (!f || arg.getOwner() != &f.getBody().front())
        return std::nullopt;
      return Node{f.getOperation(), arg.getArgNumber()};
    };
    // Each function's calls, from one walk of the module; a function named
    // by anything but a call (its address taken) is never a callee here.
    llvm::DenseMap<Operation *, SmallVector<func::CallOp>> callsTo;
    llvm::DenseSet<Operation *> escaped;
    if (std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(&module.getBodyRegion())) {
      for (const SymbolTable::SymbolUse &u : *uses) {
        Operation *f = symbols.lookup(u.getSymbolRef().getRootReference());
        if (auto call = dyn_cast<func::CallOp>(u.getUser()))
          callsTo[f].push_back(call);
        else
          escaped.insert(f);
      }
    } else {
      return; // an op with unknown symbol uses: nothing is known to be safe
    }
    for (bool changed = true; changed;) {
      changed = false;
      std::set<Node> bad;
      std::set<std::string> badPaths;
      for (const Node &n : ok) {
        for (OpOperand &use : argOf(n).getUses()) {
          if (isBlockRead(use))
            continue;
          auto call = dyn_cast<func::CallOp>(use.getOwner());
          auto callee = call ? symbols.lookup<func::FuncOp>(call.getCallee()) : nullptr;
          if (!callee || !ok.count({callee.getOperation(), use.getOperandNumber()}))
            bad.insert(n);
        }
      }
      // A private callee's argument: every call passes a candidate.
      for (const Node &n : ok) {
        if (!fn(n).isPrivate())
          continue;
        if (escaped.contains(n.first)) {
          bad.insert(n);
          continue;
        }
        for (func::CallOp call : callsTo.lookup(n.first)) {
          std::optional<Node> from = nodeOf(call.getOperand(n.second));
          if (!from || !ok.count(*from))
            bad.insert(n);
        }
      }
      for (const Node &n : bad)
        if (pathOf.count(n))
          badPaths.insert(pathOf[n]);
      for (const auto &[n, path] : pathOf)
        if (badPaths.count(path) && ok.count(n))
          bad.insert(n);
      for (const Node &n : bad)
        changed |= ok.erase(n) > 0;
    }

    // In the module's order (the same input, the same IR).
    SmallVector<Node> order;
    for (auto f : module.getOps<func::FuncOp>())
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        if (ok.count({f.getOperation(), i}))
          order.push_back({f.getOperation(), i});
    std::set<std::string> repacked;
    for (const Node &n : order) {
      func::FuncOp f = fn(n);
      if (pathOf.count(n))
        repacked.insert(pathOf[n]);
      BlockArgument arg = argOf(n);
      SmallVector<OpOperand *> reads;
      for (OpOperand &use : arg.getUses())
        if (isa<linalg::GenericOp>(use.getOwner()))
          reads.push_back(&use);
      if (reads.empty())
        continue;
      auto t = cast<MemRefType>(arg.getType());
      int64_t groups = t.getDimSize(0) / kRepackRows, kb = t.getDimSize(1);
      auto viewType = MemRefType::get({groups, kb, kRepackGroupBytes}, t.getElementType());
      OpBuilder b(f.getBody());
      auto view = b.create<memref::ReinterpretCastOp>(f.getLoc(), viewType, arg, /*offset=*/0,
                                                      ArrayRef<int64_t>{groups, kb, kRepackGroupBytes},
                                                      ArrayRef<int64_t>{kb * kRepackGroupBytes, kRepackGroupBytes, 1});
      view->setAttr("linnet.layout", b.getStringAttr(kQ4_0x8));
      for (OpOperand *use : reads) {
        auto g = cast<linalg::GenericOp>(use->getOwner());
        SmallVector<AffineMap> maps = g.getIndexingMapsArray();
        AffineMap &m = maps[use->getOperandNumber()];
        AffineExpr row = m.getResult(0);
        m = AffineMap::get(m.getNumDims(), m.getNumSymbols(),
                           {row.floorDiv(kRepackRows), m.getResult(1), repackedByte(row, m.getResult(2))},
                           m.getContext());
        g.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
        use->set(view);
      }
    }
    if (repacked.empty())
      return;
    NamedAttrList layouts;
    if (auto old = module->getAttrOfType<DictionaryAttr>("linnet.cpu.layouts"))
      layouts.append(old.getValue());
    for (const std::string &p : repacked)
      layouts.set(p, StringAttr::get(module.getContext(), kQ4_0x8));
    module->setAttr("linnet.cpu.layouts", layouts.getDictionary(module.getContext()));
  }
};

} // namespace

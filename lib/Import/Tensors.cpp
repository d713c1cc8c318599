//===- Tensors.cpp - Tensor indexing, slices and comprehensions -----------===//
//
// Indexing and slicing tensors and arrays of sub blocks, and comprehensions:
// a KV-cache style update as a tensor.insert_slice, a relation reduction as
// gf.apply (Relations.cpp), one structured linalg.generic where the body's
// reads fit indexing maps (contractions, elementwise and broadcast maps), a
// linalg.generic reading at linalg.index positions, else a loop nest that
// inserts each element.
//
//===----------------------------------------------------------------------===//
#include "ImporterImpl.h"

#include "mlir/Dialect/Affine/Utils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace linnet::import::detail {

V Importer::index(const ir::Op &op, Frame &f) {
  V base = get(f, op.operands[0]);
  if (base.k == V::Blocks) {
    V i = scalarOf(get(f, op.operands[1]));
    if (!i.c)
      fail(fmt::format("{}: an array of sub blocks indexed by a value not known at build time",
                       where_));
    V r;
    r.k = V::Block;
    r.path = base.path + "." + std::to_string(*i.c);
    elementPaths_.insert(r.path);
    return r;
  }
  Value t = tensorOf(base);
  SmallVector<Value> idx;
  for (size_t i = 1; i < op.operands.size(); ++i)
    idx.push_back(convert(scalarOf(get(f, op.operands[i])).v, b_.getIndexType()));
  if (!base.fmt.empty())
    return blockRead(op, base, idx);
  auto tt = cast<RankedTensorType>(t.getType());
  if ((int64_t)idx.size() != tt.getRank())
    fail(fmt::format("{}: {} indices into a rank-{} tensor", where_, idx.size(), tt.getRank()));
  for (size_t a = 0; a < idx.size(); ++a) {
    Value size = tt.isDynamicDim(a) ? b_.create<tensor::DimOp>(loc_, t, a).getResult()
                                    : cIndex(tt.getDimSize(a));
    idx[a] = checkedIndex(idx[a], size,
                          {{"kind", "index"}, {"tensor", valueName(op.operands[0])}, {"axis", a}});
  }
  return V::scalar(b_.create<tensor::ExtractOp>(loc_, t, idx));
}

V Importer::blockRead(const ir::Op &op, const V &base, SmallVector<Value> idx) {
  auto tt = cast<RankedTensorType>(base.v.getType());
  int64_t rank = tt.getRank() - 1; // the values' rank: the last axis is in blocks
  int64_t per = blockElems(base.fmt);
  if ((int64_t)idx.size() != rank)
    fail(fmt::format("{}: {} indices into a rank-{} tensor", where_, idx.size(), rank));
  for (int64_t a = 0; a < rank; ++a) {
    Value size = tt.isDynamicDim(a) ? b_.create<tensor::DimOp>(loc_, base.v, a).getResult()
                                    : cIndex(tt.getDimSize(a));
    if (a == rank - 1)
      size = b_.create<arith::MulIOp>(loc_, size, cIndex(per));
    idx[a] = checkedIndex(idx[a], size,
                          {{"kind", "index"}, {"tensor", valueName(op.operands[0])}, {"axis", a}});
  }
  // k is in range (checked), so non-negative: the affine byte positions
  // expand to plain index arithmetic.
  Value k = idx.back();
  SmallVector<Value> at(idx.begin(), idx.end());
  at.back() = b_.create<arith::DivUIOp>(loc_, k, cIndex(per));
  SmallVector<Value> bytes;
  for (AffineExpr e : blockBytes(base.fmt, b_.getAffineDimExpr(0))) {
    SmallVector<Value> ix = at;
    ix.push_back(affine::expandAffineExpr(b_, loc_, e, ValueRange{k}, ValueRange{}));
    bytes.push_back(b_.create<tensor::ExtractOp>(loc_, base.v, ix));
  }
  return V::scalar(dequantize(base.fmt, bytes, k));
}

V Importer::slice(const ir::Op &op, Frame &f) {
  if (V b = get(f, op.operands[0]); !b.fmt.empty())
    fail(fmt::format("{}: slicing a {} tensor is not supported: read its elements (`w[o, i] as f32`)", where_,
                     b.fmt));
  Value t = tensorOf(get(f, op.operands[0]));
  auto tt = cast<RankedTensorType>(t.getType());
  SmallVector<OpFoldResult> offs, sizes, strides;
  int64_t axis = 0;
  auto operandAt = [&](const json &j) -> std::optional<V> {
    if (j.is_null()) return std::nullopt;
    return scalarOf(get(f, op.operands.at(j.get<size_t>())));
  };
  auto fold = [&](const V &v) -> OpFoldResult {
    if (v.c) return b_.getIndexAttr(*v.c);
    return convert(v.v, b_.getIndexType());
  };
  auto full = [&](int64_t a) -> OpFoldResult {
    if (!tt.isDynamicDim(a)) return b_.getIndexAttr(tt.getDimSize(a));
    return b_.create<tensor::DimOp>(loc_, t, a).getResult();
  };
  const json &axes = op.attrs["axes"];
  SmallVector<int64_t> squeezed; // axes an index drops
  int64_t named = 0;
  for (const json &a : axes)
    named += !(a.value("kind", "") == "whole" && a.value("rest", false));
  for (const json &a : axes) {
    std::string kind = a.value("kind", "");
    if (kind == "squeeze") {
      offs.push_back(fold(*operandAt(a["index"])));
      sizes.push_back(b_.getIndexAttr(1));
      strides.push_back(b_.getIndexAttr(1));
      squeezed.push_back(axis);
      ++axis;
    } else if (kind == "range") {
      std::optional<V> s = operandAt(a["start"]), e = operandAt(a["stop"]), st = operandAt(a["step"]);
      // check types a slice only with a constant positive step.
      if (st && (!st->c || *st->c <= 0))
        fail(fmt::format("{}: a slice step must be a positive constant", where_));
      int64_t step = st ? *st->c : 1;
      OpFoldResult start = s ? fold(*s) : OpFoldResult(b_.getIndexAttr(0));
      OpFoldResult stop = e ? fold(*e) : full(axis);
      // ceil((stop - start) / step) elements, as check computes the type.
      OpFoldResult size;
      auto cs = getConstantIntValue(start), ce = getConstantIntValue(stop);
      if (cs && ce) {
        size = b_.getIndexAttr((*ce - *cs + step - 1) / step);
      } else {
        Value len = b_.create<arith::SubIOp>(loc_, getValueOrCreateConstantIndexOp(b_, loc_, stop),
                                             getValueOrCreateConstantIndexOp(b_, loc_, start));
        if (step != 1)
          len = b_.create<arith::DivUIOp>(loc_, b_.create<arith::AddIOp>(loc_, len, cIndex(step - 1)),
                                          cIndex(step));
        size = len;
      }
      offs.push_back(start);
      sizes.push_back(size);
      strides.push_back(b_.getIndexAttr(step));
      ++axis;
    } else {
      int64_t n = a.value("rest", false) ? tt.getRank() - (named - 0) + 0 : 1;
      if (a.value("rest", false))
        n = tt.getRank() - named;
      for (int64_t i = 0; i < n; ++i, ++axis) {
        offs.push_back(b_.getIndexAttr(0));
        sizes.push_back(full(axis));
        strides.push_back(b_.getIndexAttr(1));
      }
    }
  }
  for (; axis < tt.getRank(); ++axis) {
    offs.push_back(b_.getIndexAttr(0));
    sizes.push_back(full(axis));
    strides.push_back(b_.getIndexAttr(1));
  }
  auto resT = cast<RankedTensorType>(type(op.results[0].type, f));
  // A rank-reducing slice whose kept axes include a static 1 is ambiguous
  // (which unit axis was dropped?), and MLIR 19's subview folding crashes
  // on the memref it bufferizes to (`w[::2, 2]` of a 2 x K weight): slice
  // at full rank, then collapse each dropped axis into a kept neighbour.
  bool ambiguous = !squeezed.empty() && resT.getRank() > 0 &&
                   llvm::any_of(resT.getShape(), [](int64_t d) { return d == 1; });
  if (!ambiguous)
    return V::tensor(b_.create<tensor::ExtractSliceOp>(loc_, resT, t, offs, sizes, strides));
  SmallVector<int64_t> fullShape;
  for (int64_t a = 0, k = 0; a < tt.getRank(); ++a) {
    if (llvm::is_contained(squeezed, a))
      fullShape.push_back(1);
    else
      fullShape.push_back(resT.getDimSize(k++));
  }
  auto fullT = RankedTensorType::get(fullShape, resT.getElementType());
  Value whole = b_.create<tensor::ExtractSliceOp>(loc_, fullT, t, offs, sizes, strides);
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices leading; // dropped axes before the first kept one
  for (int64_t a = 0; a < tt.getRank(); ++a) {
    if (!llvm::is_contained(squeezed, a)) {
      groups.push_back(leading);
      leading.clear();
      groups.back().push_back(a);
    } else if (groups.empty()) {
      leading.push_back(a);
    } else {
      groups.back().push_back(a);
    }
  }
  return V::tensor(b_.create<tensor::CollapseShapeOp>(loc_, resT, whole, groups));
}

std::vector<DimV> Importer::domains(const json &indices, Frame &f) {
  std::vector<DimV> ds;
  for (const json &i : indices)
    ds.push_back(extent(i["domain"], f));
  return ds;
}

V Importer::comprehension(const ir::Op &op, Frame &f) {
  const json &indices = op.attrs["indices"];
  std::vector<DimV> ds = domains(indices, f);
  SmallVector<Value> dyn;
  auto resT = cast<RankedTensorType>(type(op.results[0].type, f, &dyn));
  int64_t n = ds.size();
  bool scalarElem = resT.getRank() == n;
  if (scalarElem && nest_ == 0)
    if (std::optional<V> r = sliceUpdate(op, f, ds, resT))
      return *r;
  Value init = b_.create<tensor::EmptyOp>(loc_, resT.getShape(), resT.getElementType(), dyn);

  if (scalarElem && nest_ == 0)
    if (std::optional<V> r = relationApply(op, f, ds, resT))
      return *r;
  if (scalarElem && nest_ == 0)
    if (std::optional<V> r = structured(op, f, ds, resT, dyn))
      return *r;
  if (scalarElem && nest_ == 0) {
    // A linalg.generic over the domain; reads stay tensor.extract in the
    // body (index arithmetic such as h * Head + d or ids[s] is arbitrary).
    SmallVector<AffineMap> maps{b_.getMultiDimIdentityMap(n)};
    SmallVector<utils::IteratorType> its(n, utils::IteratorType::parallel);
    auto gen = b_.create<linalg::GenericOp>(loc_, TypeRange{resT}, ValueRange{}, ValueRange{init},
                                            maps, its);
    OpBuilder::InsertionGuard g(b_);
    Block *blk = b_.createBlock(&gen.getRegion(), {}, {resT.getElementType()}, {loc_});
    b_.setInsertionPointToStart(blk);
    std::vector<V> args;
    for (int64_t i = 0; i < n; ++i)
      args.push_back(V::scalar(b_.create<linalg::IndexOp>(loc_, i)));
    ++nest_;
    std::vector<V> ys = region(op.regions[0], f, args);
    --nest_;
    b_.create<linalg::YieldOp>(loc_, convert(scalarOf(ys.at(0)).v, resT.getElementType()));
    return V::tensor(gen.getResult(0));
  }

  // Otherwise a loop nest that inserts each element (a scalar, or a
  // tensor element such as one attention head's context vector).
  std::optional<SplitFold> split;
  if (nest_ == 0)
    split = splitFold(op, f, ds);
  // Lanes: consecutive elements of the last axis folding the same keys in
  // one pass (grouped-query attention's heads of one KV head).
  std::optional<FoldLanes> lanes;
  if (nest_ == 0 && !split)
    lanes = foldLanes(op, f, ds);
  std::vector<Value> ivs;
  // Element `y` into `acc` at `at`.
  auto insert = [&](const V &y, ArrayRef<Value> at, Value acc) -> Value {
    if (scalarElem)
      return b_.create<tensor::InsertOp>(loc_, convert(scalarOf(y).v, resT.getElementType()), acc, at);
    Value e = tensorOf(y);
    auto et = cast<RankedTensorType>(e.getType());
    SmallVector<OpFoldResult> offs, sizes, strides;
    for (Value iv : at) {
      offs.push_back(iv);
      sizes.push_back(b_.getIndexAttr(1));
      strides.push_back(b_.getIndexAttr(1));
    }
    for (int64_t a = 0; a < et.getRank(); ++a) {
      offs.push_back(b_.getIndexAttr(0));
      sizes.push_back(et.isDynamicDim(a) ? OpFoldResult(b_.create<tensor::DimOp>(loc_, e, a).getResult())
                                         : OpFoldResult(b_.getIndexAttr(et.getDimSize(a))));
      strides.push_back(b_.getIndexAttr(1));
    }
    return b_.create<tensor::InsertSliceOp>(loc_, e, acc, offs, sizes, strides);
  };
  // The lanes h0 .. h0 + G - 1 of the last axis: each lane's body up to
  // the reduction in its own frame, the reductions in one pass, then each
  // lane's rest of the body and its element.
  auto laneElements = [&](Value acc) -> Value {
    const ir::Region &body = op.regions[0];
    const int64_t g = lanes->lanes;
    Value h0 = ivs.back();
    Value quotient = b_.create<arith::DivUIOp>(loc_, h0, cIndex(g));
    std::vector<Frame> frames(g, f);
    std::vector<std::vector<Value>> at(g, ivs);
    for (int64_t r = 0; r < g; ++r) {
      if (r > 0)
        at[r].back() = b_.create<arith::AddIOp>(loc_, h0, cIndex(r));
      laneQuotient_[at[r].back()] = {quotient, g};
      std::vector<V> args;
      for (Value iv : at[r])
        args.push_back(V::scalar(iv));
      region(body, frames[r], args, lanes->op);
    }
    std::vector<std::vector<V>> folded;
    {
      Location saved = loc_;
      if (std::optional<Location> l = sourceLoc(lanes->op->loc))
        loc_ = *l;
      folded = reduceLanes(*lanes->op, frames);
      loc_ = saved;
    }
    for (int64_t r = 0; r < g; ++r) {
      for (size_t k = 0; k < lanes->op->results.size() && k < folded[r].size(); ++k) {
        V v = folded[r][k];
        if (v.k == V::Scalar || v.k == V::Tensor)
          v.uns = isUnsigned(lanes->op->results[k].type, frames[r]);
        frames[r].env[lanes->op->results[k].id] = v;
      }
      std::optional<V> y;
      for (auto it = std::next(body.ops.begin(), lanes->op - body.ops.data() + 1); it != body.ops.end(); ++it) {
        if (it->kind == ir::kind::Yield || it->kind == ir::kind::Return) {
          y = get(frames[r], it->operands.at(0));
          break;
        }
        bindOrEvaluate(*it, frames[r]);
      }
      if (!y)
        fail(fmt::format("{}: a comprehension's body yields nothing", where_));
      acc = insert(*y, at[r], acc);
    }
    for (const std::vector<Value> &a : at)
      laneQuotient_.erase(a.back());
    return acc;
  };
  std::function<Value(int64_t, Value)> nestLoops = [&](int64_t i, Value acc) -> Value {
    if (i == n && lanes)
      return laneElements(acc);
    if (i == n) {
      std::vector<V> args;
      for (Value iv : ivs)
        args.push_back(V::scalar(iv));
      if (split)
        preset_[split->op] = combineChunks(*split, ivs);
      std::vector<V> ys = region(op.regions[0], f, args);
      if (split)
        preset_.erase(split->op);
      return insert(ys.at(0), ivs, acc);
    }
    Value step = cIndex(lanes && i == n - 1 ? lanes->lanes : 1);
    auto loop = b_.create<scf::ForOp>(loc_, cIndex(0), dimValue(ds[i]), step, ValueRange{acc});
    // A comprehension's elements are independent by the language's rule:
    // a target may run the iterations in parallel (the CUDA target's
    // threads), each inserting its own element.
    loop->setAttr("linnet.elements", b_.getUnitAttr());
    OpBuilder::InsertionGuard g(b_);
    b_.setInsertionPointToStart(loop.getBody());
    ivs.push_back(loop.getInductionVar());
    ++nest_;
    Value r = nestLoops(i + 1, loop.getRegionIterArgs()[0]);
    --nest_;
    ivs.pop_back();
    b_.create<scf::YieldOp>(loc_, r);
    return loop.getResult(0);
  };
  return V::tensor(nestLoops(0, init));
}

std::optional<V> Importer::sliceUpdate(const ir::Op &op, Frame &f, const std::vector<DimV> &ds,
                                       RankedTensorType resT) {
  const ir::Region &body = op.regions[0];
  int64_t n = ds.size();
  if (body.ops.size() < 2 || (int64_t)body.args.size() != n)
    return std::nullopt;
  const ir::Op &yield = body.ops.back(), &ifo = body.ops[body.ops.size() - 2];
  if (yield.kind != ir::kind::Yield || ifo.kind != ir::kind::If || yield.operands.size() != 1 ||
      ifo.results.size() != 1 || yield.operands[0] != ifo.results[0].id ||
      ifo.regions.size() != 2)
    return std::nullopt;
  std::map<ir::ValueId, int64_t> argAxis;
  for (int64_t i = 0; i < n; ++i)
    argAxis[body.args[i].id] = i;
  std::map<ir::ValueId, const ir::Op *> def;
  for (size_t i = 0; i + 2 < body.ops.size(); ++i)
    for (const ir::Value &r : body.ops[i].results)
      def[r.id] = &body.ops[i];
  // The condition: a conjunction (an `and` tree) of `ge(i, A)` and
  // `lt(i, B)` on the comprehension's indices, each index bounded below
  // and above at most once: the box [A, B) on the axes it names, the whole
  // extent on the others (a cache slot `c` and its positions `p`).
  std::vector<const ir::Op *> geOf(n, nullptr), ltOf(n, nullptr);
  llvm::SmallPtrSet<const ir::Op *, 8> cond;
  std::function<bool(ir::ValueId)> conjunct = [&](ir::ValueId c) {
    auto d = def.find(c);
    if (d == def.end())
      return false;
    const ir::Op *o = d->second;
    cond.insert(o);
    if (o->kind == ir::kind::Arith && o->attrs.value("op", "") == "and" && o->operands.size() == 2)
      return conjunct(o->operands[0]) && conjunct(o->operands[1]);
    if (o->kind != ir::kind::Cmp || o->operands.size() != 2 || !argAxis.count(o->operands[0]))
      return false;
    std::string pred = o->attrs.value("pred", "");
    const ir::Op *&slot = pred == "ge" ? geOf[argAxis[o->operands[0]]]
                          : pred == "lt" ? ltOf[argAxis[o->operands[0]]]
                                         : geOf[0];
    if ((pred != "ge" && pred != "lt") || (slot && slot != o))
      return false;
    slot = o;
    return true;
  };
  if (!conjunct(ifo.operands[0]))
    return std::nullopt;
  bool bounded = false;
  for (int64_t a = 0; a < n; ++a)
    bounded = bounded || geOf[a] || ltOf[a];
  if (!bounded)
    return std::nullopt;
  // Every other op before the `if` is independent of the indices.
  for (size_t i = 0; i + 2 < body.ops.size(); ++i) {
    const ir::Op &o = body.ops[i];
    if (cond.contains(&o))
      continue;
    if (!o.regions.empty())
      return std::nullopt;
    for (ir::ValueId id : o.operands)
      if (argAxis.count(id) || (def.count(id) && cond.contains(def[id])))
        return std::nullopt;
  }
  for (int64_t a = 0; a < n; ++a)
    for (const ir::Op *c : {geOf[a], ltOf[a]})
      if (c && argAxis.count(c->operands[1]))
        return std::nullopt;
  // The else branch: tensor-naming ops, then X[indices in order].
  const ir::Region &els = ifo.regions[1];
  if (els.ops.empty() || els.ops.back().kind != ir::kind::Yield ||
      els.ops.back().operands.size() != 1 || els.ops.size() < 2)
    return std::nullopt;
  const ir::Op &read = els.ops[els.ops.size() - 2];
  if (read.kind != ir::kind::Index || els.ops.back().operands[0] != read.results[0].id ||
      (int64_t)read.operands.size() != n + 1)
    return std::nullopt;
  for (int64_t i = 0; i < n; ++i)
    if (read.operands[i + 1] != body.args[i].id)
      return std::nullopt;
  for (size_t i = 0; i + 2 < els.ops.size(); ++i)
    if (!namesTensor(els.ops[i]))
      return std::nullopt;
  // Evaluate: the index-independent ops, the tensor X, the bounds.
  for (size_t i = 0; i + 2 < body.ops.size(); ++i)
    if (!cond.contains(&body.ops[i])) {
      std::vector<V> rs = operation(body.ops[i], f);
      for (size_t k = 0; k < body.ops[i].results.size() && k < rs.size(); ++k)
        f.env[body.ops[i].results[k].id] = rs[k];
    }
  V base;
  for (size_t i = 0; i + 1 < els.ops.size(); ++i) {
    if (i + 2 == els.ops.size()) {
      base = get(f, read.operands[0]);
      break;
    }
    std::vector<V> rs = operation(els.ops[i], f);
    for (size_t k = 0; k < els.ops[i].results.size() && k < rs.size(); ++k)
      f.env[els.ops[i].results[k].id] = rs[k];
  }
  if (base.k != V::Tensor || base.v.getType() != resT)
    return std::nullopt; // the emitted ops above are dead and fold away
  // Each bounded axis: [lo, hi) clamped to the extent (an empty box when
  // hi <= lo), in the order the language evaluates the bounds.
  Type idx = b_.getIndexType();
  Value zero = cIndex(0);
  SmallVector<Value> lo(n), len(n);
  for (int64_t a = 0; a < n; ++a) {
    if (!geOf[a] && !ltOf[a])
      continue;
    Value full = dimValue(ds[a]);
    Value l = geOf[a] ? convert(scalarOf(get(f, geOf[a]->operands[1])).v, idx) : zero;
    Value h = ltOf[a] ? convert(scalarOf(get(f, ltOf[a]->operands[1])).v, idx) : full;
    l = b_.create<arith::MaxSIOp>(loc_, b_.create<arith::MinSIOp>(loc_, l, full), zero);
    h = b_.create<arith::MaxSIOp>(loc_, b_.create<arith::MinSIOp>(loc_, h, full), l);
    lo[a] = l;
    len[a] = b_.create<arith::SubIOp>(loc_, h, l);
  }
  // The slab: the then branch over the box, index i = lo + i'.
  SmallVector<int64_t> shape(resT.getShape());
  for (int64_t a = 0; a < n; ++a)
    if (lo[a])
      shape[a] = ShapedType::kDynamic;
  auto slabT = RankedTensorType::get(shape, resT.getElementType());
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < n; ++i)
    if (lo[i])
      dyn.push_back(len[i]);
    else if (resT.isDynamicDim(i))
      dyn.push_back(dimValue(ds[i]));
  Value init = b_.create<tensor::EmptyOp>(loc_, shape, resT.getElementType(), dyn);
  SmallVector<AffineMap> maps{b_.getMultiDimIdentityMap(n)};
  SmallVector<utils::IteratorType> its(n, utils::IteratorType::parallel);
  auto gen = b_.create<linalg::GenericOp>(loc_, TypeRange{slabT}, ValueRange{}, ValueRange{init},
                                          maps, its);
  {
    OpBuilder::InsertionGuard g(b_);
    Block *blk = b_.createBlock(&gen.getRegion(), {}, {resT.getElementType()}, {loc_});
    b_.setInsertionPointToStart(blk);
    for (int64_t i = 0; i < n; ++i) {
      Value iv = b_.create<linalg::IndexOp>(loc_, i);
      if (lo[i])
        iv = b_.create<arith::AddIOp>(loc_, lo[i], iv);
      f.env[body.args[i].id] = V::scalar(iv);
    }
    ++nest_;
    std::vector<V> ys = region(ifo.regions[0], f, {});
    --nest_;
    b_.create<linalg::YieldOp>(loc_, convert(scalarOf(ys.at(0)).v, resT.getElementType()));
  }
  SmallVector<OpFoldResult> offs, sizes, strides;
  for (int64_t i = 0; i < n; ++i) {
    offs.push_back(lo[i] ? OpFoldResult(lo[i]) : OpFoldResult(b_.getIndexAttr(0)));
    sizes.push_back(lo[i] ? OpFoldResult(len[i])
                    : resT.isDynamicDim(i) ? OpFoldResult(dimValue(ds[i]))
                                           : OpFoldResult(b_.getIndexAttr(resT.getDimSize(i))));
    strides.push_back(b_.getIndexAttr(1));
  }
  return V::tensor(
      b_.create<tensor::InsertSliceOp>(loc_, gen.getResult(0), base.v, offs, sizes, strides));
}

bool Importer::namesTensor(const ir::Op &op) {
  return op.kind == ir::kind::Member || op.kind == ir::kind::StateRead ||
         op.kind == ir::kind::Sub || op.kind == ir::kind::Self;
}

void Importer::nameTensorsAhead(const ir::Region &r, Frame &f,
                                std::unordered_map<ir::ValueId, V> &local) {
  std::unordered_map<ir::ValueId, const ir::Op *> consts;
  for (const ir::Op &o : r.ops)
    if (o.kind == ir::kind::Const && o.results.size() == 1)
      consts[o.results[0].id] = &o;
  auto define = [&](const ir::Op &o) {
    std::vector<V> rs = operation(o, f);
    if (!rs.empty()) {
      local[o.results[0].id] = rs[0];
      f.env[o.results[0].id] = rs[0];
    }
  };
  for (const ir::Op &o : r.ops) {
    bool pick = o.kind == ir::kind::Index && !o.operands.empty() && f.env.count(o.operands[0]) &&
                f.env[o.operands[0]].k == V::Blocks;
    if (!namesTensor(o) && !pick)
      continue;
    for (ir::ValueId id : o.operands)
      if (!f.env.count(id))
        if (auto c = consts.find(id); c != consts.end())
          define(*c->second);
    if (llvm::all_of(o.operands, [&](ir::ValueId id) { return f.env.count(id) != 0; }))
      define(o);
  }
}

const DimV &Importer::loopSize(unsigned pos, const std::vector<DimV> &ds,
                               const std::vector<DimV> &rds) {
  return pos < ds.size() ? ds[pos] : rds[pos - ds.size()];
}

bool Importer::sameSize(const DimV &d, Value t, int64_t k) {
  auto tt = cast<RankedTensorType>(t.getType());
  if (!tt.isDynamicDim(k))
    return d.c && *d.c == tt.getDimSize(k);
  if (d.c || !d.v)
    return false;
  auto dimOp = d.v.getDefiningOp<tensor::DimOp>();
  if (!dimOp || dimOp.getSource() != t)
    return false;
  std::optional<int64_t> idx = dimOp.getConstantIndex();
  return idx && *idx == k;
}

std::optional<V> Importer::structured(const ir::Op &op, Frame &f, const std::vector<DimV> &ds,
                                      RankedTensorType resT, ArrayRef<Value> dyn) {
  const ir::Region &body = op.regions[0];
  int64_t n = ds.size();
  std::map<ir::ValueId, int64_t> loopDim;
  for (int64_t i = 0; i < n; ++i)
    loopDim[body.args[i].id] = i;
  // A contraction: the body is exactly `reduce(builtin) ; yield` over
  // dense indices without a filter.
  const ir::Region *inner = &body;
  const ir::Op *red = nullptr;
  std::string redName;
  std::vector<DimV> rds;
  if (body.ops.size() == 2 && body.ops[0].kind == ir::kind::Reduce &&
      body.ops[1].operands.size() == 1 && body.ops[1].operands[0] == body.ops[0].results[0].id) {
    red = &body.ops[0];
    const json &spec = red->attrs["reducer"];
    if (!spec.is_string() || red->attrs.value("filter", false))
      return std::nullopt;
    redName = spec.get<std::string>();
    const ir::BuiltinReducer *br = ir::findBuiltinReducer(redName);
    if (br && br->dividesByCount)
      return std::nullopt;
    // Unsigned max/min: the general path says it is not supported.
    if (isUnsigned(red->results[0].type, f) && signedOnly(br))
      return std::nullopt;
    for (const json &ix : red->attrs["indices"])
      if (!ix.contains("domain"))
        return std::nullopt;
    rds = domains(red->attrs["indices"], f);
    inner = &red->regions[0];
    for (size_t i = 0; i < inner->args.size(); ++i)
      loopDim[inner->args[i].id] = n + i;
  }
  for (const ir::Op &o : inner->ops)
    if (!o.regions.empty())
      return std::nullopt;
  // Evaluate tensor-naming ops ahead; collect the reads at loop indices.
  std::unordered_map<ir::ValueId, V> local;
  nameTensorsAhead(*inner, f, local);
  int64_t nloops = n + (int64_t)rds.size();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  std::vector<const ir::Op *> reads;
  // Per read: its first input, and for a block tensor its format and the
  // loop of its last index (one input per byte blockBytes names).
  struct ReadIn {
    unsigned first;
    std::string fmt;
    unsigned kLoop;
  };
  std::vector<ReadIn> readIns;
  for (const ir::Op &o : inner->ops) {
    if (o.kind != ir::kind::Index)
      continue;
    ir::ValueId baseId = o.operands[0];
    V base = local.count(baseId) ? local[baseId] : (f.env.count(baseId) ? f.env[baseId] : V());
    if (base.k != V::Tensor)
      continue;
    SmallVector<AffineExpr> exprs;
    bool plain = true;
    for (size_t k = 1; k < o.operands.size() && plain; ++k) {
      auto it = loopDim.find(o.operands[k]);
      plain = it != loopDim.end();
      if (plain)
        exprs.push_back(b_.getAffineDimExpr(it->second));
    }
    if (!base.fmt.empty()) {
      // The blocks are read whole: every axis's loop spans it (the last
      // axis's values in whole blocks), else element by element.
      auto bt = cast<RankedTensorType>(base.v.getType());
      if (!plain || (int64_t)exprs.size() != bt.getRank() - 1)
        continue;
      bool same = true;
      int64_t r = bt.getRank() - 1;
      for (int64_t k = 0; k < r && same; ++k) {
        const DimV &d = loopSize(llvm::cast<AffineDimExpr>(exprs[k]).getPosition(), ds, rds);
        same = k + 1 < r ? sameSize(d, base.v, k)
                         : d.c && !bt.isDynamicDim(k) && *d.c == bt.getDimSize(k) * blockElems(base.fmt);
      }
      if (!same)
        continue;
      AffineExpr kx = exprs.back();
      SmallVector<AffineExpr> lead(exprs.begin(), exprs.end() - 1);
      lead.push_back(kx.floorDiv(blockElems(base.fmt)));
      readIns.push_back({(unsigned)inputs.size(), base.fmt, llvm::cast<AffineDimExpr>(kx).getPosition()});
      for (AffineExpr byte : blockBytes(base.fmt, kx)) {
        SmallVector<AffineExpr> e = lead;
        e.push_back(byte);
        inputs.push_back(base.v);
        maps.push_back(AffineMap::get(nloops, 0, e, &ctx_));
      }
      reads.push_back(&o);
      continue;
    }
    if (!plain || (int64_t)exprs.size() != cast<RankedTensorType>(base.v.getType()).getRank())
      continue;
    // linalg sizes its loops from its operands, so an input larger than
    // the loop's domain (learned positions wpe[s, e] with s: S <= MaxPos)
    // is cut to the domain: read through a slice [0, domain) per axis.
    Value in = base.v;
    auto inT = cast<RankedTensorType>(in.getType());
    bool cut = false, tooSmall = false;
    SmallVector<OpFoldResult> offs, sizes, strides;
    for (int64_t k = 0; k < inT.getRank(); ++k) {
      const DimV &d = loopSize(llvm::cast<AffineDimExpr>(exprs[k]).getPosition(), ds, rds);
      offs.push_back(b_.getIndexAttr(0));
      strides.push_back(b_.getIndexAttr(1));
      sizes.push_back(d.c ? OpFoldResult(b_.getIndexAttr(*d.c)) : OpFoldResult(d.v));
      if (sameSize(d, in, k))
        continue;
      if (d.c && !inT.isDynamicDim(k) && *d.c > inT.getDimSize(k))
        tooSmall = true;
      cut = true;
    }
    if (tooSmall)
      continue; // read element by element (and bounds-checked) instead
    if (cut)
      in = b_.create<tensor::ExtractSliceOp>(loc_, in, offs, sizes, strides);
    readIns.push_back({(unsigned)inputs.size(), "", 0});
    inputs.push_back(in);
    maps.push_back(AffineMap::get(nloops, 0, exprs, &ctx_));
    reads.push_back(&o);
  }
  if (!red && reads.empty())
    return std::nullopt;
  // linalg sizes a loop from an operand that it indexes: a reduction
  // dimension that no read covers (`sum(k: S) 1.0`) leaves the loop
  // unsized, so such a reduction runs as an explicit loop instead.
  for (int64_t d = n; d < nloops; ++d)
    if (llvm::none_of(maps, [&](AffineMap m) { return m.isFunctionOfDim(d); }))
      return std::nullopt;
  Type et = resT.getElementType();
  // A half sum accumulates in an f32 tensor, rounded to et after.
  Type at = et;
  if (red)
    if (const ir::BuiltinReducer *br = ir::findBuiltinReducer(redName))
      at = accumulatorType(onBool(*br, et), et);
  auto accT = RankedTensorType::get(resT.getShape(), at);
  Value init = b_.create<tensor::EmptyOp>(loc_, resT.getShape(), at, dyn);
  Reducer r;
  if (red) {
    r = builtinReducer(redName, et);
    init = b_.create<linalg::FillOp>(loc_, r.identity().v, init).getResult(0);
  }
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < n; ++i)
    outExprs.push_back(b_.getAffineDimExpr(i));
  maps.push_back(AffineMap::get(nloops, 0, outExprs, &ctx_));
  // linalg sizes each loop from an operand that indexes it directly: a
  // loop that only a block read's `k / 32` (or `/ 256`) indexes is not sized.
  if (!inversePermutation(concatAffineMaps(maps)))
    return std::nullopt;
  SmallVector<utils::IteratorType> its(n, utils::IteratorType::parallel);
  its.append(rds.size(), utils::IteratorType::reduction);
  auto gen = b_.create<linalg::GenericOp>(loc_, TypeRange{accT}, inputs, ValueRange{init}, maps, its);
  OpBuilder::InsertionGuard g(b_);
  Block *blk = genericBody(gen, inputs, at);
  for (size_t i = 0; i < reads.size(); ++i) {
    const ReadIn &r = readIns[i];
    if (r.fmt.empty()) {
      preset_[reads[i]] = V::scalar(blk->getArgument(r.first));
      continue;
    }
    Value k = b_.create<linalg::IndexOp>(loc_, r.kLoop);
    SmallVector<Value> bytes;
    for (size_t j = 0, e = blockBytes(r.fmt, b_.getAffineDimExpr(0)).size(); j < e; ++j)
      bytes.push_back(blk->getArgument(r.first + j));
    preset_[reads[i]] = V::scalar(dequantize(r.fmt, bytes, k));
  }
  std::vector<V> args;
  for (int64_t i = 0; i < n; ++i)
    args.push_back(V::scalar(b_.create<linalg::IndexOp>(loc_, i)));
  ++nest_;
  Value y;
  if (red) {
    std::vector<V> rargs;
    for (size_t i = 0; i < rds.size(); ++i)
      rargs.push_back(V::scalar(b_.create<linalg::IndexOp>(loc_, n + i)));
    for (int64_t i = 0; i < n; ++i)
      f.env[body.args[i].id] = args[i];
    std::vector<V> msg = region(*inner, f, rargs);
    y = r.combine(V::scalar(blk->getArgument(inputs.size())), r.lift(msg)).v;
  } else {
    y = scalarOf(region(body, f, args).at(0)).v;
  }
  --nest_;
  for (const ir::Op *o : reads)
    preset_.erase(o);
  b_.create<linalg::YieldOp>(loc_, convert(y, at));
  b_.setInsertionPointAfter(gen);
  if (at == et)
    return V::tensor(gen.getResult(0));
  // Round the accumulators once.
  SmallVector<AffineMap> idm(2, b_.getMultiDimIdentityMap(n));
  auto round = b_.create<linalg::GenericOp>(
      loc_, TypeRange{resT}, ValueRange{gen.getResult(0)},
      ValueRange{b_.create<tensor::EmptyOp>(loc_, resT.getShape(), et, dyn)}, idm,
      SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel));
  Block *rb = b_.createBlock(&round.getRegion(), {}, {at, et}, {loc_, loc_});
  b_.setInsertionPointToStart(rb);
  b_.create<linalg::YieldOp>(loc_, convert(rb->getArgument(0), et));
  return V::tensor(round.getResult(0));
}

} // namespace linnet::import::detail

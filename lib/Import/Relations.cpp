//===- Relations.cpp - Relation reductions as gf.apply --------------------===//
//
// A reduction over a relation's rows (`[dst] sum(src, edge: g[dst]) ...`) as
// gf.relation + gf.apply with a gf.reducer symbol, reads by role (src, edge,
// dst) and a feature axis as tensor rows; docs/importer.md, "Relation
// reductions". Anything gf.apply cannot express stays row loops
// (Reductions.cpp).
//
//===----------------------------------------------------------------------===//
#include "ImporterImpl.h"

#include "linnet/Dialect/Gf/IR/Gf.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace linnet::import::detail {

FlatSymbolRefAttr Importer::gfReducer(const ir::BuiltinReducer &reducer, Type t) {
  Type et = getElementTypeOrSelf(t);
  const ir::BuiltinReducer &br = onBool(reducer, et);
  std::string sym;
  llvm::raw_string_ostream os(sym);
  os << br.name << "_" << et;
  if (auto tt = dyn_cast<RankedTensorType>(t))
    os << "x" << tt.getDimSize(0);
  auto module = b_.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
  if (module.lookupSymbol(sym))
    return FlatSymbolRefAttr::get(&ctx_, sym);
  OpBuilder mb(&ctx_);
  mb.setInsertionPointToStart(module.getBody());
  if (br.dividesByCount)
    return gfMeanReducer(mb, sym, t);
  ArrayAttr types = mb.getArrayAttr({TypeAttr::get(t)});
  auto red = mb.create<gf::ReducerOp>(loc_, sym, types, types, types, /*associative=*/true,
                                      /*commutative=*/true, "algebraic");
  auto blockOf = [&](Region &r, unsigned nargs) {
    Block *blk = mb.createBlock(&r, {}, SmallVector<Type>(nargs, t),
                                SmallVector<Location>(nargs, loc_));
    mb.setInsertionPointToStart(blk);
    return blk;
  };
  TypedAttr id;
  bool zero = br.identity == ir::ReduceIdentity::Zero || br.identity == ir::ReduceIdentity::False;
  bool one = br.identity == ir::ReduceIdentity::One || br.identity == ir::ReduceIdentity::True;
  bool lowest = br.identity == ir::ReduceIdentity::Lowest;
  if (auto ft = dyn_cast<FloatType>(et)) {
    const auto &sem = ft.getFloatSemantics();
    APFloat v = zero  ? APFloat::getZero(sem)
                : one ? APFloat::getOne(sem)
                      : APFloat::getInf(sem, /*Negative=*/lowest);
    id = mb.getFloatAttr(et, v);
  } else {
    unsigned w = et.getIntOrFloatBitWidth();
    APInt v = zero     ? APInt(w, 0)
              : one    ? APInt(w, 1)
              : lowest ? APInt::getSignedMinValue(w)
                       : APInt::getSignedMaxValue(w);
    id = mb.getIntegerAttr(et, v);
  }
  if (auto tt = dyn_cast<RankedTensorType>(t))
    id = DenseElementsAttr::get(tt, id);
  blockOf(red.getIdentity(), 0);
  mb.create<gf::ReducerYieldOp>(loc_, ValueRange{mb.create<arith::ConstantOp>(loc_, t, id)});
  Block *lift = blockOf(red.getLift(), 1);
  mb.create<gf::ReducerYieldOp>(loc_, ValueRange{lift->getArgument(0)});
  Block *comb = blockOf(red.getCombine(), 2);
  Value a = comb->getArgument(0), c = comb->getArgument(1), r;
  // Sums and products may be reassociated (and fused with the message's
  // multiply): the order of a row's edges is not part of the result.
  auto fm = reassoc();
  bool fl = isa<FloatType>(et);
  switch (br.combine) {
  case ir::ReduceCombine::Add:
    r = fl ? mb.create<arith::AddFOp>(loc_, a, c, fm).getResult()
           : mb.create<arith::AddIOp>(loc_, a, c).getResult();
    break;
  case ir::ReduceCombine::Mul:
    r = fl ? mb.create<arith::MulFOp>(loc_, a, c, fm).getResult()
           : mb.create<arith::MulIOp>(loc_, a, c).getResult();
    break;
  case ir::ReduceCombine::Max:
    r = fl ? mb.create<arith::MaximumFOp>(loc_, a, c).getResult()
           : mb.create<arith::MaxSIOp>(loc_, a, c).getResult();
    break;
  case ir::ReduceCombine::Min:
    r = fl ? mb.create<arith::MinimumFOp>(loc_, a, c).getResult()
           : mb.create<arith::MinSIOp>(loc_, a, c).getResult();
    break;
  case ir::ReduceCombine::Or:
    r = mb.create<arith::OrIOp>(loc_, a, c).getResult();
    break;
  case ir::ReduceCombine::And:
    r = mb.create<arith::AndIOp>(loc_, a, c).getResult();
    break;
  }
  mb.create<gf::ReducerYieldOp>(loc_, ValueRange{r});
  Block *fin = blockOf(red.getFinalize(), 1);
  mb.create<gf::ReducerYieldOp>(loc_, ValueRange{fin->getArgument(0)});
  return FlatSymbolRefAttr::get(&ctx_, sym);
}

FlatSymbolRefAttr Importer::gfMeanReducer(OpBuilder &mb, const std::string &sym, Type t) {
  // `mean`: the state is (sum, count), the count a scalar of the element
  // type; the result sum / count, 0 for a row without edges (§8.2, as
  // PyG's mean aggregation).
  auto et = cast<FloatType>(getElementTypeOrSelf(t));
  auto red = mb.create<gf::ReducerOp>(loc_, sym, mb.getArrayAttr({TypeAttr::get(t)}),
                                      mb.getArrayAttr({TypeAttr::get(t), TypeAttr::get(et)}),
                                      mb.getArrayAttr({TypeAttr::get(t)}), /*associative=*/true,
                                      /*commutative=*/true, "algebraic");
  auto blockOf = [&](Region &r, ArrayRef<Type> types) {
    Block *blk = mb.createBlock(&r, {}, types, SmallVector<Location>(types.size(), loc_));
    mb.setInsertionPointToStart(blk);
    return blk;
  };
  auto constant = [&](Type type, double v) -> Value {
    TypedAttr a = mb.getFloatAttr(et, v);
    if (auto tt = dyn_cast<RankedTensorType>(type))
      a = DenseElementsAttr::get(tt, a);
    return mb.create<arith::ConstantOp>(loc_, type, a);
  };
  blockOf(red.getIdentity(), {});
  mb.create<gf::ReducerYieldOp>(loc_, ValueRange{constant(t, 0.0), constant(et, 0.0)});
  Block *lift = blockOf(red.getLift(), {t});
  mb.create<gf::ReducerYieldOp>(loc_, ValueRange{lift->getArgument(0), constant(et, 1.0)});
  Block *comb = blockOf(red.getCombine(), {t, et, t, et});
  auto fm = reassoc();
  Value sum = mb.create<arith::AddFOp>(loc_, comb->getArgument(0), comb->getArgument(2), fm);
  Value count = mb.create<arith::AddFOp>(loc_, comb->getArgument(1), comb->getArgument(3));
  mb.create<gf::ReducerYieldOp>(loc_, ValueRange{sum, count});
  Block *fin = blockOf(red.getFinalize(), {t, et});
  Value n = fin->getArgument(1);
  if (auto tt = dyn_cast<RankedTensorType>(t))
    n = mb.create<tensor::SplatOp>(loc_, tt, n);
  Value quotient = mb.create<arith::DivFOp>(loc_, fin->getArgument(0), n);
  Value empty = mb.create<arith::CmpFOp>(loc_, arith::CmpFPredicate::OEQ, fin->getArgument(1), constant(et, 0.0));
  mb.create<gf::ReducerYieldOp>(loc_, ValueRange{mb.create<arith::SelectOp>(loc_, empty, constant(t, 0.0), quotient)});
  return FlatSymbolRefAttr::get(&ctx_, sym);
}

std::optional<V> Importer::relationApply(const ir::Op &op, Frame &f, const std::vector<DimV> &ds,
                                         RankedTensorType resT) {
  const ir::Region &body = op.regions[0];
  int64_t n = ds.size();
  if ((n != 1 && n != 2) || body.args.size() != (size_t)n || body.ops.size() != 2 ||
      body.ops[0].kind != ir::kind::Reduce || body.ops[1].operands.size() != 1 ||
      body.ops[1].operands[0] != body.ops[0].results[0].id)
    return std::nullopt;
  const ir::Op &red = body.ops[0];
  const json &spec = red.attrs["reducer"];
  const json &indices = red.attrs["indices"];
  if (indices.size() != 1 || !indices[0].contains("relation") || !spec.is_string() ||
      red.attrs.value("filter", false) || red.regions.empty())
    return std::nullopt;
  const ir::BuiltinReducer *br = ir::findBuiltinReducer(spec.get<std::string>());
  if (!br || br->combine == ir::ReduceCombine::Or || br->combine == ir::ReduceCombine::And)
    return std::nullopt;
  Type et = resT.getElementType();
  if (br->dividesByCount && !isa<FloatType>(et))
    return std::nullopt;
  if (!isa<FloatType, IntegerType>(et) || accumulatorType(*br, et) != et)
    return std::nullopt; // a half sum accumulates in f32: the loop form
  if (red.operands.at(indices[0]["target"].get<size_t>()) != body.args[0].id)
    return std::nullopt;
  V rel = get(f, red.operands.at(indices[0]["relation"].get<size_t>()));
  if (rel.k != V::Rel)
    return std::nullopt;
  const DimV &m = ds[0];
  if (!((m.c && rel.numDst.c && *m.c == *rel.numDst.c) || (!m.c && !rel.numDst.c && m.v == rel.numDst.v)))
    return std::nullopt;
  int64_t F = 0;
  if (n == 2) {
    if (!ds[1].c)
      return std::nullopt;
    F = *ds[1].c;
  }
  const ir::Region &inner = red.regions[0];
  if (inner.args.empty() || inner.args.size() > 2)
    return std::nullopt;
  ir::ValueId srcId = inner.args[0].id, dstId = body.args[0].id;
  std::optional<ir::ValueId> edgeId, featId;
  if (inner.args.size() > 1)
    edgeId = inner.args[1].id;
  if (n == 2)
    featId = body.args[1].id;
  auto isCoord = [&](ir::ValueId id) {
    return id == srcId || id == dstId || id == edgeId || id == featId;
  };
  for (const ir::Op &o : inner.ops)
    if (!o.regions.empty())
      return std::nullopt;
  std::unordered_map<ir::ValueId, V> local;
  nameTensorsAhead(inner, f, local);
  // The inputs: one per (tensor, role).
  struct Input {
    Value t;
    std::string role;
    bool row;
  };
  std::vector<Input> ins;
  std::vector<std::pair<const ir::Op *, size_t>> reads;
  for (const ir::Op &o : inner.ops) {
    if (o.kind != ir::kind::Index) {
      for (ir::ValueId id : o.operands)
        if (isCoord(id))
          return std::nullopt;
      continue;
    }
    ir::ValueId baseId = o.operands[0];
    V base = local.count(baseId) ? local[baseId] : (f.env.count(baseId) ? f.env[baseId] : V());
    if (base.k != V::Tensor || o.operands.size() < 2)
      return std::nullopt;
    auto bt = cast<RankedTensorType>(base.v.getType());
    ir::ValueId i0 = o.operands[1];
    std::string role = i0 == srcId ? "src" : i0 == edgeId ? "edge" : i0 == dstId ? "dst" : "";
    if (role.empty())
      return std::nullopt;
    bool row = o.operands.size() == 3 && featId && o.operands[2] == *featId && bt.getRank() == 2 &&
               bt.getDimSize(1) == F;
    if (!row && (o.operands.size() != 2 || bt.getRank() != 1))
      return std::nullopt;
    size_t k = 0;
    while (k < ins.size() && !(ins[k].t == base.v && ins[k].role == role))
      ++k;
    if (k == ins.size())
      ins.push_back({base.v, role, row});
    else if (ins[k].row != row)
      return std::nullopt;
    reads.push_back({&o, k});
  }
  if (ins.empty())
    return std::nullopt;
  // A source (destination) read covers the relation's num_src (num_dst)
  // entities: a tensor with more rows than that is read through its first
  // ones, exactly what `x[src]` can reach; one with fewer leaves reads
  // that the general path bounds-checks.
  for (Input &in : ins) {
    std::optional<int64_t> need = in.role == "src"   ? rel.numSrc.c
                                  : in.role == "dst" ? rel.numDst.c
                                                     : std::nullopt;
    auto tt = cast<RankedTensorType>(in.t.getType());
    if (!need || tt.isDynamicDim(0) || tt.getDimSize(0) == *need)
      continue;
    if (tt.getDimSize(0) < *need)
      return std::nullopt;
    SmallVector<int64_t> sizes(tt.getShape());
    sizes[0] = *need;
    SmallVector<int64_t> offsets(tt.getRank(), 0), strides(tt.getRank(), 1);
    in.t = b_.create<tensor::ExtractSliceOp>(loc_, RankedTensorType::get(sizes, tt.getElementType()), in.t,
                                             ValueRange{}, ValueRange{}, ValueRange{}, offsets, sizes,
                                             strides);
  }

  Type msgT = n == 2 ? Type(RankedTensorType::get({F}, et)) : et;
  // A relation built in the model is read through its own gf.relation,
  // so the reduction gets the facts its build derives (-gf-build-relations).
  gf::RelationOp relOp;
  if (rel.relation)
    relOp = rel.relation.getDefiningOp<gf::RelationOp>();
  else
    relOp = b_.create<gf::RelationOp>(
      loc_, gf::RelationType::get(&ctx_), ValueRange{rel.rowPtr, rel.colIdx},
      rel.relName.empty() ? "relation" : rel.relName, /*version=*/0,
      rel.numSrc.c ? *rel.numSrc.c : -1, rel.numDst.c ? *rel.numDst.c : -1,
      /*degree_min=*/IntegerAttr(), /*degree_max=*/IntegerAttr(), "materialized", "external",
      "frozen", DenseI64ArrayAttr(), IntegerAttr(), StringAttr(), IntegerAttr(), FloatAttr(),
      IntegerAttr(), IntegerAttr(), false);
  SmallVector<Value> inputs;
  SmallVector<Attribute> roles, names, effects;
  SmallVector<Type> scalarTypes, rowTypes;
  SmallVector<Location> locs;
  for (size_t k = 0; k < ins.size(); ++k) {
    inputs.push_back(ins[k].t);
    roles.push_back(b_.getStringAttr(ins[k].role));
    names.push_back(b_.getStringAttr(fmt::format("{}{}", ins[k].role, k)));
    effects.push_back(b_.getStringAttr("read"));
    Type el = cast<RankedTensorType>(ins[k].t.getType()).getElementType();
    scalarTypes.push_back(el);
    rowTypes.push_back(ins[k].row ? Type(RankedTensorType::get({F}, el)) : el);
    locs.push_back(loc_);
  }
  auto apply = b_.create<gf::ApplyOp>(
      loc_, TypeRange{resT}, relOp.getResult(), inputs, b_.getArrayAttr({}),
      ArrayRef<int64_t>{0}, ArrayRef<int64_t>{(int64_t)inputs.size()},
      SmallVector<int64_t>(inputs.size(), 0), b_.getArrayAttr(effects), /*deterministic=*/false,
      b_.getArrayAttr(roles), b_.getArrayAttr(names), 1);
  Region &rg = apply.getBodies()[0];
  auto giveUp = [&]() -> std::optional<V> {
    apply->dropAllReferences();
    apply->erase();
    if (!rel.relation)
      relOp->erase();
    return std::nullopt;
  };

  // The edge region on scalars, through the ordinary evaluator.
  std::string savedWhere = where_;
  Location savedLoc = loc_;
  {
    OpBuilder::InsertionGuard g(b_);
    Block *blk = b_.createBlock(&rg, {}, scalarTypes, locs);
    for (auto &[o, k] : reads)
      preset_[o] = V::scalar(blk->getArgument(k));
    ++nest_;
    bool ok = true;
    try {
      std::vector<V> msg = region(inner, f, std::vector<V>(inner.args.size()));
      b_.create<gf::YieldOp>(loc_, ValueRange{convert(scalarOf(msg.at(0)).v, et)});
    } catch (const ImportError &) {
      ok = false;
    }
    --nest_;
    where_ = savedWhere;
    loc_ = savedLoc;
    for (auto &[o, k] : reads)
      preset_.erase(o);
    if (!ok)
      return giveUp();
  }
  // With a feature axis: the same ops on tensor<F> rows wherever an
  // operand depends on f (uniform operands are splat).
  if (n == 2) {
    Block *blk = &rg.front();
    auto *wide = new Block();
    rg.push_back(wide);
    IRMapping map;
    DenseSet<Value> varying;
    for (size_t k = 0; k < ins.size(); ++k) {
      Value a = wide->addArgument(rowTypes[k], loc_);
      map.map(blk->getArgument(k), a);
      if (ins[k].row)
        varying.insert(a);
    }
    OpBuilder wb = OpBuilder::atBlockEnd(wide);
    auto widen = [&](Value v) -> Value {
      if (varying.count(v))
        return v;
      return wb.create<tensor::SplatOp>(loc_, RankedTensorType::get({F}, v.getType()), v);
    };
    bool ok = true;
    for (Operation &o : *blk) {
      if (isa<gf::YieldOp>(o)) {
        wb.create<gf::YieldOp>(loc_, ValueRange{widen(map.lookupOrDefault(o.getOperand(0)))});
        break;
      }
      bool any = llvm::any_of(o.getOperands(),
                              [&](Value v) { return varying.count(map.lookupOrDefault(v)) > 0; });
      if (!any) {
        wb.clone(o, map);
        continue;
      }
      if (o.getNumRegions() || o.getNumResults() != 1 ||
          !isa<arith::ArithDialect, math::MathDialect>(o.getDialect())) {
        ok = false;
        break;
      }
      SmallVector<Value> operands;
      for (Value v : o.getOperands())
        operands.push_back(widen(map.lookupOrDefault(v)));
      OperationState st(o.getLoc(), o.getName());
      st.addOperands(operands);
      st.addTypes(RankedTensorType::get({F}, o.getResult(0).getType()));
      st.addAttributes(o.getAttrs());
      Operation *w = wb.create(st);
      map.map(o.getResult(0), w->getResult(0));
      varying.insert(w->getResult(0));
    }
    blk->dropAllDefinedValueUses();
    blk->erase();
    if (!ok)
      return giveUp();
  }
  // The region must not capture values from outside (it is outlined into
  // a kernel function later).
  bool captured = false;
  rg.walk([&](Operation *o) {
    for (Value v : o->getOperands())
      if (!rg.isAncestor(v.getParentRegion()))
        captured = true;
  });
  if (captured)
    return giveUp();
  apply.setReducersAttr(b_.getArrayAttr({gfReducer(*br, msgT)}));
  return V::tensor(apply.getResult(0));
}

} // namespace linnet::import::detail

namespace linnet::import::detail {

V Importer::builtRelation(const ir::Op &op, Frame &f, bool radius) {
  // A gf.relation of realization radius/knn over the positions;
  // -gf-build-relations builds its compressed rows, which gf.edges reads
  // once for every reduction over it (language §10.5).
  const char *name = radius ? "radius" : "knn";
  if (op.operands.size() != (radius ? 5u : 4u))
    fail(fmt::format("{}: __builtin_{}: wrong number of arguments", where_, name));
  auto positions = [&](size_t i) {
    V p = get(f, op.operands[i]);
    auto tt = p.k == V::Tensor ? dyn_cast<RankedTensorType>(p.v.getType()) : RankedTensorType();
    if (!tt || tt.getRank() != 2 || !isa<FloatType>(tt.getElementType()))
      fail(fmt::format("{}: __builtin_{} takes float positions [points, axes]", where_, name));
    return p.v;
  };
  Value dst = positions(0);
  bool graph = op.operands[1] == op.operands[0]; // knn_graph(pos): one operand
  Value src = graph ? dst : positions(1);
  auto extentOf = [&](Value t) -> DimV {
    auto tt = cast<RankedTensorType>(t.getType());
    if (!tt.isDynamicDim(0))
      return {tt.getDimSize(0), cIndex(tt.getDimSize(0))};
    return {std::nullopt, b_.create<tensor::DimOp>(loc_, t, 0)};
  };
  DimV m = extentOf(dst), n = extentOf(src);
  V kv = scalarOf(get(f, op.operands[radius ? 3 : 2]));
  V self = scalarOf(get(f, op.operands[radius ? 4 : 3]));
  if (!self.c)
    fail(fmt::format("{}: __builtin_{}: whether self pairs are excluded must be known when the model is built",
                     where_, name));
  V rv = radius ? scalarOf(get(f, op.operands[2])) : V();

  // Parameters known at build time are attributes; the rest 0-d tensors.
  Type i64 = b_.getI64Type(), f64 = b_.getF64Type();
  SmallVector<Value> topology{dst};
  if (!graph)
    topology.push_back(src);
  FloatAttr radiusAttr;
  if (radius) {
    std::optional<double> rc;
    if (auto cst = rv.v.getDefiningOp<arith::ConstantFloatOp>())
      rc = cst.value().convertToDouble();
    if (rc && *rc >= 0.0)
      radiusAttr = b_.getF64FloatAttr(*rc);
    else
      topology.push_back(b_.create<tensor::FromElementsOp>(loc_, RankedTensorType::get({}, f64),
                                                           ValueRange{convert(rv.v, f64)}));
  }
  IntegerAttr kAttr;
  if (kv.c && *kv.c > 0)
    kAttr = b_.getI64IntegerAttr(*kv.c);
  else
    topology.push_back(
        b_.create<tensor::FromElementsOp>(loc_, RankedTensorType::get({}, i64), ValueRange{convert(kv.v, i64)}));

  // At the user's call: a target that cannot build it refuses it there.
  auto relOp = b_.create<gf::RelationOp>(
      userLoc_, gf::RelationType::get(&ctx_), topology, name, /*version=*/0, n.c ? *n.c : -1, m.c ? *m.c : -1,
      /*degree_min=*/IntegerAttr(), /*degree_max=*/IntegerAttr(), name, "derived", "frozen", DenseI64ArrayAttr(),
      IntegerAttr(), StringAttr(), IntegerAttr(), radiusAttr, kAttr, IntegerAttr(),
      *self.c != 0);
  std::optional<int64_t> rows, cap;
  if (m.c) {
    rows = *m.c + 1;
    if (kv.c)
      cap = *m.c * std::max<int64_t>(*kv.c, 0);
  }
  auto vec = [&](std::optional<int64_t> size) {
    return RankedTensorType::get({size ? *size : ShapedType::kDynamic}, i64);
  };
  auto edges = b_.create<gf::EdgesOp>(userLoc_, vec(rows), vec(cap), relOp.getResult());
  V rel;
  rel.k = V::Rel;
  rel.rowPtr = edges.getRowPtr();
  rel.colIdx = edges.getColIdx();
  rel.relation = relOp.getResult();
  rel.numDst = m;
  rel.numSrc = n;
  rel.relName = name;
  return rel;
}

V Importer::pagedRelation(const ir::Op &op, Frame &f) {
  if (op.operands.size() != 4)
    fail(fmt::format("{}: __builtin_paged: wrong number of arguments", where_));
  auto integers = [&](size_t i, int64_t rank) {
    V p = get(f, op.operands[i]);
    auto tt = p.k == V::Tensor ? dyn_cast<RankedTensorType>(p.v.getType()) : RankedTensorType();
    if (!tt || tt.getRank() != rank || !tt.getElementType().isSignlessInteger())
      fail(fmt::format("{}: __builtin_paged takes an integer block table and row lengths", where_));
    return p.v;
  };
  Value table = integers(0, 2), lengths = integers(1, 1);
  V page = scalarOf(get(f, op.operands[2])), pool = scalarOf(get(f, op.operands[3]));
  if (!page.c || !pool.c)
    fail(fmt::format("{}: __builtin_paged: the page size and the pool's slots must be known when the model is "
                     "built",
                     where_));
  if (*page.c <= 0 || *pool.c < 0)
    fail(fmt::format("{}: __builtin_paged: pages of {} slots in a pool of {}", where_, *page.c, *pool.c));
  auto tableT = cast<RankedTensorType>(table.getType());
  std::optional<int64_t> rows;
  if (!tableT.isDynamicDim(0))
    rows = tableT.getDimSize(0);
  // At the user's call, as a built relation: every target expands it.
  auto relOp = b_.create<gf::RelationOp>(
      userLoc_, gf::RelationType::get(&ctx_), ValueRange{table, lengths}, "paged", /*version=*/0, *pool.c,
      rows ? *rows : -1, /*degree_min=*/IntegerAttr(), /*degree_max=*/IntegerAttr(), "paged", "derived", "frozen",
      DenseI64ArrayAttr(), IntegerAttr(), StringAttr(), IntegerAttr(), FloatAttr(), IntegerAttr(),
      b_.getI64IntegerAttr(*page.c), false);
  Type i64 = b_.getI64Type();
  auto vec = [&](std::optional<int64_t> size) {
    return RankedTensorType::get({size ? *size : ShapedType::kDynamic}, i64);
  };
  // The edges are as many as the slots in the pool (fewer than the cap).
  auto edges = b_.create<gf::EdgesOp>(userLoc_, vec(rows ? std::optional<int64_t>(*rows + 1) : std::nullopt),
                                      vec(std::nullopt), relOp.getResult());
  V rel;
  rel.k = V::Rel;
  rel.rowPtr = edges.getRowPtr();
  rel.colIdx = edges.getColIdx();
  rel.relation = relOp.getResult();
  rel.numDst = rows ? DimV{*rows, cIndex(*rows)} : DimV{std::nullopt, b_.create<tensor::DimOp>(loc_, table, 0)};
  rel.numSrc = {*pool.c, cIndex(*pool.c)};
  rel.relName = "paged";
  return rel;
}

} // namespace linnet::import::detail

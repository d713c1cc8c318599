//===- Reductions.cpp - Reductions and split folds ------------------------===//
//
// Built-in and user reducers as identity, lift, combine and finalize over
// flattened states, and reductions as scf.for folds over their domains (a
// relation index over its CSR row, a triangular filter as the loop's bound);
// a long fold with an associative user reducer is split into chunks folded in
// parallel and combined in order (flash-decoding, ImportOptions::foldChunks).
//
//===----------------------------------------------------------------------===//
#include "ImporterImpl.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace linnet::import::detail {

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

void Importer::leaves(const V &v, std::vector<Value> &out) {
  if (v.k == V::Scalar || v.k == V::Tensor)
    out.push_back(v.v);
  else if (v.k == V::Agg)
    for (const V &e : v.elems)
      leaves(e, out);
}

V Importer::rebuild(const V &templ, ValueRange vals, size_t &pos) {
  if (templ.k == V::Scalar)
    return V::scalar(vals[pos++]);
  if (templ.k == V::Tensor)
    return V::tensor(vals[pos++]);
  V a = templ;
  for (V &e : a.elems)
    e = rebuild(e, vals, pos);
  return a;
}

SmallVector<Value> Importer::carried(const V &upd, const std::vector<Value> &initLeaves,
                                     ValueRange iters) {
  std::vector<Value> updLeaves;
  leaves(upd, updLeaves);
  SmallVector<Value> out;
  for (size_t k = 0; k < updLeaves.size(); ++k) {
    Value u = convert(updLeaves[k], initLeaves[k].getType());
    if (auto tt = dyn_cast<RankedTensorType>(u.getType()); tt && tt.hasStaticShape())
      u = b_.create<linalg::CopyOp>(loc_, u, iters[k]).getResult(0);
    out.push_back(u);
  }
  return out;
}

bool Importer::signedOnly(const ir::BuiltinReducer *r) {
  return !r || r->dividesByCount ||
         (r->combine != ir::ReduceCombine::Add && r->combine != ir::ReduceCombine::Mul);
}

Value Importer::identityConstant(ir::ReduceIdentity id, Type t) {
  switch (id) {
  case ir::ReduceIdentity::Zero:
  case ir::ReduceIdentity::False: return constant(t, 0);
  case ir::ReduceIdentity::One:
  case ir::ReduceIdentity::True: return constant(t, 1);
  case ir::ReduceIdentity::Lowest:
  case ir::ReduceIdentity::Highest: break;
  }
  bool lowest = id == ir::ReduceIdentity::Lowest;
  if (isFloat(t))
    return infinity(t, lowest);
  int64_t w = t.isIndex() ? 64 : t.getIntOrFloatBitWidth();
  return b_.create<arith::ConstantOp>(
      loc_, t, b_.getIntegerAttr(t, lowest ? APInt::getSignedMinValue(w) : APInt::getSignedMaxValue(w)));
}

Importer::Reducer Importer::builtinReducer(const std::string &name, Type t) {
  const ir::BuiltinReducer *br = ir::findBuiltinReducer(name);
  if (!br)
    fail(fmt::format("{}: unknown reducer '{}'", where_, name));
  if (!br->dividesByCount)
    return combiningReducer(*br, t);
  // (sum, count): the count is of the messages combined, so a filter
  // (`mean(k: N where k <= i)`) or a CSR row counts what it keeps.
  Reducer r;
  Reducer sum = combiningReducer(*br, t);
  Type i64 = b_.getI64Type();
  auto pair = [](V s, V n) {
    V a;
    a.k = V::Agg;
    a.elems = {s, n};
    a.names = {"sum", "count"};
    return a;
  };
  r.identity = [=, this] { return pair(sum.identity(), V::scalar(constant(i64, 0))); };
  r.lift = [=, this](const std::vector<V> &m) {
    return pair(sum.lift(m), V::scalar(constant(i64, 1)));
  };
  r.combine = [=, this](const V &a, const V &c) {
    return pair(sum.combine(a.elems[0], c.elems[0]),
                V::scalar(b_.create<arith::AddIOp>(loc_, a.elems[1].v, c.elems[1].v)));
  };
  // An empty mean is 0 (its sum over max(count, 1)), for every dtype:
  // PyG's and DGL's mean aggregation of an isolated node.
  Type at = accumulatorType(*br, t);
  r.finalize = [=, this](const V &s) {
    Value n = b_.create<arith::MaxSIOp>(loc_, s.elems[1].v, constant(i64, 1));
    return V::scalar(convert(binary("div", s.elems[0].v, convert(n, at), at), t));
  };
  return r;
}

const ir::BuiltinReducer &Importer::onBool(const ir::BuiltinReducer &br, Type t) {
  if (!t.isInteger(1))
    return br;
  if (br.combine == ir::ReduceCombine::Max)
    return *ir::findBuiltinReducer("any");
  if (br.combine == ir::ReduceCombine::Min)
    return *ir::findBuiltinReducer("all");
  return br;
}

Type Importer::accumulatorType(const ir::BuiltinReducer &br, Type t) {
  if (br.combine == ir::ReduceCombine::Add && (t.isF16() || t.isBF16()))
    return b_.getF32Type();
  return t;
}

Importer::Reducer Importer::combiningReducer(const ir::BuiltinReducer &reducer, Type t) {
  const ir::BuiltinReducer &br = onBool(reducer, t);
  Reducer r;
  std::string comb(ir::combineOpName(br.combine));
  ir::ReduceIdentity id = br.identity;
  Type at = accumulatorType(br, t);
  r.identity = [=, this] { return V::scalar(identityConstant(id, at)); };
  r.lift = [=, this](const std::vector<V> &m) { return V::scalar(convert(scalarOf(m.at(0)).v, at)); };
  // Sums may be reassociated: that is what lets LLVM vectorize a dot product.
  r.combine = [=, this](const V &a, const V &c) {
    return V::scalar(binary(comb, a.v, c.v, at, /*fast=*/comb == "add" || comb == "mul"));
  };
  r.finalize = [=, this](const V &s) { return at == t ? s : V::scalar(convert(s.v, t)); };
  return r;
}

Importer::Reducer Importer::userReducer(const json &spec, Frame &f) {
  std::string name = spec["name"];
  const plan::Function *parts[4];
  const char *names[4] = {"identity", "lift", "combine", "finalize"};
  for (int i = 0; i < 4; ++i) {
    auto it = fns_.find(name + "." + names[i]);
    if (it == fns_.end())
      fail(fmt::format("{}: reducer '{}' has no '{}'", where_, name, names[i]));
    parts[i] = it->second;
  }
  // The reducer's generics, positionally from the use.
  Frame rf;
  const json &gens = parts[0]->generics;
  const json &vals = spec.value("generics", json::array());
  for (size_t i = 0; i < gens.size() && i < vals.size(); ++i) {
    if (gens[i].value("kind", "") == "dtype")
      rf.dtypes[gens[i]["var"]] = dtypeName(vals[i], f);
    else
      rf.dims[gens[i]["sym"]] = dim(vals[i], f);
  }
  Reducer r;
  auto one = [this](std::vector<V> v) {
    if (v.size() != 1)
      fail(fmt::format("{}: a reducer part must return one value", where_));
    return v[0];
  };
  r.identity = [=, this] { return one(call(*parts[0], rf, {})); };
  r.lift = [=, this](const std::vector<V> &m) {
    // The plan's reduce body yields one value per lift parameter.
    if (m.size() != parts[1]->body.args.size())
      fail(fmt::format("{}: reducer '{}': the body yields {} value{}, its lift takes {}", where_,
                       name, m.size(), m.size() == 1 ? "" : "s", parts[1]->body.args.size()));
    return one(call(*parts[1], rf, m));
  };
  r.combine = [=, this](const V &a, const V &c) { return one(call(*parts[2], rf, {a, c})); };
  r.finalize = [=, this](const V &s) { return one(call(*parts[3], rf, {s})); };
  return r;
}

/// The filter region's `cmp(j, X)` of a triangular filter (`j <= X` or
/// `j < X`, X computed without j and without regions), or nothing.
static const ir::Op *triangularCmp(const ir::Op &op) {
  if (op.regions.size() < 2 || op.regions[1].args.size() != 1)
    return nullptr;
  const ir::Region &fr = op.regions[1];
  ir::ValueId j = fr.args[0].id;
  if (fr.ops.size() < 2 || fr.ops.back().kind != ir::kind::Yield)
    return nullptr;
  const ir::Op &cmp = fr.ops[fr.ops.size() - 2];
  if (cmp.kind != ir::kind::Cmp || cmp.operands.size() != 2 || cmp.operands[0] != j ||
      fr.ops.back().operands.size() != 1 || fr.ops.back().operands[0] != cmp.results[0].id)
    return nullptr;
  std::string pred = cmp.attrs["pred"];
  if (pred != "le" && pred != "lt")
    return nullptr;
  for (size_t i = 0; i + 2 < fr.ops.size(); ++i) {
    if (!fr.ops[i].regions.empty())
      return nullptr;
    for (ir::ValueId id : fr.ops[i].operands)
      if (id == j)
        return nullptr;
  }
  return &cmp;
}

std::optional<Value> Importer::triangularBound(const ir::Op &op, Frame &f, const DimV &domain) {
  const ir::Op *found = triangularCmp(op);
  if (!found)
    return std::nullopt;
  const ir::Region &fr = op.regions[1];
  const ir::Op &cmp = *found;
  std::string pred = cmp.attrs["pred"];
  // Evaluate the bound's ops before the loop.
  for (size_t i = 0; i + 2 < fr.ops.size(); ++i) {
    std::vector<V> rs = operation(fr.ops[i], f);
    for (size_t k = 0; k < fr.ops[i].results.size() && k < rs.size(); ++k)
      f.env[fr.ops[i].results[k].id] = rs[k];
  }
  Value x = convert(scalarOf(get(f, cmp.operands[1])).v, b_.getIndexType());
  if (pred == "le")
    x = b_.create<arith::AddIOp>(loc_, x, cIndex(1));
  Value hi = b_.create<arith::MinSIOp>(loc_, x, dimValue(domain));
  return b_.create<arith::MaxSIOp>(loc_, hi, cIndex(0)).getResult();
}

//===----------------------------------------------------------------------===//
// Split folds (flash-decoding)
//===----------------------------------------------------------------------===//

bool Importer::associativeUserReducer(const json &spec) {
  if (!spec.is_object() || !spec.contains("name"))
    return false;
  auto it = fns_.find(spec["name"].get<std::string>() + ".combine");
  if (it == fns_.end() || !it->second->reducer.is_object())
    return false;
  for (const json &p : it->second->reducer.value("properties", json::array()))
    if (p == "associative")
      return true;
  return false;
}

std::optional<Importer::SplitFold> Importer::splitFold(const ir::Op &comp, Frame &f,
                                                       const std::vector<DimV> &ds) {
  if (foldChunks < 2)
    return std::nullopt;
  const ir::Region &body = comp.regions[0];
  const ir::Op *red = nullptr;
  for (const ir::Op &o : body.ops) {
    if (o.kind == ir::kind::Reduce) {
      red = &o;
      break;
    }
    if (!o.regions.empty())
      return std::nullopt;
  }
  if (!red || red->results.size() != 1 || !associativeUserReducer(red->attrs["reducer"]))
    return std::nullopt;
  const json &indices = red->attrs["indices"];
  if (indices.size() != 1 || indices[0].contains("relation"))
    return std::nullopt;
  DimV len = dim(indices[0]["domain"], f);
  // Chunks of at least 64 terms, at most foldChunks of them.
  int64_t chunks = foldChunks;
  if (len.c) {
    if (*len.c < 128)
      return std::nullopt;
    chunks = std::clamp<int64_t>((*len.c + 63) / 64, 2, foldChunks);
  }
  SplitFold sf;
  sf.op = red;
  sf.red = userReducer(red->attrs["reducer"], f);
  sf.init = sf.red.identity();
  sf.chunks = chunks;
  std::vector<Value> leafs;
  leaves(sf.init, leafs);
  SmallVector<Value> dyn;
  for (const DimV &d : ds)
    if (!d.c)
      dyn.push_back(d.v);
  for (Value l : leafs) {
    SmallVector<int64_t> shape;
    for (const DimV &d : ds)
      shape.push_back(d.c ? *d.c : ShapedType::kDynamic);
    shape.push_back(chunks);
    Type et = l.getType();
    if (auto tt = dyn_cast<RankedTensorType>(et)) {
      if (!tt.hasStaticShape())
        return std::nullopt;
      llvm::append_range(shape, tt.getShape());
      et = tt.getElementType();
    } else if (!et.isIntOrIndexOrFloat()) {
      return std::nullopt;
    }
    sf.partials.push_back(b_.create<tensor::EmptyOp>(loc_, shape, et, dyn));
  }
  // The chunk size: ceil(len / chunks).
  Value n = dimValue(len);
  Value size = b_.create<arith::DivUIOp>(loc_, b_.create<arith::AddIOp>(loc_, n, cIndex(chunks - 1)),
                                         cIndex(chunks));
  // The partial folds: a loop nest over [element..., chunk].
  std::vector<Value> ivs;
  std::function<ValueRange(size_t, ValueRange)> nest = [&](size_t i, ValueRange accs) -> ValueRange {
    bool chunkLoop = i == ds.size();
    auto loop = b_.create<scf::ForOp>(loc_, cIndex(0), chunkLoop ? cIndex(chunks) : dimValue(ds[i]),
                                      cIndex(1), accs);
    loop->setAttr("linnet.elements", b_.getUnitAttr());
    OpBuilder::InsertionGuard g(b_);
    b_.setInsertionPointToStart(loop.getBody());
    ivs.push_back(loop.getInductionVar());
    ++nest_;
    SmallVector<Value> next;
    if (!chunkLoop) {
      ValueRange r = nest(i + 1, loop.getRegionIterArgs());
      next.assign(r.begin(), r.end());
    } else {
      std::vector<V> args;
      for (size_t k = 0; k < ds.size(); ++k)
        args.push_back(V::scalar(ivs[k]));
      region(body, f, args, red);
      ChunkRange range{ivs.back(), size};
      V state = reduce(*red, f, &range).at(0);
      std::vector<Value> vals;
      leaves(state, vals);
      for (size_t k = 0; k < vals.size(); ++k) {
        Value acc = loop.getRegionIterArgs()[k];
        Value v = convert(vals[k], leafs[k].getType());
        if (auto tt = dyn_cast<RankedTensorType>(v.getType())) {
          SmallVector<OpFoldResult> offs(ivs.begin(), ivs.end()), sizes(ivs.size(), b_.getIndexAttr(1)),
              strides(ivs.size() + tt.getRank(), b_.getIndexAttr(1));
          for (int64_t d : tt.getShape()) {
            offs.push_back(b_.getIndexAttr(0));
            sizes.push_back(b_.getIndexAttr(d));
          }
          next.push_back(b_.create<tensor::InsertSliceOp>(loc_, v, acc, offs, sizes, strides));
        } else {
          next.push_back(b_.create<tensor::InsertOp>(loc_, v, acc, ValueRange(ivs)));
        }
      }
    }
    --nest_;
    ivs.pop_back();
    b_.create<scf::YieldOp>(loc_, next);
    return loop.getResults();
  };
  ValueRange done = nest(0, sf.partials);
  sf.partials.assign(done.begin(), done.end());
  return sf;
}

V Importer::combineChunks(const SplitFold &sf, ArrayRef<Value> ivs) {
  std::vector<Value> initLeaves;
  leaves(sf.init, initLeaves);
  auto loop = b_.create<scf::ForOp>(loc_, cIndex(0), cIndex(sf.chunks), cIndex(1), initLeaves);
  {
    OpBuilder::InsertionGuard g(b_);
    b_.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> at(ivs.begin(), ivs.end());
    at.push_back(loop.getInductionVar());
    SmallVector<Value> vals;
    for (Value p : sf.partials) {
      auto pt = cast<RankedTensorType>(p.getType());
      int64_t lead = at.size();
      if (pt.getRank() == lead) {
        vals.push_back(b_.create<tensor::ExtractOp>(loc_, p, at));
        continue;
      }
      auto leafT = RankedTensorType::get(pt.getShape().drop_front(lead), pt.getElementType());
      SmallVector<OpFoldResult> offs(at.begin(), at.end()), sizes(lead, b_.getIndexAttr(1)),
          strides(pt.getRank(), b_.getIndexAttr(1));
      for (int64_t d : leafT.getShape()) {
        offs.push_back(b_.getIndexAttr(0));
        sizes.push_back(b_.getIndexAttr(d));
      }
      vals.push_back(b_.create<tensor::ExtractSliceOp>(loc_, leafT, p, offs, sizes, strides));
    }
    size_t pos = 0;
    V part = rebuild(sf.init, vals, pos);
    pos = 0;
    V acc = rebuild(sf.init, loop.getRegionIterArgs(), pos);
    b_.create<scf::YieldOp>(loc_, carried(sf.red.combine(acc, part), initLeaves, loop.getRegionIterArgs()));
  }
  size_t pos = 0;
  return sf.red.finalize(rebuild(sf.init, loop.getResults(), pos));
}

std::vector<V> Importer::reduce(const ir::Op &op, Frame &f, const ChunkRange *range) {
  const json &spec = op.attrs["reducer"];
  if (!spec.is_string() && !(spec.is_object() && spec.contains("name")))
    fail(fmt::format("{}: the reduction's reducer was not resolved (its generics could not be "
                     "inferred; write them)",
                     where_));
  const json &indices = op.attrs["indices"];
  bool filter = op.attrs.value("filter", false);
  Type resultT;
  const json &rt = op.results[0].type;
  std::string rkind = rt.value("kind", "");
  if (rkind == "scalar" || rkind == "tensor")
    resultT = type(rt, f);
  std::string builtinName = spec.is_string() ? spec.get<std::string>() : "";
  if (!builtinName.empty() && (!resultT || !isa<IntegerType, IndexType, FloatType>(resultT)))
    fail(fmt::format("{}: a built-in '{}' reduction must produce a scalar", where_, builtinName));
  // A mean over dense domains without a filter divides by the domains'
  // product (no count carried); otherwise it counts what it combines.
  // The built-in reducers' identities and combines are signed: a sum or a
  // product wraps the same in either reading, the others would not.
  const ir::BuiltinReducer *builtin = ir::findBuiltinReducer(builtinName);
  if (!builtinName.empty() && signedOnly(builtin) && isUnsigned(rt, f))
    fail(fmt::format("{}: a '{}' reduction over an unsigned integer type is not supported by "
                     "the CPU backend yet (cast the values to a signed type first)",
                     where_, builtinName));
  bool denseMean = builtin && builtin->dividesByCount && !filter;
  for (const json &ix : indices)
    denseMean &= !ix.contains("relation");
  Reducer red = builtinName.empty() ? userReducer(spec, f)
                : denseMean         ? combiningReducer(*builtin, resultT)
                                    : builtinReducer(builtinName, resultT);

  // Loop bounds of each index; a relation index loops over a destination's
  // CSR row.
  struct Loop {
    bool relation = false;
    DimV size;
    V rel;
    Value dst;
  };
  std::vector<Loop> loops;
  for (const json &ix : indices) {
    Loop l;
    if (ix.contains("relation")) {
      l.relation = true;
      l.rel = get(f, op.operands.at(ix["relation"].get<size_t>()));
      if (l.rel.k != V::Rel)
        fail(fmt::format("{}: the relation of a reduction is not a relation input", where_));
      l.dst = convert(scalarOf(get(f, op.operands.at(ix["target"].get<size_t>()))).v,
                      b_.getIndexType());
    } else {
      l.size = dim(ix["domain"], f);
    }
    loops.push_back(l);
  }
  std::optional<Value> bound;
  if (filter && loops.size() == 1 && !loops[0].relation)
    bound = triangularBound(op, f, loops[0].size);

  V init = red.identity();
  std::vector<Value> initLeaves;
  leaves(init, initLeaves);
  std::vector<V> args;
  std::function<ValueRange(size_t, ValueRange)> nestLoops;
  std::vector<scf::ForOp> ops;
  nestLoops = [&](size_t i, ValueRange state) -> ValueRange {
    Loop &l = loops[i];
    Value lo, hi;
    if (l.relation) {
      Value a = b_.create<tensor::ExtractOp>(loc_, l.rel.rowPtr, ValueRange{l.dst});
      Value next = b_.create<arith::AddIOp>(loc_, l.dst, cIndex(1));
      Value c = b_.create<tensor::ExtractOp>(loc_, l.rel.rowPtr, ValueRange{next});
      lo = convert(a, b_.getIndexType());
      hi = convert(c, b_.getIndexType());
    } else {
      lo = cIndex(0);
      hi = bound ? *bound : dimValue(l.size);
      if (range) {
        // [c * size, min(hi, (c + 1) * size)): no iteration past the end.
        lo = b_.create<arith::MulIOp>(loc_, range->chunk, range->size);
        hi = b_.create<arith::MinSIOp>(loc_, hi, b_.create<arith::AddIOp>(loc_, lo, range->size));
      }
    }
    auto loop = b_.create<scf::ForOp>(loc_, lo, hi, cIndex(1), state);
    OpBuilder::InsertionGuard g(b_);
    b_.setInsertionPointToStart(loop.getBody());
    Value iv = loop.getInductionVar();
    size_t nargs = args.size();
    if (l.relation) {
      Value src = b_.create<tensor::ExtractOp>(loc_, l.rel.colIdx, ValueRange{iv});
      args.push_back(V::scalar(convert(src, b_.getIndexType())));
      if (indices[i]["names"].size() > 1)
        args.push_back(V::scalar(iv));
    } else {
      args.push_back(V::scalar(iv));
    }
    ++nest_;
    SmallVector<Value> next;
    if (i + 1 < loops.size()) {
      ValueRange r = nestLoops(i + 1, loop.getRegionIterArgs());
      next.assign(r.begin(), r.end());
    } else {
      // One step: the message combined into the carried state.
      auto step = [&] {
        size_t pos = 0;
        V acc = rebuild(init, loop.getRegionIterArgs(), pos);
        std::vector<V> msg = region(op.regions[0], f, args);
        return carried(red.combine(acc, red.lift(msg)), initLeaves, loop.getRegionIterArgs());
      };
      // A filter guards the message: under a false filter it is neither
      // evaluated nor checked (`x[l + k - Pad]` of a zero-padded
      // convolution reads outside `x` exactly where the filter is false).
      std::optional<V> keep;
      if (filter && !bound)
        keep = scalarOf(region(op.regions[1], f, args).at(0));
      if (!keep || (keep->c && *keep->c)) {
        next = step();
      } else if (keep->c) {
        next.assign(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
      } else {
        SmallVector<Type> types;
        for (Value v : initLeaves)
          types.push_back(v.getType());
        auto guarded = b_.create<scf::IfOp>(loc_, types, keep->v, /*withElseRegion=*/true);
        OpBuilder::InsertionGuard ig(b_);
        b_.setInsertionPointToStart(guarded.thenBlock());
        b_.create<scf::YieldOp>(loc_, step());
        b_.setInsertionPointToStart(guarded.elseBlock());
        b_.create<scf::YieldOp>(loc_, loop.getRegionIterArgs());
        next.assign(guarded.getResults().begin(), guarded.getResults().end());
      }
    }
    --nest_;
    args.resize(nargs);
    b_.create<scf::YieldOp>(loc_, next);
    return loop.getResults();
  };
  // std.nn's online softmax over one dense axis: in blocks of keys.
  std::optional<SmallVector<Value>> blocked;
  if (softmaxBlock >= 2 && spec.is_object() && spec.value("name", "") == "std.nn::online_softmax" &&
      loops.size() == 1 && !loops[0].relation && (!filter || bound)) {
    Value lo = cIndex(0), hi = bound ? *bound : dimValue(loops[0].size);
    if (range) {
      lo = b_.create<arith::MulIOp>(loc_, range->chunk, range->size);
      hi = b_.create<arith::MinSIOp>(loc_, hi, b_.create<arith::AddIOp>(loc_, lo, range->size));
    }
    Frame *frame = &f;
    if (auto lanes = softmaxBlocks(op, frame, lo, hi, SmallVector<Value>(initLeaves.begin(), initLeaves.end())))
      blocked = (*lanes)[0];
  }
  ValueRange finalLeaves = blocked ? ValueRange(*blocked) : nestLoops(0, initLeaves);
  size_t pos = 0;
  V acc = rebuild(init, finalLeaves, pos);
  if (range)
    return {acc};
  if (denseMean) {
    // A zero-sized domain divides its 0 by 1 (an empty mean is 0), in
    // the accumulator's type, rounded once.
    Value count = cIndex(1);
    for (Loop &l : loops)
      count = b_.create<arith::MulIOp>(loc_, count, dimValue(l.size));
    count = b_.create<arith::MaxUIOp>(loc_, count, cIndex(1));
    Type at = acc.v.getType();
    acc = V::scalar(binary("div", acc.v, convert(count, at), at));
  }
  V out = red.finalize(acc);
  if (op.results.size() > 1 && out.k == V::Agg)
    return out.elems;
  return {out};
}

//===----------------------------------------------------------------------===//
// Lanes: elements that fold the same keys
//===----------------------------------------------------------------------===//

void Importer::dependents(const std::vector<ir::Op> &ops, std::set<ir::ValueId> &seeds) {
  for (const ir::Op &o : ops) {
    for (const ir::Region &r : o.regions)
      dependents(r.ops, seeds);
    std::vector<ir::ValueId> in;
    reads(o, in);
    if (llvm::any_of(in, [&](ir::ValueId id) { return seeds.count(id) > 0; }))
      for (const ir::Value &v : o.results)
        seeds.insert(v.id);
  }
}

std::optional<Importer::FoldLanes> Importer::foldLanes(const ir::Op &comp, Frame &f,
                                                       const std::vector<DimV> &ds) {
  if (softmaxBlock < 2 || foldChunks >= 2 || ds.empty() || !ds.back().c || comp.regions.empty())
    return std::nullopt;
  const ir::Region &body = comp.regions[0];
  if (body.args.size() != ds.size())
    return std::nullopt;
  const ir::Op *red = nullptr;
  for (const ir::Op &o : body.ops) {
    if (o.kind == ir::kind::Reduce && !red) {
      red = &o;
      continue;
    }
    if (!o.regions.empty())
      return std::nullopt;
  }
  if (!red || red->results.size() != 1 || red->regions.empty())
    return std::nullopt;
  const json &spec = red->attrs["reducer"];
  const json &indices = red->attrs["indices"];
  if (!spec.is_object() || spec.value("name", "") != "std.nn::online_softmax" || indices.size() != 1 ||
      indices[0].contains("relation"))
    return std::nullopt;
  // The lanes share the key loop: its bound may not depend on the axis.
  ir::ValueId axis = body.args.back().id;
  std::set<ir::ValueId> fromAxis{axis};
  dependents(body.ops, fromAxis);
  if (red->attrs.value("filter", false)) {
    const ir::Op *cmp = triangularCmp(*red);
    if (!cmp || fromAxis.count(cmp->operands[1]))
      return std::nullopt;
    for (const ir::Op &o : red->regions[1].ops)
      if (llvm::any_of(o.operands, [&](ir::ValueId id) { return fromAxis.count(id) > 0; }))
        return std::nullopt;
  }
  // The divisor G of the messages' `axis / G`: an integer the build fixes.
  std::map<ir::ValueId, const ir::Op *> def;
  std::function<void(const std::vector<ir::Op> &)> defs = [&](const std::vector<ir::Op> &ops) {
    for (const ir::Op &o : ops) {
      for (const ir::Value &v : o.results)
        def[v.id] = &o;
      for (const ir::Region &r : o.regions)
        defs(r.ops);
    }
  };
  defs(body.ops);
  std::function<std::optional<int64_t>(ir::ValueId, int)> fixed = [&](ir::ValueId id,
                                                                       int depth) -> std::optional<int64_t> {
    auto d = def.find(id);
    if (d == def.end() || depth > 16)
      return std::nullopt;
    const ir::Op &o = *d->second;
    if (o.kind == ir::kind::DimValue)
      return dim(o.attrs["dim"], f).c;
    if (o.kind == ir::kind::Const && o.attrs.contains("value") && o.attrs["value"].is_number_integer())
      return o.attrs["value"].get<int64_t>();
    if (o.kind != ir::kind::Arith || o.operands.size() != 2)
      return std::nullopt;
    std::optional<int64_t> a = fixed(o.operands[0], depth + 1), c = fixed(o.operands[1], depth + 1);
    std::string name = o.attrs.value("op", "");
    if (!a || !c || *a < 0 || *c < 0 || *a > (1 << 20) || *c > (1 << 20))
      return std::nullopt;
    if (name == "mul") return *a * *c;
    if (name == "add") return *a + *c;
    if (name == "sub") return *a - *c;
    if (name == "div" && *c > 0) return *a / *c;
    return std::nullopt;
  };
  int64_t lanes = 0;
  std::function<bool(const std::vector<ir::Op> &)> divisors = [&](const std::vector<ir::Op> &ops) {
    for (const ir::Op &o : ops) {
      if (o.kind == ir::kind::Arith && o.attrs.value("op", "") == "div" && o.operands.size() == 2 &&
          o.operands[0] == axis) {
        std::optional<int64_t> g = fixed(o.operands[1], 0);
        if (!g || (lanes && *g != lanes))
          return false;
        lanes = *g;
      }
      for (const ir::Region &r : o.regions)
        if (!divisors(r.ops))
          return false;
    }
    return true;
  };
  for (const ir::Region &r : red->regions)
    if (!divisors(r.ops))
      return std::nullopt;
  if (lanes < 2 || lanes > 8 || *ds.back().c % lanes != 0)
    return std::nullopt;
  return FoldLanes{red, lanes};
}

bool Importer::jammableSum(const ir::Op &op) {
  if (op.kind != ir::kind::Reduce || op.results.size() != 1 || op.regions.size() != 1 ||
      op.attrs.value("filter", false) || preset_.count(&op))
    return false;
  const json &spec = op.attrs["reducer"];
  const json &indices = op.attrs["indices"];
  const json &rt = op.results[0].type;
  return spec.is_string() && spec.get<std::string>() == "sum" && indices.size() == 1 &&
         !indices[0].contains("relation") && rt.value("kind", "") == "scalar";
}

void Importer::sumLanes(const ir::Op &op, ArrayRef<Frame *> frames) {
  Type t = type(op.results[0].type, *frames[0]);
  if (!isa<IntegerType, IndexType, FloatType>(t))
    fail(fmt::format("{}: a built-in 'sum' reduction must produce a scalar", where_));
  // As reduce: a sum is its combining reducer (no count).
  Reducer red = combiningReducer(*ir::findBuiltinReducer("sum"), t);
  DimV size = dim(op.attrs["indices"][0]["domain"], *frames[0]);
  V init = red.identity();
  std::vector<Value> initLeaves;
  leaves(init, initLeaves);
  const size_t n = initLeaves.size();
  SmallVector<Value> inits;
  for (size_t r = 0; r < frames.size(); ++r)
    inits.append(initLeaves.begin(), initLeaves.end());
  auto loop = b_.create<scf::ForOp>(loc_, cIndex(0), dimValue(size), cIndex(1), inits);
  {
    OpBuilder::InsertionGuard g(b_);
    b_.setInsertionPointToStart(loop.getBody());
    ++nest_;
    SmallVector<Value> next;
    for (size_t r = 0; r < frames.size(); ++r) {
      ValueRange state = loop.getRegionIterArgs().slice(r * n, n);
      std::vector<V> msg = region(op.regions[0], *frames[r], {V::scalar(loop.getInductionVar())});
      size_t pos = 0;
      V acc = rebuild(init, state, pos);
      SmallVector<Value> c = carried(red.combine(acc, red.lift(msg)), initLeaves, state);
      next.append(c.begin(), c.end());
    }
    --nest_;
    b_.create<scf::YieldOp>(loc_, next);
  }
  for (size_t r = 0; r < frames.size(); ++r) {
    size_t pos = 0;
    V v = red.finalize(rebuild(init, loop.getResults().slice(r * n, n), pos));
    if (v.k == V::Scalar || v.k == V::Tensor)
      v.uns = isUnsigned(op.results[0].type, *frames[r]);
    frames[r]->env[op.results[0].id] = v;
  }
}

std::vector<V> Importer::regionPartLanes(const ir::Region &r, ArrayRef<Frame *> frames,
                                         const std::vector<V> &args, size_t k) {
  if (frames.size() == 1)
    return {regionPart(r, *frames[0], args, k)};
  std::vector<bool> keep = neededOps(r, k);
  for (Frame *f : frames)
    bindRegionArgs(r, *f, args);
  std::vector<V> out;
  for (size_t i = 0; i + 1 < r.ops.size(); ++i) {
    if (!keep[i])
      continue;
    if (jammableSum(r.ops[i])) {
      std::string saved = where_;
      Location savedLoc = loc_;
      where_ = fmt::format("{}: {}", frames[0]->fn, r.ops[i].kind);
      if (std::optional<Location> l = sourceLoc(r.ops[i].loc))
        loc_ = *l;
      sumLanes(r.ops[i], frames);
      loc_ = savedLoc;
      where_ = saved;
      continue;
    }
    for (Frame *f : frames)
      bindOrEvaluate(r.ops[i], *f);
  }
  for (Frame *f : frames)
    out.push_back(get(*f, r.ops.back().operands[k]));
  return out;
}

std::vector<std::vector<V>> Importer::reduceLanes(const ir::Op &op, std::vector<Frame> &frames) {
  const json &spec = op.attrs["reducer"];
  std::vector<Reducer> reds;
  std::vector<V> inits;
  SmallVector<SmallVector<Value>> initLeaves;
  SmallVector<Frame *> lanes;
  for (Frame &f : frames) {
    reds.push_back(userReducer(spec, f));
    inits.push_back(reds.back().identity());
    std::vector<Value> ls;
    leaves(inits.back(), ls);
    initLeaves.emplace_back(ls.begin(), ls.end());
    lanes.push_back(&f);
  }
  DimV size = dim(op.attrs["indices"][0]["domain"], frames[0]);
  std::optional<Value> hi = dimValue(size);
  // foldLanes saw that the bound is the same for every lane.
  if (op.attrs.value("filter", false))
    hi = triangularBound(op, frames[0], size);
  std::optional<SmallVector<SmallVector<Value>>> blocked;
  if (hi)
    blocked = softmaxBlocks(op, lanes, cIndex(0), *hi, initLeaves);
  std::vector<std::vector<V>> out;
  for (size_t r = 0; r < frames.size(); ++r) {
    if (!blocked) {
      out.push_back(reduce(op, frames[r]));
      continue;
    }
    size_t pos = 0;
    V acc = rebuild(inits[r], (*blocked)[r], pos);
    V v = reds[r].finalize(acc);
    out.push_back(op.results.size() > 1 && v.k == V::Agg ? v.elems : std::vector<V>{v});
  }
  return out;
}

//===----------------------------------------------------------------------===//
// The online softmax in blocks of keys
//===----------------------------------------------------------------------===//

// Folding key by key, every key waits on the last: the running maximum, an
// exponential, the rescaled accumulator. A block of B keys is instead
//   scores s_j and their maximum mb        (independent dot products)
//   m' = max(m, mb), c = e^(m - m')        (the state rescaled once a block)
//   p_j = e^(s_j - m'), l' = l c + sum p_j, acc' = acc c + sum p_j v_j
// with the reducer's own guards: an empty state (l == 0) scales by 0, a term
// at the maximum by exactly 1, so scores of -inf give what the key-by-key
// fold gives. The scores of a block live in one carried tensor<B>.
std::optional<SmallVector<SmallVector<Value>>>
Importer::softmaxBlocks(const ir::Op &op, ArrayRef<Frame *> frames, Value lo, Value hi,
                        ArrayRef<SmallVector<Value>> inits) {
  if (op.regions.empty() || inits.empty() || inits.size() != frames.size())
    return std::nullopt;
  const size_t lanes = inits.size();
  for (ArrayRef<Value> init : inits)
    if (init.size() != 3)
      return std::nullopt;
  Type t = inits[0][0].getType();
  auto accT = dyn_cast<RankedTensorType>(inits[0][2].getType());
  // Half states keep the fold key by key: the language rounds a reducer's
  // state after each combine there (§8.4), which regrouping would move.
  if (!isa<Float32Type, Float64Type>(t) || !accT || accT.getRank() != 1 || !accT.hasStaticShape() ||
      accT.getElementType() != t)
    return std::nullopt;
  for (ArrayRef<Value> init : inits)
    if (init[0].getType() != t || init[1].getType() != t || init[2].getType() != accT)
      return std::nullopt;
  const int64_t block = softmaxBlock;
  const ir::Region &body = op.regions[0];
  auto contract = arith::FastMathFlagsAttr::get(&ctx_, arith::FastMathFlags::contract);
  Value zero = constant(t, 0.0), one = constant(t, 1.0);
  // e^(x - m), exactly 1 where x == m (both -inf included).
  auto weight = [&](Value x, Value m) -> Value {
    Value at = b_.create<arith::CmpFOp>(loc_, arith::CmpFPredicate::OEQ, x, m);
    Value e = b_.create<math::ExpOp>(loc_, b_.create<arith::SubFOp>(loc_, x, m, contract));
    return b_.create<arith::SelectOp>(loc_, at, one, e);
  };
  // out[d] = out[d] * c, or out[d] + c * in[d], in place on `out`.
  auto update = [&](Value out, Value c, Value in) -> Value {
    SmallVector<Value> ins;
    if (in)
      ins.push_back(in);
    SmallVector<AffineMap> maps(ins.size() + 1, b_.getMultiDimIdentityMap(1));
    auto g = b_.create<linalg::GenericOp>(
        loc_, TypeRange{accT}, ins, ValueRange{out}, maps,
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          Value r = in ? nb.create<arith::AddFOp>(
                             l, a[1], nb.create<arith::MulFOp>(l, c, a[0], contract), contract)
                       : nb.create<arith::MulFOp>(l, a[0], c, contract).getResult();
          nb.create<linalg::YieldOp>(l, r);
        });
    // A value computed element by element only for this update (a cache
    // row read back `as T`) is fused into it (upstream elementwise fusion),
    // so no vector is materialized a key. The producer is left without
    // uses, for canonicalization (the frame may still name its result).
    if (in && in.hasOneUse() && in.getDefiningOp<linalg::GenericOp>()) {
      OpOperand *operand = g.getDpsInputOperand(0);
      if (linalg::areElementwiseOpsFusable(operand)) {
        IRRewriter rewriter(b_);
        FailureOr<linalg::ElementwiseOpFusionResult> fused = linalg::fuseElementwiseOps(rewriter, operand);
        if (succeeded(fused)) {
          Value r = fused->replacements.lookup(g.getResult(0));
          g.erase();
          return r;
        }
      }
    }
    return g.getResult(0);
  };
  // Loop-carried values, lane by lane: [m, l, acc, scores] x lanes.
  auto of = [lanes](ValueRange vs, size_t k, size_t r) { return vs[k * lanes + r]; };

  SmallVector<Value> carriedInit;
  for (size_t k = 0; k < 3; ++k)
    for (size_t r = 0; r < lanes; ++r)
      carriedInit.push_back(inits[r][k]);
  // Each lane's scores in a buffer of its own: empty tensors alike would be
  // one value after CSE, and the lanes' scores one buffer.
  for (size_t r = 0; r < lanes; ++r)
    carriedInit.push_back(r == 0 ? Value(b_.create<tensor::EmptyOp>(loc_, ArrayRef<int64_t>{block}, t))
                                 : Value(b_.create<bufferization::AllocTensorOp>(
                                       loc_, RankedTensorType::get({block}, t), ValueRange{})));
  auto blocks = b_.create<scf::ForOp>(loc_, lo, hi, cIndex(block), carriedInit);
  OpBuilder::InsertionGuard g(b_);
  b_.setInsertionPointToStart(blocks.getBody());
  Value first = blocks.getInductionVar();
  ValueRange state = blocks.getRegionIterArgs();
  Value n = b_.create<arith::MinSIOp>(loc_, cIndex(block),
                                      b_.create<arith::SubIOp>(loc_, hi, first));
  ++nest_;
  // The block's scores and their maximum, every lane's from one key.
  SmallVector<Value> scoringInit;
  for (size_t r = 0; r < lanes; ++r)
    scoringInit.append({of(state, 3, r), infinity(t, true)});
  auto scoring = b_.create<scf::ForOp>(loc_, cIndex(0), n, cIndex(1), scoringInit);
  // A key row a step: a target may fetch the rows ahead (-linnet-cpu-prefetch-rows).
  scoring->setAttr("linnet.rows", b_.getUnitAttr());
  {
    OpBuilder::InsertionGuard ig(b_);
    b_.setInsertionPointToStart(scoring.getBody());
    Value k = scoring.getInductionVar();
    Value j = b_.create<arith::AddIOp>(loc_, first, k);
    SmallVector<Value> next;
    std::vector<V> msgs = regionPartLanes(body, frames, {V::scalar(j)}, 0);
    for (size_t r = 0; r < lanes; ++r) {
      Value s = convert(scalarOf(msgs[r]).v, t);
      next.push_back(b_.create<tensor::InsertOp>(loc_, s, scoring.getRegionIterArgs()[2 * r], ValueRange{k}));
      next.push_back(b_.create<arith::MaximumFOp>(loc_, scoring.getRegionIterArgs()[2 * r + 1], s));
    }
    b_.create<scf::YieldOp>(loc_, next);
  }
  SmallVector<Value> mNew, l0, acc0;
  for (size_t r = 0; r < lanes; ++r) {
    Value m = of(state, 0, r), l = of(state, 1, r);
    mNew.push_back(b_.create<arith::MaximumFOp>(loc_, m, scoring.getResult(2 * r + 1)));
    Value empty = b_.create<arith::CmpFOp>(loc_, arith::CmpFPredicate::OEQ, l, zero);
    Value c = b_.create<arith::SelectOp>(loc_, empty, zero, weight(m, mNew[r]));
    l0.push_back(b_.create<arith::MulFOp>(loc_, l, c, contract));
    acc0.push_back(update(of(state, 2, r), c, Value()));
  }
  // The block's weights, in place of its scores: a loop of elementwise
  // work a target can vectorize (its exponentials permitted approximate,
  // `afn`: an approximation within a few ulps, as the blocks' regrouping
  // already departs from the interpreter by rounding).
  SmallVector<Value> weighingInit;
  for (size_t r = 0; r < lanes; ++r)
    weighingInit.push_back(scoring.getResult(2 * r));
  auto weighing = b_.create<scf::ForOp>(loc_, cIndex(0), n, cIndex(1), weighingInit);
  {
    OpBuilder::InsertionGuard ig(b_);
    b_.setInsertionPointToStart(weighing.getBody());
    Value k = weighing.getInductionVar();
    auto approx = arith::FastMathFlagsAttr::get(&ctx_, arith::FastMathFlags::contract | arith::FastMathFlags::afn);
    SmallVector<Value> next;
    for (size_t r = 0; r < lanes; ++r) {
      Value w = weighing.getRegionIterArgs()[r];
      Value s = b_.create<tensor::ExtractOp>(loc_, w, ValueRange{k});
      Value at = b_.create<arith::CmpFOp>(loc_, arith::CmpFPredicate::OEQ, s, mNew[r]);
      Value e = b_.create<math::ExpOp>(loc_, b_.create<arith::SubFOp>(loc_, s, mNew[r], contract), approx);
      Value p = b_.create<arith::SelectOp>(loc_, at, one, e);
      next.push_back(b_.create<tensor::InsertOp>(loc_, p, w, ValueRange{k}));
    }
    b_.create<scf::YieldOp>(loc_, next);
  }
  // The weighted values: each key's value row read once for every lane
  // (the heads of a group of grouped-query attention read one KV row).
  SmallVector<Value> summingInit;
  for (size_t r = 0; r < lanes; ++r)
    summingInit.append({l0[r], acc0[r]});
  auto summing = b_.create<scf::ForOp>(loc_, cIndex(0), n, cIndex(1), summingInit);
  summing->setAttr("linnet.rows", b_.getUnitAttr());
  {
    OpBuilder::InsertionGuard ig(b_);
    b_.setInsertionPointToStart(summing.getBody());
    Value k = summing.getInductionVar();
    Value j = b_.create<arith::AddIOp>(loc_, first, k);
    SmallVector<Value> next;
    for (size_t r = 0; r < lanes; ++r) {
      Value p = b_.create<tensor::ExtractOp>(loc_, weighing.getResult(r), ValueRange{k});
      V value = regionPart(body, *frames[r], {V::scalar(j)}, 1);
      if (value.k != V::Tensor || value.v.getType() != accT)
        fail(fmt::format("{}: the online softmax's value is not a {} vector", where_, accT.getShape()[0]));
      next.push_back(b_.create<arith::AddFOp>(loc_, summing.getRegionIterArgs()[2 * r], p, contract));
      next.push_back(update(summing.getRegionIterArgs()[2 * r + 1], p, value.v));
    }
    b_.create<scf::YieldOp>(loc_, next);
  }
  --nest_;
  SmallVector<Value> yields;
  yields.append(mNew);
  for (size_t r = 0; r < lanes; ++r)
    yields.push_back(summing.getResult(2 * r));
  for (size_t r = 0; r < lanes; ++r)
    yields.push_back(summing.getResult(2 * r + 1));
  for (size_t r = 0; r < lanes; ++r)
    yields.push_back(weighing.getResult(r));
  b_.create<scf::YieldOp>(loc_, yields);
  SmallVector<SmallVector<Value>> out;
  for (size_t r = 0; r < lanes; ++r)
    out.push_back({of(blocks.getResults(), 0, r), of(blocks.getResults(), 1, r), of(blocks.getResults(), 2, r)});
  return out;
}

} // namespace linnet::import::detail

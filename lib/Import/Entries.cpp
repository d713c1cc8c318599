//===- Entries.cpp - Entries, model tensors and state ---------------------===//
//
// Each root entry as a func.func in the runtime ABI (docs/runtime-abi.md):
// inputs, the present model tensors (params, buffers, state) and results as
// memrefs, state read through writable tensors and written back in program
// order; and the methods of array elements outlined into one function per
// specialization, with the element's tensors and state passed as memrefs.
//
//===----------------------------------------------------------------------===//
#include "ImporterImpl.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <fmt/ranges.h>

using namespace mlir;

namespace linnet::import::detail {

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

bool Importer::mentions(const json &d, const std::set<std::string> &syms) {
  if (d.is_object() && d.contains("sym"))
    return syms.count(d["sym"].get<std::string>()) > 0;
  if (d.is_object() && d.contains("args"))
    for (const json &a : d["args"])
      if (mentions(a, syms))
        return true;
  return false;
}

void Importer::entry(const plan::Function &fn) {
  Frame f;
  f.fn = fn.name;
  f.self = "";
  where_ = "entry " + fn.name;
  for (const json &g : plan_.root["generics"]) {
    std::string kind = g.value("kind", "");
    if (kind == "dim")
      f.dims[g["sym"]] = {g["value"].get<int64_t>(), {}};
    else if (kind == "dtype")
      f.dtypes[g["var"]] = g["value"].get<std::string>();
    else
      fail(fmt::format("root generic '{}': shape generics are not supported by the CPU "
                       "backend yet",
                       g.value("name", "?")));
  }
  std::string name = fn.name.substr(fn.name.rfind('.') + 1);

  // Argument types. Entry generics are dynamic here and bound below from
  // the first input axis that names them.
  std::set<std::string> entryGenerics;
  for (const json &g : fn.generics) {
    if (g.value("kind", "") != "dim")
      fail(fmt::format("entry {}: generic '{}': only dim generics are supported on entries",
                       fn.name, g.value("name", "?")));
    // A phase plan at a given extent: the generic is that constant.
    if (auto at = extents.find(g.value("name", "")); at != extents.end()) {
      f.dims[g["sym"]] = {at->second, {}};
      extentsUsed.insert(at->first);
      continue;
    }
    entryGenerics.insert(g["sym"].get<std::string>());
  }
  auto memrefOf = [&](const json &t) -> MemRefType {
    std::string kind = t.value("kind", "");
    if (kind == "scalar")
      return MemRefType::get({}, elemType(dtypeName(t["dtype"], f)));
    if (kind != "tensor")
      fail(fmt::format("entry {}: an input or result of type {} cannot cross the runtime ABI",
                       fn.name, ir::typeStr(t)));
    SmallVector<int64_t> shape;
    for (const json &u : t["shape"]) {
      if (mentions(u, entryGenerics))
        shape.push_back(ShapedType::kDynamic);
      else
        shape.push_back(*dim(u, f).c);
    }
    return MemRefType::get(shape, elemType(dtypeName(t["dtype"], f)));
  };
  SmallVector<Type> argTypes;
  struct InputSlot {
    int first;
    bool relation;
  };
  std::vector<InputSlot> slots;
  for (const ir::Value &a : fn.body.args) {
    if (a.type.value("kind", "") == "relation") {
      slots.push_back({(int)argTypes.size(), true});
      argTypes.push_back(MemRefType::get({ShapedType::kDynamic}, b_.getI64Type()));
      argTypes.push_back(MemRefType::get({ShapedType::kDynamic}, b_.getI64Type()));
    } else {
      slots.push_back({(int)argTypes.size(), false});
      argTypes.push_back(memrefOf(a.type));
    }
  }
  int firstTensor = argTypes.size();
  std::vector<const ModelTensor *> present;
  for (const ModelTensor &t : tensors_)
    if (t.present) {
      present.push_back(&t);
      argTypes.push_back(tensorMemref(t));
    }
  int firstResult = argTypes.size();
  for (const json &r : fn.results)
    argTypes.push_back(memrefOf(r));

  auto func = b_.create<func::FuncOp>(loc_, name, b_.getFunctionType(argTypes, {}));
  func->setAttr("llvm.emit_c_interface", b_.getUnitAttr());
  // The model's tensors among the arguments (params, buffers, state): the
  // portable plan lists them as PARAMETER and STATE buffers, which the
  // capacity check counts.
  SmallVector<Attribute> declared;
  for (size_t i = 0; i < present.size(); ++i)
    declared.push_back(b_.getDictionaryAttr(
        {b_.getNamedAttr("arg", b_.getI64IntegerAttr(int64_t(firstTensor + i))),
         b_.getNamedAttr("kind", b_.getStringAttr(present[i]->kind)),
         b_.getNamedAttr("path", b_.getStringAttr(present[i]->path))}));
  if (!declared.empty())
    func->setAttr("linnet.tensors", b_.getArrayAttr(declared));
  Block *body = func.addEntryBlock();
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToStart(body);

  // State is writable: an in-place update (tensor.insert_slice of a
  // KV-cache append) then writes the state's buffer directly.
  auto toTensor = [&](Value m, bool writable = false) -> Value {
    auto mt = cast<MemRefType>(m.getType());
    return b_.create<bufferization::ToTensorOp>(
        loc_, RankedTensorType::get(mt.getShape(), mt.getElementType()), m, /*restrict=*/true,
        writable);
  };
  tensorVal_.clear();
  stateVal_.clear();
  memrefVal_.clear();
  for (size_t i = 0; i < present.size(); ++i) {
    Value t = toTensor(body->getArgument(firstTensor + i), present[i]->kind == "state");
    tensorVal_[present[i]->path] = t;
    memrefVal_[present[i]->path] = body->getArgument(firstTensor + i);
    if (present[i]->kind == "state")
      stateVal_[present[i]->path] = t;
  }
  stateBase_ = stateVal_;
  observed_.clear();

  // Inputs, and the entry generics bound from their shapes.
  std::vector<V> args;
  for (size_t i = 0; i < fn.body.args.size(); ++i) {
    const ir::Value &a = fn.body.args[i];
    if (slots[i].relation) {
      V r;
      r.k = V::Rel;
      r.rowPtr = toTensor(body->getArgument(slots[i].first));
      r.colIdx = toTensor(body->getArgument(slots[i].first + 1));
      const json &dims = a.type["dims"];
      Value rows = b_.create<tensor::DimOp>(loc_, r.rowPtr, 0);
      Value m = b_.create<arith::SubIOp>(loc_, rows, cIndex(1));
      Value e = b_.create<tensor::DimOp>(loc_, r.colIdx, 0);
      auto bindG = [&](const json &u, Value v) {
        if (u.is_object() && u.contains("sym") && entryGenerics.count(u["sym"].get<std::string>()) &&
            !f.dims.count(u["sym"].get<std::string>()))
          f.dims[u["sym"].get<std::string>()] = {std::nullopt, v};
      };
      bindG(dims[1], m);
      bindG(dims[2], e);
      args.push_back(r);
      continue;
    }
    Value m = body->getArgument(slots[i].first);
    if (a.type.value("kind", "") == "scalar") {
      Value v = b_.create<memref::LoadOp>(loc_, m, ValueRange{});
      if (auto at = extents.find(a.name); at != extents.end() && isa<IntegerType>(v.getType())) {
        v = b_.create<arith::ConstantOp>(loc_, IntegerAttr::get(v.getType(), at->second));
        extentsUsed.insert(at->first);
      }
      args.push_back(V::scalar(v));
      continue;
    }
    Value t = toTensor(m);
    const json &shape = a.type["shape"];
    for (size_t k = 0; k < shape.size(); ++k) {
      const json &u = shape[k];
      if (u.is_object() && u.contains("sym") && entryGenerics.count(u["sym"].get<std::string>()) &&
          !f.dims.count(u["sym"].get<std::string>()))
        f.dims[u["sym"].get<std::string>()] = {std::nullopt,
                                               b_.create<tensor::DimOp>(loc_, t, k).getResult()};
    }
    args.push_back(V::tensor(t));
  }
  for (const std::string &g : entryGenerics)
    if (!f.dims.count(g))
      fail(fmt::format("entry {}: generic '{}' appears in no input shape, so it cannot be "
                       "bound at run time",
                       fn.name, g.substr(g.rfind(':') + 1)));
  // Relations whose num_src/num_dst generics were bound only now.
  for (size_t i = 0; i < fn.body.args.size(); ++i)
    if (slots[i].relation) {
      args[i].numDst = dim(fn.body.args[i].type["dims"][1], f);
      args[i].numSrc = dim(fn.body.args[i].type["dims"][0], f);
      args[i].relName = fn.body.args[i].name;
    }

  std::vector<V> results = planResults(region(fn.body, f, args), fn);
  if (results.size() != fn.results.size())
    fail(fmt::format("entry {}: returns {} values, its signature says {}", fn.name,
                     results.size(), fn.results.size()));
  // State writes, in the order the state tensors are listed, then results.
  for (size_t i = 0; i < present.size(); ++i) {
    const std::string &p = present[i]->path;
    if (present[i]->kind != "state" || stateVal_[p] == stateBase_[p])
      continue;
    Value m = body->getArgument(firstTensor + i);
    Value v = convert(stateVal_[p], RankedTensorType::get(cast<MemRefType>(m.getType()).getShape(),
                                                          cast<MemRefType>(m.getType()).getElementType()));
    auto mat = b_.create<bufferization::MaterializeInDestinationOp>(loc_, v, m);
    mat.setWritable(true);
    mat.setRestrict(true);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    Value m = body->getArgument(firstResult + i);
    auto mt = cast<MemRefType>(m.getType());
    // A scalar result (a user reducer's finalize) as the rank-0 tensor
    // the ABI's result buffer holds.
    Value v = results[i].k == V::Scalar && mt.getRank() == 0
                  ? b_.create<tensor::FromElementsOp>(loc_, RankedTensorType::get({}, mt.getElementType()),
                                                      ValueRange{convert(results[i].v, mt.getElementType())})
                        .getResult()
                  : tensorOf(results[i]);
    v = convert(v, RankedTensorType::get(mt.getShape(), mt.getElementType()));
    auto mat = b_.create<bufferization::MaterializeInDestinationOp>(loc_, v, m);
    mat.setWritable(true);
    mat.setRestrict(true);
  }
  b_.create<func::ReturnOp>(loc_);
}

//===----------------------------------------------------------------------===//
// Outlined methods of array elements
//===----------------------------------------------------------------------===//

std::string Importer::typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream(s) << t;
  return s;
}

std::optional<std::vector<V>> Importer::callOutlined(const plan::Function &fn, const Frame &callee,
                                                     const std::vector<V> &args) {
  const std::string self = *callee.self;
  // Calls are emitted at a function's top level only (not inside a loop,
  // an scf.if or a linalg body). A shape generic's dims are not part of
  // the specialization key: such a call is inlined.
  if (!isa<func::FuncOp>(b_.getBlock()->getParentOp()) || !callee.packs.empty())
    return std::nullopt;
  for (const V &a : args)
    if (a.k != V::Scalar && a.k != V::Tensor)
      return std::nullopt;
  if (!fn.results.is_array())
    return std::nullopt;
  for (const json &r : fn.results)
    if (r.value("kind", "") != "tensor" && r.value("kind", "") != "scalar")
      return std::nullopt;
  std::vector<const ModelTensor *> own;
  std::string key = fn.name;
  for (const ModelTensor &t : tensors_) {
    if (t.path.rfind(self + ".", 0) != 0)
      continue;
    key += fmt::format("|{} {} {} [{}] {}", t.path.substr(self.size()), t.kind, t.dtype,
                       fmt::join(t.shape, ","), t.present);
    if (t.present)
      own.push_back(&t);
  }
  // The body updates the element's state in its memref, in place: the
  // caller's value of that state must be the memref's contents (no write
  // pending) and unread so far (a read value may be used after the call,
  // and must not see the update). Otherwise the call is inlined.
  for (const ModelTensor *t : own)
    if (t->kind == "state" &&
        (observed_.count(t->path) || stateVal_[t->path] != stateBase_[t->path]))
      return std::nullopt;
  std::vector<std::string> dynDims;
  for (const auto &[sym, d] : callee.dims) {
    key += fmt::format("|{}={}", sym, d.c ? std::to_string(*d.c) : "?");
    if (!d.c)
      dynDims.push_back(sym);
  }
  for (const auto &[var, t] : callee.dtypes)
    key += fmt::format("|{}:{}", var, t);
  for (const V &a : args)
    key += fmt::format("|{}{}", typeText(a.v.getType()),
                       a.k == V::Scalar && a.c ? "=" + std::to_string(*a.c) : "");

  // The result buffers' types, in the caller's terms (its dynamic dims).
  Frame inCaller = callee;
  std::vector<MemRefType> resultTypes;
  std::vector<SmallVector<Value>> resultDyn;
  try {
    for (const json &r : fn.results) {
      SmallVector<Value> dyn;
      Type t = type(r, inCaller, &dyn);
      if (auto tt = dyn_cast<RankedTensorType>(t))
        resultTypes.push_back(MemRefType::get(tt.getShape(), tt.getElementType()));
      else
        resultTypes.push_back(MemRefType::get({}, t));
      resultDyn.push_back(dyn);
    }
  } catch (const ImportError &) {
    return std::nullopt;
  }

  auto it = outlined_.find(key);
  if (it == outlined_.end()) {
    std::optional<std::string> name = buildOutlined(fn, callee, args, own, dynDims, resultTypes);
    if (!name)
      return std::nullopt;
    it = outlined_.emplace(key, *name).first;
  }

  SmallVector<Value> operands;
  for (const V &a : args) {
    if (a.k == V::Scalar) {
      if (!a.c)
        operands.push_back(a.v);
      continue;
    }
    auto tt = cast<RankedTensorType>(a.v.getType());
    operands.push_back(b_.create<bufferization::ToMemrefOp>(
        loc_, MemRefType::get(tt.getShape(), tt.getElementType()), a.v, /*read_only=*/true));
  }
  for (const std::string &sym : dynDims)
    operands.push_back(callee.dims.at(sym).v);
  for (const ModelTensor *t : own)
    operands.push_back(memrefVal_.at(t->path));
  SmallVector<Value> outs;
  for (size_t i = 0; i < resultTypes.size(); ++i)
    outs.push_back(b_.create<memref::AllocOp>(loc_, resultTypes[i], resultDyn[i],
                                              b_.getI64IntegerAttr(64)));
  operands.append(outs.begin(), outs.end());
  b_.create<func::CallOp>(loc_, it->second, TypeRange{}, operands);

  // The element's state is now its memrefs' contents: a later read sees
  // the update (a fresh, so far unread, value).
  for (const ModelTensor *t : own)
    if (t->kind == "state") {
      Value m = memrefVal_.at(t->path);
      auto mt = cast<MemRefType>(m.getType());
      Value v = b_.create<bufferization::ToTensorOp>(
          loc_, RankedTensorType::get(mt.getShape(), mt.getElementType()), m,
          /*restrict=*/true, /*writable=*/true);
      tensorVal_[t->path] = stateVal_[t->path] = stateBase_[t->path] = v;
    }
  std::vector<V> results;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (resultTypes[i].getRank() == 0 && fn.results[i].value("kind", "") == "scalar") {
      results.push_back(V::scalar(b_.create<memref::LoadOp>(loc_, outs[i], ValueRange{})));
      continue;
    }
    results.push_back(V::tensor(b_.create<bufferization::ToTensorOp>(
        loc_, RankedTensorType::get(resultTypes[i].getShape(), resultTypes[i].getElementType()),
        outs[i], /*restrict=*/true, /*writable=*/true)));
  }
  return results;
}

std::optional<std::string> Importer::buildOutlined(const plan::Function &fn, const Frame &callee,
                                                   const std::vector<V> &args,
                                                   const std::vector<const ModelTensor *> &own,
                                                   const std::vector<std::string> &dynDims,
                                                   const std::vector<MemRefType> &resultTypes) {
  SmallVector<Type> argTypes;
  for (const V &a : args) {
    if (a.k == V::Scalar) {
      if (!a.c)
        argTypes.push_back(a.v.getType());
      continue;
    }
    auto tt = cast<RankedTensorType>(a.v.getType());
    argTypes.push_back(MemRefType::get(tt.getShape(), tt.getElementType()));
  }
  for (size_t i = 0; i < dynDims.size(); ++i)
    argTypes.push_back(b_.getIndexType());
  for (const ModelTensor *t : own)
    argTypes.push_back(tensorMemref(*t));
  argTypes.append(resultTypes.begin(), resultTypes.end());

  // `examples.llama::LlamaDecoderLayer.forward` → @LlamaDecoderLayer.forward,
  // then .1, .2 ... for further specializations.
  std::string base = fn.name.substr(fn.name.rfind("::") == std::string::npos
                                        ? 0
                                        : fn.name.rfind("::") + 2);
  ModuleOp module = b_.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
  std::string name = base;
  for (int n = 1; module.lookupSymbol(name); ++n)
    name = fmt::format("{}.{}", base, n);

  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToEnd(module.getBody());
  auto func = b_.create<func::FuncOp>(loc_, name, b_.getFunctionType(argTypes, {}));
  func.setPrivate();
  // One body for every element: LLVM must not paste it back per call.
  // Internal, so that LLVM drops the arguments every call passes alike
  // (the static sizes, strides and offsets of the memref descriptors).
  func->setAttr("passthrough", b_.getArrayAttr({b_.getStringAttr("noinline")}));
  func->setAttr("llvm.linkage", LLVM::LinkageAttr::get(&ctx_, LLVM::Linkage::Internal));
  Block *body = func.addEntryBlock();
  b_.setInsertionPointToStart(body);

  // The function has its own tensors; the caller's are restored after.
  auto saved = std::make_tuple(std::move(tensorVal_), std::move(stateVal_),
                               std::move(memrefVal_), std::move(stateBase_),
                               std::move(observed_), std::move(preset_), nest_, where_, loc_);
  auto restore = [&] {
    std::tie(tensorVal_, stateVal_, memrefVal_, stateBase_, observed_, preset_, nest_, where_,
             loc_) = std::move(saved);
  };
  tensorVal_.clear();
  stateVal_.clear();
  memrefVal_.clear();
  stateBase_.clear();
  observed_.clear();
  preset_.clear();
  nest_ = 0;
  try {
    unsigned pos = 0;
    std::vector<V> inner;
    for (const V &a : args) {
      if (a.k == V::Scalar) {
        inner.push_back(a.c ? V::scalar(constant(a.v.getType(), (double)*a.c), a.c)
                            : V::scalar(body->getArgument(pos++)));
        continue;
      }
      Value m = body->getArgument(pos++);
      auto mt = cast<MemRefType>(m.getType());
      inner.push_back(V::tensor(b_.create<bufferization::ToTensorOp>(
          loc_, RankedTensorType::get(mt.getShape(), mt.getElementType()), m,
          /*restrict=*/true)));
    }
    Frame g;
    g.self = callee.self;
    g.dtypes = callee.dtypes;
    for (const auto &[sym, d] : callee.dims)
      if (d.c)
        g.dims[sym] = d;
    for (const std::string &sym : dynDims)
      g.dims[sym] = {std::nullopt, body->getArgument(pos++)};
    for (const ModelTensor *t : own) {
      Value m = body->getArgument(pos++);
      auto mt = cast<MemRefType>(m.getType());
      bool state = t->kind == "state";
      Value v = b_.create<bufferization::ToTensorOp>(
          loc_, RankedTensorType::get(mt.getShape(), mt.getElementType()), m,
          /*restrict=*/true, /*writable=*/state);
      tensorVal_[t->path] = v;
      memrefVal_[t->path] = m;
      if (state)
        stateVal_[t->path] = stateBase_[t->path] = v;
    }
    std::vector<V> results = planResults(call(fn, std::move(g), inner), fn);
    if (results.size() != resultTypes.size())
      fail(fmt::format("{}: returns {} values, its signature says {}", fn.name, results.size(),
                       resultTypes.size()));
    for (const ModelTensor *t : own)
      if (t->kind == "state" && stateVal_[t->path] != stateBase_[t->path]) {
        Value m = memrefVal_[t->path];
        auto mt = cast<MemRefType>(m.getType());
        Value v = convert(stateVal_[t->path],
                          RankedTensorType::get(mt.getShape(), mt.getElementType()));
        auto mat = b_.create<bufferization::MaterializeInDestinationOp>(loc_, v, m);
        mat.setWritable(true);
        mat.setRestrict(true);
      }
    for (size_t i = 0; i < results.size(); ++i) {
      Value m = body->getArgument(pos++);
      MemRefType mt = resultTypes[i];
      if (results[i].k == V::Scalar && mt.getRank() == 0) {
        b_.create<memref::StoreOp>(loc_, convert(results[i].v, mt.getElementType()), m,
                                   ValueRange{});
        continue;
      }
      Value v = convert(tensorOf(results[i]),
                        RankedTensorType::get(mt.getShape(), mt.getElementType()));
      auto mat = b_.create<bufferization::MaterializeInDestinationOp>(loc_, v, m);
      mat.setWritable(true);
      mat.setRestrict(true);
    }
    b_.create<func::ReturnOp>(loc_);
  } catch (const ImportError &) {
    restore();
    func.erase();
    return std::nullopt;
  }
  restore();
  return name;
}

} // namespace linnet::import::detail

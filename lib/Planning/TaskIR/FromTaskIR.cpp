//===- FromTaskIR.cpp - PortablePlanIR from Task IR -----------------------===//
//
// Walks each function of a Task-IR module in order. gf_task/gf_storage ops
// become tasks and buffers; each gf_kernel.launch marked `gf_task.planned`
// gives its work to the gf_task.launch ops the planner put before it;
// unplanned kernels become one "whole" task. Sizes are per rank.
//
// Work facts are derived from the relation's static facts, never measured:
//   rows      = the partition's owned destinations (or the kernel's num_rows)
//   edges     in [rows*degree_min, rows*degree_max] (materialized/generated
//             relations; exact rows*num_src for dense ones; degree unknown:
//             [0, rows*num_src]) — interior and boundary tasks each get
//             [0, that upper bound], since only the topology's contents
//             decide how rows split between them;
//   ops       = edges * (arith ops in the message body + reducer lift and
//             combine) + rows * (reducer finalize ops), constants excluded;
//   bytes     from element types: topology i64 offsets (rows+1) and column
//             ids (edges), each `src` input gathered once per edge, `edge`
//             inputs once per edge, `dst` inputs and results once per row.
//
//===----------------------------------------------------------------------===//
#include "linnet/Planning/FromTaskIR.h"

#include "linnet/Dialect/Gf/IR/MessageSignature.h"
#include "linnet/Dialect/Gf/Transforms/Passes.h"
#include "linnet/Dialect/Gf/Transforms/RelationBuilder.h"
#include "linnet/Support/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>

using namespace mlir;

namespace linnet::planning {
namespace {

std::optional<int64_t> bufferBytes(Type t, bool &dyn);

/// Work facts saturate at INT64_MAX instead of overflowing: a size past
/// 64 bits is an error of its buffer (bufferBytes), and the facts of that
/// plan are never used.
int64_t satMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

std::string locString(Location loc) {
  if (auto f = dyn_cast<FileLineColLoc>(loc))
    return (f.getFilename().getValue() + ":" + Twine(f.getLine()) + ":" + Twine(f.getColumn())).str();
  if (auto n = dyn_cast<NameLoc>(loc))
    return locString(n.getChildLoc());
  if (auto c = dyn_cast<CallSiteLoc>(loc))
    return locString(c.getCallee());
  if (auto f = dyn_cast<FusedLoc>(loc))
    for (Location l : f.getLocations())
      if (std::string s = locString(l); !s.empty())
        return s;
  return "";
}
std::string opAt(Operation *op) {
  return op->getName().getStringRef().str() + "@" + locString(op->getLoc());
}

std::string dtypeOf(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    t = shaped.getElementType();
  if (t.isF16()) return "f16";
  if (t.isBF16()) return "bf16";
  if (t.isF32()) return "f32";
  if (t.isF64()) return "f64";
  if (t.isInteger(1)) return "i1";
  if (auto i = dyn_cast<IntegerType>(t))
    return "i" + std::to_string(i.getWidth());
  if (isa<IndexType>(t)) return "i64";
  return "f32";
}

/// Bytes one entity of a tensor occupies: the element size times the static
/// trailing dims (the leading dim is the entity axis).
int64_t entityBytes(Type tensorType) {
  Type value = gf::entityValueType(tensorType);
  int64_t count = 1;
  if (auto shaped = dyn_cast<ShapedType>(value)) {
    for (int64_t d : shaped.getShape())
      if (!ShapedType::isDynamic(d))
        count *= d;
    value = shaped.getElementType();
  }
  if (isa<IndexType>(value))
    return 8 * count;
  return count * std::max<int64_t>(1, (value.getIntOrFloatBitWidth() + 7) / 8);
}

/// Arithmetic ops in a region, constants and terminators excluded.
int64_t countOps(Region &r) {
  int64_t n = 0;
  r.walk([&](Operation *op) {
    if (op->hasTrait<OpTrait::IsTerminator>() || isa<arith::ConstantOp>(op) ||
        op->getNumRegions())
      return;
    ++n;
  });
  return n;
}

struct RelationFacts {
  std::string id;
  std::optional<gf::Realization> realization; // none: not a known case
  int64_t numSrc = -1, numDst = -1, degreeMin = -1, degreeMax = -1;
  int64_t k = -1; // knn: neighbours per destination
  std::vector<int64_t> mesh;
  int64_t meshAxis = 0;
};
RelationFacts relationFacts(gf::RelationOp rel) {
  RelationFacts f;
  f.id = rel.getRelationId().str();
  f.realization = gf::symbolizeRealization(rel.getRealization());
  f.numSrc = rel.getNumSrc();
  f.numDst = rel.getNumDst();
  f.degreeMin = rel.getDegreeMin().value_or(-1);
  f.degreeMax = rel.getDegreeMax().value_or(-1);
  f.k = rel.getK().value_or(-1);
  if (std::optional<ArrayRef<int64_t>> m = rel.getMeshShape())
    f.mesh.assign(m->begin(), m->end());
  f.meshAxis = rel.getMeshAxis().value_or(0);
  return f;
}

struct Builder {
  PortablePlan plan;
  Diagnostics &diags;
  std::map<void *, std::string> valueBuffer;        // SSA value -> buffer id
  std::map<void *, std::vector<std::string>> event; // event value -> task ids
  std::map<std::string, size_t> bufferIndex;
  std::map<std::string, Operation *> taskOp; // task id -> the op it comes from
  /// INPUT buffers made for values computed in the function, before the
  /// task computing them was planned (a gf kernel planned before the linalg
  /// work feeding it): `stitchProducers` replaces them with the producer's.
  std::vector<std::pair<std::string, Value>> provisional;
  int64_t ranks = 1;

  Builder(Diagnostics &d, ModuleOp module) : diags(d) {
    // The numerics policy the imported module was put under (-gf-widen-half
    // marks it): every buffer records the dtype its values compute in.
    if (auto n = module->getAttrOfType<StringAttr>("linnet.numerics"))
      plan.numerics = n.str();
    // --matmul-precision (the compiler marks the module): recorded as asked.
    if (auto p = module->getAttrOfType<StringAttr>("linnet.matmul_precision"))
      plan.matmulPrecision = p.str();
    if (auto p = module->getAttrOfType<StringAttr>("linnet.block_products"))
      plan.blockProducts = p.str();
  }

  Buffer &buffer(const std::string &id) { return plan.buffers[bufferIndex.at(id)]; }

  std::string addBuffer(Buffer b) {
    // Stable ids: the same name in two places gets a numeric suffix in
    // program order, so ids never depend on pointer values.
    std::string id = b.id;
    for (int n = 2; bufferIndex.count(id); ++n)
      id = b.id + "." + std::to_string(n);
    b.id = id;
    if (b.computeDtype.empty())
      b.computeDtype = support::computeDtype(
          support::parseNumericsPolicy(plan.numerics).value_or(support::NumericsPolicy::AsWritten), b.dtype);
    bufferIndex[id] = plan.buffers.size();
    plan.buffers.push_back(std::move(b));
    return id;
  }

  Task &addTask(Task t, Operation *from) {
    taskOp[t.id] = from;
    plan.tasks.push_back(std::move(t));
    return plan.tasks.back();
  }

  void use(Task &t, const std::string &bid, bool write) {
    Buffer &b = buffer(bid);
    auto &list = write ? t.writes : t.reads;
    auto &users = write ? b.writers : b.readers;
    if (std::find(list.begin(), list.end(), bid) == list.end())
      list.push_back(bid);
    if (std::find(users.begin(), users.end(), t.id) == users.end())
      users.push_back(t.id);
    // A read depends on every earlier writer of the buffer (SSA order is
    // program order, so earlier writers are the producers).
    if (!write)
      for (const std::string &w : b.writers)
        if (w != t.id && std::find(t.dependsOn.begin(), t.dependsOn.end(), w) == t.dependsOn.end())
          t.dependsOn.push_back(w);
  }

  void dependOnEvents(Task &t, ValueRange events) {
    for (Value e : events)
      for (const std::string &d : event[e.getAsOpaquePointer()])
        if (std::find(t.dependsOn.begin(), t.dependsOn.end(), d) == t.dependsOn.end())
          t.dependsOn.push_back(d);
  }

  /// The model's tensors each function takes (the importer's
  /// `linnet.tensors`: params, buffers, state): one PARAMETER or STATE
  /// buffer per tensor, PERSISTENT (they live as long as the loaded model),
  /// shared by every entry that takes it.
  void declareModelTensors(func::FuncOp fn) {
    auto declared = fn->getAttrOfType<ArrayAttr>("linnet.tensors");
    if (!declared)
      return;
    for (Attribute a : declared) {
      auto d = dyn_cast<DictionaryAttr>(a);
      auto arg = d ? d.getAs<IntegerAttr>("arg") : IntegerAttr();
      auto kind = d ? d.getAs<StringAttr>("kind") : StringAttr();
      auto path = d ? d.getAs<StringAttr>("path") : StringAttr();
      if (!arg || !kind || !path || arg.getInt() < 0 || arg.getInt() >= int64_t(fn.getNumArguments()))
        continue;
      Value v = fn.getArgument(unsigned(arg.getInt()));
      std::string id = "buf." + std::string(kind.getValue() == "state" ? "state." : "param.") + path.str();
      if (!bufferIndex.count(id)) {
        bool dyn = false;
        std::optional<int64_t> bytes = bufferBytes(v.getType(), dyn);
        Buffer b;
        b.id = id;
        b.name = path.str();
        b.dtype = dtypeOf(v.getType());
        b.role = kind.getValue() == "state" ? BufferRole::State : BufferRole::Parameter;
        b.storage = StorageClass::Persistent;
        b.bytes = Quantity::exact(bytes.value_or(0));
        addBuffer(std::move(b));
      }
      valueBuffer[v.getAsOpaquePointer()] = id;
    }
  }

  /// The buffer of an SSA tensor value: a function argument is an external
  /// INPUT; anything else was produced by an earlier kernel.
  /// A model tensor read as a tensor value (the importer's to_tensor of
  /// its argument): its PARAMETER or STATE buffer; "" for anything else.
  std::string modelTensorBuffer(Value v) {
    if (auto t = v.getDefiningOp<bufferization::ToTensorOp>())
      if (auto m = valueBuffer.find(t.getMemref().getAsOpaquePointer()); m != valueBuffer.end())
        return m->second;
    return "";
  }

  std::string bufferFor(Value v, const std::string &fn, const std::string &name, Quantity bytes) {
    auto it = valueBuffer.find(v.getAsOpaquePointer());
    if (it != valueBuffer.end())
      return it->second;
    if (std::string m = modelTensorBuffer(v); !m.empty())
      return m;
    Buffer b;
    b.id = "buf." + fn + "." + name;
    b.name = name;
    b.dtype = dtypeOf(v.getType());
    b.role = BufferRole::Input;
    b.storage = StorageClass::External;
    b.bytes = bytes;
    if (!bytes.isExact()) {
      b.boundSemantic = "relation_edges_upper_bound";
      b.boundDerivation = "rows x degree_max entities of " + std::to_string(entityBytes(v.getType())) + " B";
    }
    std::string id = addBuffer(std::move(b));
    valueBuffer[v.getAsOpaquePointer()] = id;
    if (!isa<BlockArgument>(v))
      provisional.push_back({id, v});
    return id;
  }

  /// Each provisional INPUT buffer whose value a later-planned task wrote
  /// (a relation built in the function, a message input computed there):
  /// its readers read the producer's buffer instead, after the producer.
  void stitchProducers() {
    std::set<std::string> dropped;
    for (auto &[id, v] : provisional) {
      auto it = valueBuffer.find(v.getAsOpaquePointer());
      if (it == valueBuffer.end() || it->second == id || buffer(it->second).writers.empty())
        continue;
      std::string real = it->second;
      for (const std::string &reader : std::vector<std::string>(buffer(id).readers))
        for (Task &t : plan.tasks) {
          if (t.id != reader)
            continue;
          std::replace(t.reads.begin(), t.reads.end(), id, real);
          use(t, real, /*write=*/false);
        }
      dropped.insert(id);
    }
    if (dropped.empty())
      return;
    std::vector<Buffer> kept;
    for (Buffer &b : plan.buffers)
      if (!dropped.count(b.id))
        kept.push_back(std::move(b));
    plan.buffers = std::move(kept);
    bufferIndex.clear();
    for (size_t i = 0; i < plan.buffers.size(); ++i)
      bufferIndex[plan.buffers[i].id] = i;
  }
};

struct PendingTask {
  size_t index; // into plan.tasks
  gf_task::TaskKind kind;
  std::vector<std::string> reads; // logical field names
  gf_task::PartitionOp partition;
};

struct PartitionFacts {
  int64_t parts = 1, owned = -1, ghosts = -1;
  gf::RelationOp relation;
};

class FunctionImporter {
public:
  FunctionImporter(Builder &b, func::FuncOp fn) : b(b), fn(fn), name(fn.getSymName().str()) {}

  bool run() {
    for (Operation &op : fn.getBody().front()) {
      bool ok = llvm::TypeSwitch<Operation *, bool>(&op)
                    .Case([&](gf::RelationOp r) { return relations.push_back(r), true; })
                    .Case([&](gf_task::PartitionOp p) { return partition(p), true; })
                    .Case([&](gf_storage::InstanceOp i) {
                      return instances[i.getResult().getAsOpaquePointer()] = i, true;
                    })
                    .Case([&](gf_task::HaloPackOp h) {
                      return halo(h, "halo-pack", h.getField(), h.getBytes(), "", h.getSource(), {}, {}), true;
                    })
                    .Case([&](gf_task::HaloExchangeOp h) {
                      return halo(h, "halo-exchange", "", h.getBytes(), h.getGroup(), h.getSend(), {},
                                  h.getReady()),
                             true;
                    })
                    .Case([&](gf_task::HaloUnpackOp h) {
                      return halo(h, "halo-unpack", h.getField(), -1, "", h.getReceive(), h.getGhosts(),
                                  h.getReady()),
                             true;
                    })
                    .Case([&](gf_task::LaunchOp l) { return launch(l), true; })
                    .Case([&](gf_storage::JoinOp j) {
                      std::vector<std::string> all;
                      for (Value e : j.getEvents())
                        for (const std::string &t : b.event[e.getAsOpaquePointer()])
                          all.push_back(t);
                      b.event[j.getDone().getAsOpaquePointer()] = all;
                      return true;
                    })
                    .Case([&](gf_kernel::LaunchOp k) { return kernel(k); })
                    .Default([](Operation *) { return true; });
      if (!ok)
        return false;
    }
    return true;
  }

private:
  Builder &b;
  func::FuncOp fn;
  std::string name;
  std::vector<gf::RelationOp> relations;
  std::map<void *, gf_storage::InstanceOp> instances;
  std::map<Operation *, PartitionFacts> partitions;
  std::vector<PendingTask> pending;
  std::vector<size_t> pendingHalo; // halo task indices of the next kernel
  std::map<void *, std::string> haloBuffer; // halo_buffer value -> buffer id
  int kernelCount = 0;

  std::string prefix() const { return "task." + name + ".k" + std::to_string(kernelCount); }

  void partition(gf_task::PartitionOp op) {
    PartitionFacts f;
    f.relation = op.getRelation().getDefiningOp<gf::RelationOp>();
    ArrayRef<int64_t> mesh = op.getMeshShape();
    int64_t axis = op.getMeshAxis();
    if (axis >= 0 && axis < int64_t(mesh.size())) {
      f.parts = mesh[axis];
      int64_t all = 1;
      for (int64_t m : mesh)
        all *= m;
      // Every mesh position is a rank; ranks off the partition axis hold
      // replicas of the same part.
      b.ranks = std::max(b.ranks, all);
      b.plan.partitioning = {op.getScheme().str(), std::vector<int64_t>(mesh.begin(), mesh.end()), axis, f.parts};
    }
    f.owned = op.getOwnedEntities();
    f.ghosts = op.getGhostEntities();
    partitions[op] = f;
  }

  /// Storage instances are the buffers halo tasks touch: "local" is the
  /// rank's own share of the field (read by pack and the kernel), "ghost"
  /// the copies of remote values (written by unpack, read by the boundary).
  std::string instanceBuffer(Value inst) {
    auto it = b.valueBuffer.find(inst.getAsOpaquePointer());
    if (it != b.valueBuffer.end())
      return it->second;
    gf_storage::InstanceOp op = instances.at(inst.getAsOpaquePointer());
    auto region = op.getRegion().getDefiningOp<gf_storage::RegionOp>();
    std::string field = region.getLogicalId().str();
    std::string part = op.getDevice().str();
    Value tensor = region.getValue();
    int64_t cap = op.getCapacityBytes();
    // A relation sized at run time: the facts are per source entity (as a
    // kernel's are per destination), one entity's bytes.
    bool runTime = cap < 0;
    if (runTime)
      cap = entityBytes(tensor.getType());
    Buffer buf;
    buf.id = "buf." + name + "." + field + "." + part;
    buf.name = field + " (" + part + ")";
    buf.dtype = dtypeOf(tensor.getType());
    buf.storage = op.getExternal() ? StorageClass::External : StorageClass::Transient;
    Operation *partOp = nullptr;
    for (auto &[p, f] : partitions)
      partOp = p;
    bool exactGhosts = partOp && partitions[partOp].ghosts >= 0;
    if (part == "ghost") {
      buf.role = BufferRole::Communication;
      buf.bytes = exactGhosts ? Quantity::exact(cap) : Quantity{0, cap};
      if (runTime) {
        buf.boundSemantic = "halo_ghost_upper_bound";
        buf.boundDerivation = "sized at run time from the partition; per source entity: at most one "
                              "ghost of " + std::to_string(cap) + " B";
      } else if (!exactGhosts) {
        buf.boundSemantic = "halo_ghost_upper_bound";
        buf.boundDerivation = "min(num_src - owned_src, owned_dst x degree_max^depth) ghost "
                              "entities x " + std::to_string(entityBytes(tensor.getType())) + " B = " +
                              std::to_string(cap) + " B (gf_storage.instance capacity_bytes)";
      }
    } else {
      // The owned share of a src field is the kernel's input too: the
      // same buffer the launch reads.
      buf.role = BufferRole::Input;
      buf.storage = StorageClass::External;
      buf.bytes = Quantity::exact(cap);
    }
    std::string id = b.addBuffer(std::move(buf));
    b.valueBuffer[inst.getAsOpaquePointer()] = id;
    if (part == "local")
      b.valueBuffer[tensor.getAsOpaquePointer()] = id;
    return id;
  }

  /// A halo task: `source` is the packed instance (pack) or the halo
  /// buffer it reads (exchange, unpack), `ghosts` the instance unpack
  /// writes, `ready` the event it waits for.
  void halo(Operation *op, const std::string &kind, StringRef fieldName, int64_t bytes, StringRef group,
            Value source, Value ghosts, Value ready) {
    std::string field = fieldName.str();
    Task t;
    t.kind = kind;
    Value events[1] = {ready};
    std::string in, out;
    if (kind == "halo-pack") {
      in = instanceBuffer(source);
      field = b.buffer(in).name.substr(0, b.buffer(in).name.find(' '));
    } else if (kind == "halo-exchange") {
      in = haloBuffer.at(source.getAsOpaquePointer());
      field = b.buffer(in).name.substr(0, b.buffer(in).name.find(' '));
    } else {
      in = haloBuffer.at(source.getAsOpaquePointer());
      out = instanceBuffer(ghosts);
      bytes = b.buffer(out).bytes.upper;
    }
    // Sized at run time (-1): per source entity, like the instances.
    bool runTime = bytes < 0;
    if (runTime)
      bytes = std::max<int64_t>(1, b.buffer(in).bytes.upper);
    t.id = prefix() + "." + kind + "." + field;
    t.name = name + ": " + kind + " of `" + field + "`";
    if (kind != "halo-unpack") {
      Buffer buf;
      buf.id = "buf." + name + "." + field + (kind == "halo-pack" ? ".halo-send" : ".halo-recv");
      buf.name = field + (kind == "halo-pack" ? " (halo send)" : " (halo receive)");
      buf.dtype = b.buffer(in).dtype;
      buf.role = BufferRole::Communication;
      buf.storage = StorageClass::Transient;
      Quantity q = b.buffer(in).bytes.isExact() && kind == "halo-exchange"
                       ? b.buffer(in).bytes
                       : Quantity{0, bytes};
      buf.bytes = q;
      if (!q.isExact()) {
        buf.boundSemantic = "halo_ghost_upper_bound";
        buf.boundDerivation = runTime ? "sized at run time from the partition; per source entity: at most "
                                        "one row of " + std::to_string(bytes) + " B"
                                      : "the ghost entities other ranks may request, bounded like the ghost "
                                        "instance: " + std::to_string(bytes) + " B (halo op `bytes`)";
      }
      out = b.addBuffer(std::move(buf));
      haloBuffer[op->getResult(0).getAsOpaquePointer()] = out;
    }
    Quantity moved = b.buffer(out).bytes;
    t.facts.readBytes = moved;
    t.facts.writeBytes = moved;
    t.facts.messageBytes = kind == "halo-exchange" ? moved : Quantity{};
    int64_t elem = std::max<int64_t>(1, entityBytesOf(b.buffer(out).dtype));
    t.facts.messages = {moved.lower / elem, moved.upper / elem};
    t.facts.ops = {};
    t.facts.derivation = kind == "halo-exchange"
                             ? "sends and receives the packed ghost values: bytes = halo op `bytes`"
                             : "copies each ghost value once: read = write = buffer size";
    finalizeFacts(t.facts, t.facts.messages.upper, t.facts.messages.upper);
    t.resources.engineClass = kind == "halo-exchange" ? "communication" : "copy";
    t.resources.parallelism = t.facts.messages;
    t.resources.memoryBytes = moved + moved;
    t.resources.dtypes = {b.buffer(out).dtype};
    t.resources.collective = kind == "halo-exchange" ? "halo-exchange" : "";
    if (kind == "halo-exchange")
      t.alternatives = {{"collective.halo-exchange." + group.str(), {"collective.all-to-all"}}};
    else
      t.alternatives = {{"generated.gather-scatter", {"engine.copy"}}};
    t.provenance = {op->getName().getStringRef().str(), locString(op->getLoc()),
                    {"func:" + name, opAt(op)}};
    Task &added = b.addTask(std::move(t), op);
    b.use(added, in, false);
    b.use(added, out, true);
    if (events[0])
      b.dependOnEvents(added, ValueRange(events));
    b.event[op->getResult(op->getNumResults() - 1).getAsOpaquePointer()] = {added.id};
    pendingHalo.push_back(b.plan.tasks.size() - 1);
    if (kind == "halo-exchange" &&
        std::find(b.plan.requirements.collectives.begin(), b.plan.requirements.collectives.end(),
                  "halo-exchange") == b.plan.requirements.collectives.end())
      b.plan.requirements.collectives.push_back("halo-exchange");
  }

  static int64_t entityBytesOf(const std::string &dtype) {
    if (dtype == "f64" || dtype == "i64") return 8;
    if (dtype == "f16" || dtype == "bf16" || dtype == "i16") return 2;
    if (dtype == "i8" || dtype == "i1") return 1;
    return 4;
  }

  void launch(gf_task::LaunchOp op) {
    Task t;
    gf_task::TaskKind kind = op.getTaskKindEnum();
    std::string kindName = gf_task::stringifyTaskKind(kind).str();
    t.id = prefix() + "." + kindName;
    t.kind = "compute";
    t.name = name + ": " + kindName + " rows of kernel " + std::to_string(kernelCount);
    t.provenance = {op->getName().getStringRef().str(), locString(op->getLoc()), {}};
    Task &added = b.addTask(std::move(t), op);
    b.dependOnEvents(added, op.getDependencies());
    b.event[op.getDone().getAsOpaquePointer()] = {added.id};
    std::vector<std::string> reads;
    for (Attribute a : op.getReads())
      reads.push_back(cast<StringAttr>(a).str());
    pending.push_back({b.plan.tasks.size() - 1, kind, std::move(reads),
                       op.getPartition() ? op.getPartition().getDefiningOp<gf_task::PartitionOp>()
                                         : gf_task::PartitionOp()});
  }

  gf::RelationOp relationOf(gf_kernel::LaunchOp k) {
    for (const PendingTask &p : pending)
      if (p.partition)
        return partitions[p.partition].relation;
    // Unplanned: the closest earlier relation over the same topology.
    gf::RelationOp found;
    for (gf::RelationOp r : relations) {
      if (r.getNumDst() != k.getNumRows() || r.getTopology().size() != k.getTopology().size())
        continue;
      if (llvm::equal(r.getTopology(), k.getTopology()))
        found = r;
    }
    return found;
  }

  bool kernel(gf_kernel::LaunchOp k) {
    Operation *op = k;
    gf::RelationOp relOp = relationOf(k);
    if (!relOp) {
      b.diags.push_back({"taskir.relation", "", opAt(op) + ": kernel reads no gf.relation in `" +
                                                   name + "`; its work cannot be bounded"});
      return false;
    }
    RelationFacts rel = relationFacts(relOp);
    bool planned = op->hasAttr("gf_task.planned") && !pending.empty();
    PartitionFacts pf;
    if (planned && pending.front().partition)
      pf = partitions[pending.front().partition];
    int64_t parts = planned ? pf.parts : 1;
    int64_t rows = planned && pf.owned >= 0 ? pf.owned : k.getNumRows();
    // Sizes known only at run time (a relation bound from CSR inputs of an
    // entry): the facts are per destination and per source (each taken as 1).
    bool dynamicSizes = rows < 0 || rel.numSrc < 0;
    if (rows < 0)
      rows = 1;
    if (rel.numSrc < 0)
      rel.numSrc = 1;
    int64_t ownedSrc = (rel.numSrc + parts - 1) / parts;
    // Edges of this rank: see the file header.
    Quantity edges;
    std::string edgeRule; // set where the realization decides the pairs exactly
    // Exact where the realization decides the pairs: every source (dense),
    // sources j <= i for destination i (triangular: N(N+1)/2 over N rows,
    // fewer sources clip each row), the k nearest (knn: rows x k).
    if (rel.realization == gf::Realization::Dense)
      edges = Quantity::exact(rows * rel.numSrc);
    else if (rel.realization == gf::Realization::Triangular && !dynamicSizes && parts == 1) {
      // Rows i < S see i + 1 sources, the rest all S: in 128 bits, then
      // clamped (no real relation comes near).
      __int128 r = rows, src = rel.numSrc, m = std::min(r, src);
      __int128 pairs = m * (m + 1) / 2 + (r - m) * src;
      edges = Quantity::exact(int64_t(std::min<__int128>(pairs, INT64_MAX / 16)));
      edgeRule = "sources j <= i (triangular: N(N+1)/2 for N rows and sources)";
    } else if (rel.realization == gf::Realization::Knn && rel.k >= 0) {
      edges = Quantity::exact(rows * std::min(rel.k, rel.numSrc));
      edgeRule = "rows x k = " + std::to_string(rows) + " x " + std::to_string(std::min(rel.k, rel.numSrc)) +
                 " (knn)";
    }
    else if (rel.degreeMax >= 0)
      edges = {rows * std::max<int64_t>(rel.degreeMin, 0), rows * rel.degreeMax};
    else
      edges = {0, rows * rel.numSrc};

    // Reducer ops per message (lift + combine) and per row (finalize).
    int64_t bodyOps = countOps(op->getRegion(0));
    int64_t perMessage = bodyOps, perRow = 0, messageBytes = 4;
    std::string reducerName;
    if (ArrayAttr reducers = k.getReducers(); !reducers.empty()) {
      auto sym = cast<FlatSymbolRefAttr>(reducers[0]);
      reducerName = sym.getValue().str();
      if (auto red = SymbolTable::lookupNearestSymbolFrom<gf::ReducerOp>(op, sym)) {
        perMessage += countOps(red.getLift()) + countOps(red.getCombine());
        perRow += countOps(red.getFinalize());
        messageBytes = 0;
        for (Attribute a : red.getMessageTypes())
          messageBytes +=
              entityBytes(RankedTensorType::get({ShapedType::kDynamic}, cast<TypeAttr>(a).getValue()));
      }
    }

    // Buffers the kernel touches.
    std::vector<std::string> topo;
    int ti = 0;
    for (Value v : k.getTopology()) {
      bool csr = k.getTraversalKind() == gf::Traversal::CsrRow;
      bool offsets = csr && ti == 0;
      std::string nm = csr ? (ti == 0 ? "row_ptr" : "col_idx") : "neighbors" + std::to_string(ti);
      int64_t eb = entityBytes(v.getType());
      topo.push_back(b.bufferFor(v, name, nm, offsets ? Quantity::exact((rows + 1) * eb) : edges * eb));
      ++ti;
    }
    auto strings = [](ArrayAttr a) {
      std::vector<std::string> out;
      for (Attribute s : a)
        out.push_back(cast<StringAttr>(s).str());
      return out;
    };
    std::vector<std::string> roles = strings(k.getInputRoles()), names = strings(k.getInputNames());
    struct In { std::string buffer, role, name; int64_t eb; };
    std::vector<In> ins;
    unsigned i = 0;
    for (Value v : k.getInputs()) {
      std::string role = i < roles.size() ? roles[i] : "src";
      std::string nm = i < names.size() ? names[i] : "in" + std::to_string(i);
      int64_t eb = entityBytes(v.getType());
      Quantity bytes = role == "edge" ? edges * eb
                       : role == "dst" ? Quantity::exact(rows * eb)
                                       : Quantity::exact(ownedSrc * eb);
      ins.push_back({b.bufferFor(v, name, nm, bytes), role, nm, eb});
      ++i;
    }
    std::vector<std::string> outs;
    for (unsigned r = 0; r < op->getNumResults(); ++r) {
      Value res = op->getResult(r);
      Buffer buf;
      std::string nm = op->getNumResults() == 1 ? "out" : "out" + std::to_string(r);
      buf.id = "buf." + name + ".k" + std::to_string(kernelCount) + "." + nm;
      buf.name = nm;
      buf.dtype = dtypeOf(res.getType());
      bool returned = llvm::any_of(res.getUsers(), [](Operation *u) { return isa<func::ReturnOp>(u); });
      buf.role = returned ? BufferRole::Output : BufferRole::Intermediate;
      buf.storage = returned ? StorageClass::External : StorageClass::Transient;
      buf.bytes = Quantity::exact(rows * entityBytes(res.getType()));
      outs.push_back(b.addBuffer(std::move(buf)));
      b.valueBuffer[res.getAsOpaquePointer()] = outs.back();
    }

    std::vector<PendingTask> tasks = pending;
    if (!planned) {
      Task t;
      t.id = prefix() + ".whole";
      t.kind = "compute";
      t.name = name + ": kernel " + std::to_string(kernelCount);
      t.provenance = {op->getName().getStringRef().str(), locString(op->getLoc()), {}};
      b.addTask(std::move(t), op);
      tasks = {{b.plan.tasks.size() - 1, gf_task::TaskKind::Whole, {}, nullptr}};
    }
    for (const PendingTask &pt : tasks) {
      Task &t = b.plan.tasks[pt.index];
      bool whole = pt.kind == gf_task::TaskKind::Whole;
      Quantity r = whole || parts == 1 ? Quantity::exact(rows) : Quantity{0, rows};
      Quantity e = whole || parts == 1 ? edges : Quantity{0, edges.upper};
      Quantity rd = (r + Quantity::exact(1)) * 8 /* row offsets */;
      Quantity reads = topo.size() == 2 ? rd + e * 8 : Quantity{};
      for (const In &in : ins)
        reads = reads + (in.role == "dst" ? r * in.eb : e * in.eb);
      t.facts.ops = e * perMessage + r * perRow;
      t.facts.readBytes = reads;
      t.facts.writeBytes = r * std::max<int64_t>(1, entityBytes(op->getResult(0).getType()));
      t.facts.messageBytes = e * messageBytes;
      t.facts.messages = e;
      t.facts.derivation =
          "rows " + (r.isExact() ? std::to_string(r.upper) : "[0, " + std::to_string(rows) + "]") +
          " of " + std::to_string(rows) + " owned; edges " + (whole || parts == 1 ? "[" : "[0 | ") +
          std::to_string(edges.lower) + ", " + std::to_string(edges.upper) + "] = " +
          (edgeRule.empty() ? "rows x degree [" + std::to_string(rel.degreeMin) + ", " +
                                  std::to_string(rel.degreeMax) + "]"
                            : edgeRule) +
          "; ops = edges x " +
          std::to_string(perMessage) + " (body " + std::to_string(bodyOps) + " + reducer lift/combine) + rows x " +
          std::to_string(perRow) + " (finalize); bytes from element types" +
          (dynamicSizes ? "; relation sizes known only at run time: per destination and source (each 1)" : "");
      // Distinct elements read at the upper bounds: offsets, one per edge
      // for columns and edge fields, owned + ghost sources, rows of dst.
      int64_t distinct = (r.upper + 1) + 2 * e.upper + std::min(rel.numSrc, e.upper) + r.upper;
      int64_t elementReads = (r.upper + 1) + 2 * e.upper + e.upper + r.upper;
      finalizeFacts(t.facts, distinct, elementReads);
      t.resources.engineClass = "compute";
      t.resources.parallelism = r;
      t.resources.dtypes.clear();
      for (const In &in : ins)
        if (std::find(t.resources.dtypes.begin(), t.resources.dtypes.end(), b.buffer(in.buffer).dtype) ==
            t.resources.dtypes.end())
          t.resources.dtypes.push_back(b.buffer(in.buffer).dtype);
      KernelInfo ki;
      ki.function = name;
      ki.traversal = k.getTraversal().str();
      ki.scheduleKind = k.getScheduleKind().value_or("").str();
      ki.rows = rows;
      ki.blockRows = k.getBlockRows().value_or(0);
      ki.blockNeighbors = k.getBlockNeighbors().value_or(0);
      ki.numWarps = k.getNumWarps().value_or(0);
      ki.pipelineStages = k.getPipelineStages().value_or(0);
      ki.reducer = reducerName;
      ki.deterministic = k.getDeterministic();
      t.kernel = ki;
      // Alternatives by capability class: the generated kernel always; the
      // sum-of-products over CSR is SpMV/SpMM, over a dense relation GEMM.
      t.alternatives = {{"generated." + ki.traversal + (ki.scheduleKind.empty() ? "" : "." + ki.scheduleKind),
                         {"codegen." + ki.traversal}}};
      bool sumOfProducts = reducerName == "sum" && bodyOps == 1;
      gf::Traversal traversal = k.getTraversalKind();
      if (sumOfProducts && traversal == gf::Traversal::CsrRow)
        t.alternatives.push_back({"library-class.spmv-csr", {"library-class.sparse"}});
      if (sumOfProducts && traversal == gf::Traversal::DenseRow)
        t.alternatives.push_back({"library-class.gemm", {"library-class.dense"}});
      t.provenance.lineage = {"func:" + name, opAt(op)};
      if (!whole)
        t.provenance.lineage.push_back(t.provenance.op + "@" + t.provenance.location);
      // Buffers: topology and edge/dst inputs, the owned src share, ghosts
      // for boundary rows, results, and the conservative workspace.
      for (const std::string &tb : topo)
        b.use(t, tb, false);
      for (const In &in : ins) {
        b.use(t, in.buffer, false);
        if (pt.kind == gf_task::TaskKind::Boundary && in.role == "src")
          for (Buffer &gb : b.plan.buffers)
            if (gb.role == BufferRole::Communication && gb.name == in.name + " (ghost)")
              b.use(t, gb.id, false);
      }
      for (const std::string &o : outs)
        b.use(t, o, true);
      Buffer ws;
      ws.id = "buf." + t.id.substr(5) + ".workspace";
      ws.name = t.name + " workspace";
      ws.dtype = "f32";
      ws.role = BufferRole::Workspace;
      ws.storage = StorageClass::Transient;
      ws.bytes = {0, e.upper * messageBytes};
      ws.boundSemantic = "unfused_message_materialization_upper_bound";
      ws.boundDerivation = "an implementation that materializes every message before reducing: " +
                           std::to_string(e.upper) + " edges x " + std::to_string(messageBytes) +
                           " B; a fused kernel reduces in registers and needs none";
      std::string wid = b.addBuffer(std::move(ws));
      b.use(t, wid, true);
      b.use(t, wid, false);
      Quantity mem;
      auto add = [&](const Quantity &q) { mem = {satAdd(mem.lower, q.lower), satAdd(mem.upper, q.upper)}; };
      for (const std::string &id : t.reads)
        add(b.buffer(id).bytes);
      for (const std::string &id : t.writes)
        if (std::find(t.reads.begin(), t.reads.end(), id) == t.reads.end())
          add(b.buffer(id).bytes);
      t.resources.memoryBytes = mem;
    }
    // Interior rows overlap the halo exchange: no path joins them.
    for (const PendingTask &pt : tasks)
      if (pt.kind == gf_task::TaskKind::Interior && !pendingHalo.empty()) {
        ConcurrencyGroup g;
        g.id = "group." + b.plan.tasks[pt.index].id.substr(5) + ".overlap-halo";
        g.tasks = {b.plan.tasks[pt.index].id};
        for (size_t h : pendingHalo)
          if (b.plan.tasks[h].kind == "halo-exchange")
            g.tasks.push_back(b.plan.tasks[h].id);
        g.reason = "interior rows read no ghost values, so they run while the halo is exchanged";
        if (g.tasks.size() > 1)
          b.plan.concurrencyGroups.push_back(std::move(g));
      }
    pending.clear();
    pendingHalo.clear();
    ++kernelCount;
    return true;
  }
};

/// Elements of a shaped type, a dynamic dim counted as 1 (`dyn` is set).
int64_t elementsOf(Type t, bool &dyn) {
  auto shaped = dyn_cast<ShapedType>(t);
  if (!shaped)
    return 1;
  int64_t n = 1;
  for (int64_t d : shaped.getShape()) {
    if (ShapedType::isDynamic(d))
      dyn = true;
    else
      n = satMul(n, d);
  }
  return n;
}
int64_t elementBytes(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    t = shaped.getElementType();
  if (isa<IndexType>(t))
    return 8;
  return t.isIntOrFloat() ? std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8) : 8;
}
/// Bytes of a value's buffer (its static dims), in checked arithmetic:
/// nullopt when the size overflows 64-bit integers (a -D value too large),
/// which would otherwise wrap to a small or negative size and offset.
std::optional<int64_t> bufferBytes(Type t, bool &dyn) {
  int64_t n = elementBytes(t);
  if (auto shaped = dyn_cast<ShapedType>(t))
    for (int64_t d : shaped.getShape()) {
      if (ShapedType::isDynamic(d))
        dyn = true;
      else if (d < 0 || __builtin_mul_overflow(n, d, &n))
        return std::nullopt;
    }
  return n;
}
std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

/// The relation builder's call (-gf-build-relations:
/// linnet/Dialect/Gf/Transforms/RelationBuilder.h) as a compute task: it
/// reads the positions and writes the row offsets and column indices that
/// the reductions over the relation read. A kNN relation's edges are exact:
/// every row lists min(k, candidates) sources (N, or N - 1 without self
/// pairs). A radius relation's are bounded by M x min(k, N). The ops are
/// bounded either way: the grid visits between one cell and every source
/// per destination, so they lie in [M x min(k, N), M x N x (3 D + 1)] (a
/// squared distance is 3 D + 1 ops).
template <typename AddTask>
void relationBuildTask(func::CallOp call, AddTask &addTask) {
  auto tensorOf = [](Value v) -> Value {
    if (auto c = v.getDefiningOp<memref::CastOp>())
      v = c.getSource();
    if (auto m = v.getDefiningOp<bufferization::ToMemrefOp>())
      return m.getTensor();
    for (Operation *u : v.getUsers())
      if (auto t = dyn_cast<bufferization::ToTensorOp>(u))
        return t.getResult();
    return {};
  };
  std::vector<Value> ins, outs;
  for (unsigned i = gf::kBuildPosDst; i <= gf::kBuildColIdx && i < call.getNumOperands(); ++i)
    if (Value t = tensorOf(call.getOperand(i)))
      (i <= gf::kBuildPosSrc ? ins : outs).push_back(t);
  if (call.getNumOperands() != gf::kBuildRadius + 1 || (ins.size() != 2 && ins.size() != 1) || outs.size() != 2)
    return;
  if (ins.size() == 1) // one positions tensor: destinations are the sources
    ins.push_back(ins[0]);
  auto extent = [](Value t, unsigned d) {
    auto tt = cast<RankedTensorType>(t.getType());
    return tt.isDynamicDim(d) ? int64_t(1) : tt.getDimSize(d);
  };
  bool dyn = false;
  int64_t m = extent(ins[0], 0), n = extent(ins[1], 0), d = extent(ins[0], 1);
  std::optional<int64_t> kc = getConstantIntValue(call.getOperand(gf::kBuildK));
  int64_t k = kc ? std::max<int64_t>(*kc, 0) : 1;
  for (Value v : {ins[0], ins[1], outs[0], outs[1]})
    dyn |= !cast<RankedTensorType>(v.getType()).hasStaticShape();
  std::optional<int64_t> kind = getConstantIntValue(call.getOperand(gf::kBuildKind));
  std::optional<int64_t> self = getConstantIntValue(call.getOperand(gf::kBuildExcludeSelf));
  bool knn = kind && *kind == 0;
  std::string what = knn ? "knn" : "radius";
  int64_t candidates = self && *self ? std::max<int64_t>(n - 1, 0) : n;
  int64_t edges = satMul(m, std::min(k, candidates));
  WorkloadFacts f;
  f.ops = {satMul(m, std::min(k, n)), satMul(satMul(m, n), satAdd(satMul(3, d), 1))};
  f.readBytes = Quantity::exact(satMul(satAdd(m, n), satMul(d, 8)));
  int64_t offsets = satMul(m + 1, 8);
  f.writeBytes = knn && kc && self ? Quantity::exact(satAdd(offsets, satMul(edges, 8)))
                                   : Quantity{offsets, satAdd(offsets, satMul(edges, 8))};
  f.derivation = what + " relation built from " + std::to_string(m) + " destination and " + std::to_string(n) +
                 " source positions of " + std::to_string(d) + " axes (f64), " +
                 (knn ? "exactly min(k, candidates) = " + std::to_string(std::min(k, candidates))
                      : "at most " + std::to_string(std::min(k, candidates))) +
                 " neighbours each: ops between M x min(k, N) and M x N x (3 D + 1) (a uniform grid visits from one "
                 "cell to every source), bytes = positions read; offsets and " +
                 (knn ? "M x min(k, candidates)" : "up to M x min(k, candidates)") + " indices written" +
                 (dyn ? "; dynamic dims (entry generics) counted as 1: facts per unit of them" : "");
  finalizeFacts(f, satAdd(m, n), satMul(m, n));
  addTask(call.getOperation(), "relation-build " + what, std::move(f), ins, outs, m, false);
}

/// The tensor whose buffer `v` is: a slice, reshape or cast of a tensor is
/// a view of its buffer, and an insertion updates its destination's in
/// place (what bufferization makes of them), so a task reading any of them
/// reads the buffer of the task that produced the root.
static Value bufferRoot(Value v) {
  while (Operation *d = v.getDefiningOp()) {
    if (auto s = dyn_cast<tensor::ExtractSliceOp>(d))
      v = s.getSource();
    else if (auto e = dyn_cast<tensor::ExpandShapeOp>(d))
      v = e.getSrc();
    else if (auto c = dyn_cast<tensor::CollapseShapeOp>(d))
      v = c.getSrc();
    else if (auto c = dyn_cast<tensor::CastOp>(d))
      v = c.getSource();
    else if (auto r = dyn_cast<tensor::ReshapeOp>(d))
      v = r.getSource();
    else if (auto i = dyn_cast<tensor::InsertSliceOp>(d))
      v = i.getDest();
    else
      break;
  }
  return v;
}

/// A function imported from a plan (func/linalg/tensor/scf on tensors):
/// every linalg op (a contraction, a reduction, elementwise work, a copy or
/// a fill) is a compute task with exact work facts (loop trip counts x body
/// ops; 2·M·N·K for a matmul), in program order; a function with neither a
/// linalg op nor a relation kernel (`hasKernel`) is a single "whole" task.
/// Tasks of one function run in program order (state reads and writes are
/// ordered), so each depends on the previous one.
void importLinalgFunction(Builder &b, func::FuncOp fn, bool hasKernel) {
  std::string name = fn.getSymName().str();
  std::string prev;
  int count = 0;
  auto argBuffer = [&](Value v) -> std::string {
    auto it = b.valueBuffer.find(v.getAsOpaquePointer());
    if (it != b.valueBuffer.end())
      return it->second;
    v = bufferRoot(v);
    it = b.valueBuffer.find(v.getAsOpaquePointer());
    if (it != b.valueBuffer.end())
      return it->second;
    if (std::string m = b.modelTensorBuffer(v); !m.empty())
      return m;
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner()->getParentOp() != fn.getOperation())
      return "";
    bool dyn = false;
    std::optional<int64_t> bytes = bufferBytes(v.getType(), dyn);
    if (!bytes)
      b.diags.push_back({"plan.overflow", "/buffers",
                         "argument " + std::to_string(arg.getArgNumber()) + " of `" + name + "` (" +
                             locString(arg.getLoc()) + ") has type " + typeString(v.getType()) +
                             ", whose size in bytes overflows 64-bit integers"});
    return b.bufferFor(v, name, "arg" + std::to_string(arg.getArgNumber()), Quantity::exact(bytes.value_or(0)));
  };
  auto addTask = [&](Operation *op, const std::string &kindName, WorkloadFacts facts,
                     const std::vector<Value> &ins, const std::vector<Value> &outs, int64_t parallel,
                     bool gemm) {
    Task t;
    t.id = "task." + name + ".l" + std::to_string(count++);
    t.name = name + ": " + kindName;
    t.kind = "compute";
    t.facts = std::move(facts);
    t.resources.engineClass = "compute";
    t.resources.parallelism = Quantity::exact(std::max<int64_t>(1, parallel));
    // The floating-point dtypes it computes in (index and integer
    // bookkeeping, e.g. CSR offsets, needs no implementation variant).
    for (const std::vector<Value> *vs : {&outs, &ins})
      for (Value v : *vs) {
        std::string dt = dtypeOf(v.getType());
        if (dt[0] != 'i' && std::find(t.resources.dtypes.begin(), t.resources.dtypes.end(), dt) ==
                                t.resources.dtypes.end())
          t.resources.dtypes.push_back(dt);
      }
    t.alternatives = {{"generated.dense-row", {"codegen.dense-row"}}};
    if (gemm)
      t.alternatives.push_back({"library-class.gemm", {"library-class.dense"}});
    t.provenance = {op->getName().getStringRef().str(), locString(op->getLoc()), {}};
    t.provenance.lineage = {"func:" + name, opAt(op)};
    if (!prev.empty())
      t.dependsOn.push_back(prev);
    Task &added = b.addTask(std::move(t), op);
    std::string id = added.id;
    // Reads: the operands, and the tensors its body reads from above
    // (element code indexes a tensor it captures, `x[b, d]` in a
    // comprehension): each keeps its producer's buffer live until here.
    // The work facts count operands only; a captured tensor may be read in
    // part (a window of a cache).
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    std::vector<Value> reads = ins;
    for (Value v : captured)
      if (isa<RankedTensorType>(v.getType()) && !llvm::is_contained(reads, v))
        reads.push_back(v);
    for (Value v : reads)
      if (std::string bid = argBuffer(v); !bid.empty())
        b.use(b.plan.tasks.back(), bid, false);
    int r = 0;
    for (Value v : outs) {
      bool dyn = false;
      Buffer out;
      out.id = "buf." + id.substr(5) + ".out" + std::to_string(r++);
      out.name = b.plan.tasks.back().name + " result";
      out.dtype = dtypeOf(v.getType());
      out.role = BufferRole::Intermediate;
      out.storage = StorageClass::Transient;
      std::optional<int64_t> bytes = bufferBytes(v.getType(), dyn);
      if (!bytes)
        b.diags.push_back({"plan.overflow", "/buffers",
                           "buffer `" + out.name + "` (" + locString(op->getLoc()) + ") has type " +
                               typeString(v.getType()) + ", whose size in bytes overflows 64-bit integers"});
      out.bytes = Quantity::exact(bytes.value_or(0));
      std::string bid = b.addBuffer(std::move(out));
      b.valueBuffer[v.getAsOpaquePointer()] = bid;
      b.use(b.plan.tasks.back(), bid, true);
    }
    Task &t2 = b.plan.tasks.back();
    Quantity mem;
    for (const std::vector<std::string> *ids : {&t2.reads, &t2.writes})
      for (const std::string &id : *ids)
        mem = {satAdd(mem.lower, b.buffer(id).bytes.lower), satAdd(mem.upper, b.buffer(id).bytes.upper)};
    t2.resources.memoryBytes = mem;
    prev = id;
  };

  fn.walk([&](Operation *o) {
    if (auto call = dyn_cast<func::CallOp>(o); call && call.getCallee() == gf::kRelationBuilder) {
      relationBuildTask(call, addTask);
      return;
    }
    auto op = dyn_cast<linalg::LinalgOp>(o);
    if (!op)
      return;
    auto iters = op.getIteratorTypesArray();
    bool reduces = std::any_of(iters.begin(), iters.end(),
                               [](utils::IteratorType i) { return i == utils::IteratorType::reduction; });
    bool dyn = false;
    int64_t trips = 1, parallel = 1;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    std::vector<std::string> dims;
    for (size_t i = 0; i < ranges.size(); ++i) {
      int64_t n = ranges[i];
      if (ShapedType::isDynamic(n)) {
        dyn = true;
        n = 1;
      }
      trips = satMul(trips, n);
      if (iters[i] == utils::IteratorType::parallel)
        parallel = satMul(parallel, n);
      dims.push_back(ShapedType::isDynamic(ranges[i]) ? "?" : std::to_string(n));
    }
    // No iteration at all, whatever the run-time extents (an axis of
    // static extent 0): no work, and the lowering folds the op away, so no
    // command of the plan stands for code that does not exist.
    if (llvm::is_contained(ranges, 0))
      return;
    // Arithmetic per iteration (linalg.index and constants are free).
    int64_t bodyOps = 0;
    if (op->getNumRegions())
      op->getRegion(0).walk([&](Operation *o) {
        StringRef d = o->getName().getDialectNamespace();
        if ((d == "arith" || d == "math") && !isa<arith::ConstantOp>(o))
          ++bodyOps;
      });
    bodyOps = std::max<int64_t>(bodyOps, 1);
    bool mulAdd = false;
    if (op->getNumRegions()) {
      // Widening an operand (a half value's exact f32 extension) leaves a
      // product of it a contraction.
      int muls = 0, adds = 0, widenings = 0;
      op->getRegion(0).walk([&](Operation *o) {
        StringRef n = o->getName().getStringRef();
        if (n == "arith.mulf") ++muls;
        if (n == "arith.addf") ++adds;
        if (n == "arith.extf") ++widenings;
      });
      mulAdd = muls == 1 && adds == 1 && bodyOps - widenings == 2;
    }
    std::vector<Value> ins, outs;
    int64_t readBytes = 0, writeBytes = 0, distinct = 0;
    for (OpOperand *in : op.getDpsInputOperands()) {
      ins.push_back(in->get());
      int64_t e = elementsOf(in->get().getType(), dyn);
      readBytes = satAdd(readBytes, satMul(e, elementBytes(in->get().getType())));
      distinct = satAdd(distinct, e);
    }
    for (Value r : op->getResults()) {
      outs.push_back(r);
      writeBytes = satAdd(writeBytes, satMul(elementsOf(r.getType(), dyn), elementBytes(r.getType())));
    }
    WorkloadFacts f;
    f.ops = Quantity::exact(satMul(trips, bodyOps));
    f.readBytes = Quantity::exact(readBytes);
    f.writeBytes = Quantity::exact(writeBytes);
    std::string shape;
    for (const std::string &d : dims)
      shape += (shape.empty() ? "" : "x") + d;
    // Elementwise work (no reduction loop) is planned as well: every
    // linalg op is code in the library, and a task of the plan.
    std::string what = !reduces ? "elementwise" : mulAdd ? "contraction" : "reduction";
    if (!reduces && isa<linalg::CopyOp>(op.getOperation()))
      what = "copy";
    if (!reduces && isa<linalg::FillOp>(op.getOperation()))
      what = "fill";
    f.derivation = what + " over loops " + shape + " = " + std::to_string(trips) + " iterations x " +
                   std::to_string(bodyOps) + " body ops" + (reduces && mulAdd ? " (2·M·N·K)" : "") +
                   "; bytes = operand and result elements x element size" +
                   (dyn ? "; dynamic dims (entry generics) counted as 1: facts per unit of them" : "");
    // A contraction of activations (input 0) by weights (input 1): the
    // parallel loops input 0 indexes and input 1 does not are its rows.
    if (reduces && mulAdd && ins.size() == 2) {
      AffineMap xm = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
      AffineMap wm = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
      int64_t rows = 1;
      bool any = false;
      for (size_t i = 0; i < ranges.size(); ++i)
        if (iters[i] == utils::IteratorType::parallel && xm.isFunctionOfDim(i) && !wm.isFunctionOfDim(i)) {
          any = true;
          rows = ShapedType::isDynamic(ranges[i]) || rows < 0 ? -1 : satMul(rows, ranges[i]);
        }
      if (any) {
        bool wdyn = false;
        int64_t wbytes = satMul(elementsOf(ins[1].getType(), wdyn), elementBytes(ins[1].getType()));
        if (!wdyn)
          f.contraction = WorkloadFacts::Contraction{rows, wbytes};
      }
    }
    finalizeFacts(f, distinct, satMul(trips, int64_t(ins.size())));
    addTask(op, what + " " + shape, std::move(f), ins, outs, parallel,
            reduces && mulAdd && dtypeOf(outs.empty() ? Type() : outs[0].getType()) == "f32");
  });
  if (count == 0 && !hasKernel) {
    // No linalg op and no relation kernel: the function is one task over
    // its arguments.
    std::vector<Value> ins(fn.getArguments().begin(), fn.getArguments().end());
    WorkloadFacts f;
    int64_t ops = 0, readBytes = 0;
    bool dyn = false;
    fn.walk([&](Operation *o) {
      if (o->getDialect() && (o->getDialect()->getNamespace() == "arith" || o->getDialect()->getNamespace() == "math"))
        if (!isa<arith::ConstantOp>(o))
          ++ops;
    });
    for (Value v : ins)
      readBytes = satAdd(readBytes, satMul(elementsOf(v.getType(), dyn), elementBytes(v.getType())));
    f.ops = Quantity::exact(ops);
    f.readBytes = Quantity::exact(readBytes);
    f.writeBytes = Quantity::exact(0);
    f.derivation = "a function without contractions: one task; ops = arithmetic ops in its body "
                   "(loop trip counts not expanded), bytes = its arguments" +
                   std::string(dyn ? "; dynamic dims counted as 1" : "");
    finalizeFacts(f, 0, 0);
    addTask(fn.getOperation(), "whole", std::move(f), ins, {}, 1, false);
  }
}

/// first_use/last_use from the task order (the DAG's topological order).
void computeLifetimes(PortablePlan &p) {
  auto order = topoOrder(p);
  if (!order)
    return;
  std::map<std::string, size_t> pos;
  for (size_t i = 0; i < order->size(); ++i)
    pos[p.tasks[(*order)[i]].id] = i;
  for (Buffer &b : p.buffers) {
    std::vector<std::string> users = b.writers;
    users.insert(users.end(), b.readers.begin(), b.readers.end());
    if (users.empty())
      continue;
    auto cmp = [&](const std::string &a, const std::string &c) { return pos[a] < pos[c]; };
    b.firstUse = *std::min_element(users.begin(), users.end(), cmp);
    b.lastUse = *std::max_element(users.begin(), users.end(), cmp);
  }
}

} // namespace

namespace {
/// The gf tasks of `module` into `b` (buildPortablePlan).
bool buildGfPlan(Builder &b, ModuleOp module, const std::string &sourceFile, const std::string &sourceText) {
  PortablePlan &p = b.plan;
  p.sourceFile = sourceFile;
  p.sourceDigest = "sha256:" + sha256Hex(sourceText);
  p.partitioning = {"single", {}, 0, 1};
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    FunctionImporter imp(b, fn);
    if (!imp.run())
      return false;
  }
  computeLifetimes(p);
  p.requirements.ranks = b.ranks;
  for (const Task &t : p.tasks)
    for (const std::string &d : t.resources.dtypes)
      if (std::find(p.requirements.dtypes.begin(), p.requirements.dtypes.end(), d) ==
          p.requirements.dtypes.end())
        p.requirements.dtypes.push_back(d);
  std::sort(p.requirements.dtypes.begin(), p.requirements.dtypes.end());
  for (const Buffer &buf : p.buffers)
    p.requirements.memoryBytesPerRank = p.requirements.memoryBytesPerRank + buf.bytes;
  std::string stem = sourceFile.substr(sourceFile.find_last_of('/') + 1);
  stem = stem.substr(0, stem.find('.'));
  p.id = "plan." + stem + "." + std::to_string(p.partitioning.parts) + "p";
  p.objectives = {{"obj.latency", "latency", "minimize", 0},
                  {"obj.peak-memory", "peak_memory_bytes", "minimize", 1}};
  p.constraints = {{"con.fits-memory", "memory-capacity", "peak_memory_bytes",
                    p.requirements.memoryBytesPerRank.upper, "obj.peak-memory"},
                   {"con.ranks", "max-ranks", "devices", p.requirements.ranks, ""}};
  if (std::any_of(p.tasks.begin(), p.tasks.end(),
                  [](const Task &t) { return t.kernel && t.kernel->deterministic; }))
    p.constraints.push_back({"con.deterministic", "determinism", "", 1, ""});
  return true;
}

/// How many times one call of its function runs `op`: the product of the
/// trip counts of the loops around it. A loop whose bounds are known only
/// at run time counts once and sets `dynamic`.
/// Execution counts saturate here: far beyond any real program, and no
/// product overflows.
constexpr int64_t kMaxExecutions = int64_t(1) << 40;
int64_t mulSat(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  return a > kMaxExecutions / b ? kMaxExecutions : std::min(a * b, kMaxExecutions);
}

int64_t loopExecutions(Operation *op, bool &dynamic) {
  int64_t n = 1;
  for (Operation *p = op->getParentOp(); p && !isa<func::FuncOp>(p); p = p->getParentOp()) {
    auto trips = [&](Value lb, Value ub, Value step) {
      std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub), st = getConstantIntValue(step);
      if (!l || !u || !st || *st <= 0) {
        dynamic = true;
        return int64_t(1);
      }
      // Bounds are index constants: the span is computed without overflow.
      if (*u <= *l)
        return int64_t(0);
      uint64_t span = uint64_t(*u) - uint64_t(*l);
      return int64_t(std::min<uint64_t>(span / uint64_t(*st) + (span % uint64_t(*st) != 0), kMaxExecutions));
    };
    if (auto f = dyn_cast<scf::ForOp>(p))
      n = mulSat(n, trips(f.getLowerBound(), f.getUpperBound(), f.getStep()));
    else if (auto par = dyn_cast<scf::ParallelOp>(p))
      for (unsigned i = 0; i < par.getNumLoops(); ++i)
        n = mulSat(n, trips(par.getLowerBound()[i], par.getUpperBound()[i], par.getStep()[i]));
    else if (isa<scf::WhileOp>(p))
      dynamic = true;
  }
  return n;
}

/// One phase plan per entry (a public function): the tasks one call of it
/// runs and how many times each (a layer body called once per layer of an
/// unrolled `while` runs once per call), in task order.
void addPhases(Builder &b, ModuleOp module) {
  std::map<std::string, func::FuncOp> fns;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal())
      fns[fn.getSymName().str()] = fn;
  for (auto entry : module.getOps<func::FuncOp>()) {
    if (entry.isExternal() || entry.isPrivate())
      continue;
    // Calls of each function per call of the entry (the call graph is a
    // DAG: linnet has no recursion); a runaway count saturates.
    std::map<std::string, int64_t> calls;
    bool dynamic = false;
    int64_t budget = 1 << 20; // call-graph paths walked: a bound on pathological DAGs
    std::function<void(func::FuncOp, int64_t, int)> visit = [&](func::FuncOp fn, int64_t times, int depth) {
      int64_t &c = calls[fn.getSymName().str()];
      c = std::min(c + times, kMaxExecutions);
      if (depth > 64 || --budget < 0)
        return;
      fn.walk([&](func::CallOp call) {
        auto it = fns.find(call.getCallee().str());
        if (it != fns.end())
          visit(it->second, mulSat(times, loopExecutions(call, dynamic)), depth + 1);
      });
    };
    visit(entry, 1, 0);
    Phase ph;
    ph.entry = entry.getSymName().str();
    ph.id = "phase." + ph.entry;
    for (const Task &t : b.plan.tasks) {
      auto op = b.taskOp.find(t.id);
      if (op == b.taskOp.end() || t.provenance.lineage.empty())
        continue;
      std::string fn = t.provenance.lineage.front().substr(5);
      auto c = calls.find(fn);
      if (c == calls.end())
        continue;
      Operation *from = op->second;
      int64_t n = mulSat(c->second, isa<func::FuncOp>(from) ? 1 : loopExecutions(from, dynamic));
      if (n > 0)
        ph.tasks.push_back({t.id, n, std::min(n, c->second)});
    }
    ph.derivation = "executions per call of `" + ph.entry +
                    "` = calls of the task's function (through the call graph) x the trip counts of the loops "
                    "around it (launches: the calls alone)" +
                    (dynamic ? "; a loop bounded only at run time counts once" : "");
    b.plan.phases.push_back(std::move(ph));
  }
}
} // namespace

std::optional<PortablePlan> buildPortablePlan(ModuleOp module, const std::string &sourceFile,
                                              const std::string &sourceText, Diagnostics &diags) {
  Builder b(diags, module);
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal())
      b.declareModelTensors(fn);
  if (!buildGfPlan(b, module, sourceFile, sourceText))
    return std::nullopt;
  return std::move(b.plan);
}

namespace {
/// Runs the gf pipeline up to task planning on `module` and builds its plan.
std::optional<PortablePlan> lowerAndBuild(ModuleOp module, const std::string &path, const std::string &text,
                                          Diagnostics &diags) {
  PassManager pm(module.getContext());
  pm.addPass(gf::createGfExpandPagedRelations());
  pm.addPass(gf::createGfBuildRelations());
  pm.addPass(gf::createGfLowerDomainToIter());
  pm.addPass(gf::createGfLowerIterToKernel());
  pm.addPass(gf::createGfSelectKernelSchedule());
  pm.addPass(gf::createGfPlanDistributedTasks());
  if (failed(pm.run(module))) {
    diags.push_back({"input.lower", "", "lowering '" + path + "' to Task IR failed"});
    return std::nullopt;
  }
  return buildPortablePlan(module, path, text, diags);
}
} // namespace

std::optional<PortablePlan> buildPortablePlanFromTasks(ModuleOp module, const std::string &sourceFile,
                                                       const std::string &sourceText, Diagnostics &diags,
                                                       bool tagOps) {
  // The gf tasks (relations), then the linalg work of every function; a
  // single partition unless the gf plan partitioned.
  Builder b(diags, module);
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal())
      b.declareModelTensors(fn);
  if (!buildGfPlan(b, module, sourceFile, sourceText))
    return std::nullopt;
  size_t problemsBefore = diags.size();
  b.ranks = b.plan.requirements.ranks;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal()) {
      bool hasGfTask = std::any_of(b.plan.tasks.begin(), b.plan.tasks.end(), [&](const Task &t) {
        return t.kernel && t.kernel->function == fn.getSymName();
      });
      importLinalgFunction(b, fn, hasGfTask);
    }
  b.stitchProducers();
  PortablePlan &p = b.plan;
  computeLifetimes(p);
  p.requirements.dtypes.clear();
  for (const Task &t : p.tasks)
    for (const std::string &d : t.resources.dtypes)
      if (std::find(p.requirements.dtypes.begin(), p.requirements.dtypes.end(), d) ==
          p.requirements.dtypes.end())
        p.requirements.dtypes.push_back(d);
  std::sort(p.requirements.dtypes.begin(), p.requirements.dtypes.end());
  if (diags.size() > problemsBefore)
    return std::nullopt; // a buffer's size overflowed
  p.requirements.memoryBytesPerRank = {};
  for (const Buffer &buf : p.buffers) {
    Quantity &m = p.requirements.memoryBytesPerRank;
    if (__builtin_add_overflow(m.lower, buf.bytes.lower, &m.lower) ||
        __builtin_add_overflow(m.upper, buf.bytes.upper, &m.upper)) {
      diags.push_back({"plan.overflow", "/buffers",
                       "the program's buffers together overflow 64-bit integers (at buffer `" + buf.name + "`)"});
      return std::nullopt;
    }
  }
  for (Constraint &c : p.constraints)
    if (c.kind == "memory-capacity")
      c.bound = p.requirements.memoryBytesPerRank.upper;
  addPhases(b, module);
  if (tagOps)
    for (const auto &[id, op] : b.taskOp)
      op->setAttr("linnet.task", StringAttr::get(module.getContext(), id));
  return std::move(p);
}

namespace {

struct Parsed {
  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
  std::string text;
};
/// MLIR's errors about the input file, as planning diagnostics at their
/// line and column (code "input.mlir").
class InputDiagnostics {
public:
  InputDiagnostics(MLIRContext *ctx, Diagnostics &diags)
      : handler_(ctx, [&diags](mlir::Diagnostic &d) {
          if (d.getSeverity() != DiagnosticSeverity::Error)
            return success();
          planning::Diagnostic out{"input.mlir", "", d.str()};
          if (auto flc = d.getLocation()->findInstanceOf<FileLineColLoc>()) {
            out.line = flc.getLine();
            out.column = flc.getColumn();
          }
          diags.push_back(std::move(out));
          return success();
        }) {}

private:
  ScopedDiagnosticHandler handler_;
};

std::optional<Parsed> parseMlir(const std::string &path, llvm::SourceMgr &sm, Diagnostics &diags) {
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file) {
    diags.push_back({"input.read", "", "cannot read '" + path + "': " + file.getError().message()});
    return std::nullopt;
  }
  Parsed p;
  p.text = (*file)->getBuffer().str();
  DialectRegistry registry;
  registry.insert<gf::GfDialect, gf_iter::GfIterDialect, gf_kernel::GfKernelDialect,
                  gf_task::GfTaskDialect, gf_storage::GfStorageDialect, arith::ArithDialect,
                  func::FuncDialect, math::MathDialect, scf::SCFDialect, tensor::TensorDialect>();
  p.ctx = std::make_unique<MLIRContext>(registry);
  sm.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  InputDiagnostics handler(p.ctx.get(), diags);
  p.module = parseSourceFile<ModuleOp>(sm, p.ctx.get());
  if (!p.module) {
    diags.push_back({"input.parse", "", "'" + path + "' is not valid MLIR"});
    return std::nullopt;
  }
  return p;
}
} // namespace

std::optional<PortablePlan> importMlirFile(const std::string &path, Diagnostics &diags) {
  llvm::SourceMgr sm;
  std::optional<Parsed> parsed = parseMlir(path, sm, diags);
  if (!parsed)
    return std::nullopt;
  InputDiagnostics handler(parsed->ctx.get(), diags);
  return lowerAndBuild(*parsed->module, path, parsed->text, diags);
}

std::vector<PortableCandidate> importMlirCandidates(const std::string &path, Diagnostics &diags) {
  llvm::SourceMgr sm;
  std::optional<Parsed> parsed = parseMlir(path, sm, diags);
  if (!parsed)
    return {};
  InputDiagnostics handler(parsed->ctx.get(), diags);
  ModuleOp module = *parsed->module;
  // The mesh of the relations that carry placement (all must agree on its
  // rank for an axis to be a choice); already-planned Task IR has no choice.
  std::vector<int64_t> mesh;
  int64_t sourceAxis = 0;
  bool planned = false, agree = true;
  module.walk([&](Operation *op) {
    if (isa<gf_task::GfTaskDialect>(op->getDialect()))
      planned = true;
    auto rel = dyn_cast<gf::RelationOp>(op);
    std::optional<ArrayRef<int64_t>> m = rel ? rel.getMeshShape() : std::nullopt;
    if (!m)
      return;
    std::vector<int64_t> shape(m->begin(), m->end());
    if (!mesh.empty() && mesh != shape)
      agree = false;
    mesh = shape;
    sourceAxis = rel.getMeshAxis().value_or(0);
  });
  std::vector<int64_t> axes = {sourceAxis};
  if (!planned && agree)
    for (int64_t a = 0; a < int64_t(mesh.size()); ++a)
      if (a != sourceAxis && mesh[a] > 1)
        axes.push_back(a);
  std::vector<PortableCandidate> out;
  for (int64_t axis : axes) {
    OwningOpRef<ModuleOp> copy = module.clone();
    copy->walk([&](gf::RelationOp rel) {
      if (rel.getMeshShape())
        rel.setMeshAxisAttr(IntegerAttr::get(IntegerType::get(rel->getContext(), 64), axis));
    });
    std::optional<PortablePlan> plan = lowerAndBuild(*copy, path, parsed->text, diags);
    if (!plan)
      return {};
    std::string what = mesh.empty() || planned
                           ? "the source's plan"
                           : "destinations over mesh axis " + std::to_string(axis) + " (" +
                                 std::to_string(plan->partitioning.parts) + " parts)" +
                                 (axis == sourceAxis ? ", the source's placement" : "");
    if (axis != sourceAxis)
      plan->id += ".axis" + std::to_string(axis);
    out.push_back({what, std::move(*plan)});
  }
  return out;
}

} // namespace linnet::planning

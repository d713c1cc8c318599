//===- Portable.cpp - PortablePlanIR serialization and verifier -----------===//
#include "linnet/Planning/Portable.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <regex>
#include <set>

namespace linnet::planning {

const char *toString(BufferRole r) {
  switch (r) {
  case BufferRole::Input: return "INPUT";
  case BufferRole::Output: return "OUTPUT";
  case BufferRole::Parameter: return "PARAMETER";
  case BufferRole::State: return "STATE";
  case BufferRole::Intermediate: return "INTERMEDIATE";
  case BufferRole::Workspace: return "WORKSPACE";
  case BufferRole::Communication: return "COMMUNICATION";
  }
  return "?";
}

const char *toString(StorageClass s) {
  switch (s) {
  case StorageClass::External: return "EXTERNAL";
  case StorageClass::Transient: return "TRANSIENT";
  case StorageClass::Persistent: return "PERSISTENT";
  }
  return "?";
}

namespace {
BufferRole roleFrom(const std::string &s, const std::string &path) {
  for (BufferRole r : {BufferRole::Input, BufferRole::Output, BufferRole::Parameter,
                       BufferRole::State, BufferRole::Intermediate, BufferRole::Workspace,
                       BufferRole::Communication})
    if (s == toString(r))
      return r;
  throw SchemaError(path, "unknown buffer role `" + s + "`");
}
StorageClass storageFrom(const std::string &s, const std::string &path) {
  for (StorageClass c : {StorageClass::External, StorageClass::Transient, StorageClass::Persistent})
    if (s == toString(c))
      return c;
  throw SchemaError(path, "unknown storage class `" + s + "`");
}

Json toJson(const Provenance &p) {
  return {{"op", p.op}, {"location", p.location}, {"lineage", p.lineage}};
}
Provenance provenanceFrom(ObjReader r) {
  Provenance p{r.str("op"), r.str("location"), r.strs("lineage")};
  r.done();
  return p;
}

Json toJson(const WorkloadFacts &f) {
  Json j = {{"ops", toJson(f.ops)},
          {"read_bytes", toJson(f.readBytes)},
          {"write_bytes", toJson(f.writeBytes)},
          {"message_bytes", toJson(f.messageBytes)},
          {"messages", toJson(f.messages)},
          {"reuse", f.reuse},
          {"arithmetic_intensity", f.arithmeticIntensity},
          {"derivation", f.derivation}};
  if (f.contraction)
    j["contraction"] = {{"rows", f.contraction->rows}, {"weight_bytes", f.contraction->weightBytes}};
  return j;
}
WorkloadFacts factsFrom(ObjReader r) {
  WorkloadFacts f;
  f.ops = r.qty("ops");
  f.readBytes = r.qty("read_bytes");
  f.writeBytes = r.qty("write_bytes");
  f.messageBytes = r.qty("message_bytes");
  f.messages = r.qty("messages");
  f.reuse = r.f64("reuse");
  f.arithmeticIntensity = r.f64("arithmetic_intensity");
  f.derivation = r.str("derivation");
  if (r.has("contraction")) {
    ObjReader c = r.obj("contraction");
    f.contraction = WorkloadFacts::Contraction{c.i64("rows"), c.i64("weight_bytes")};
    if (f.contraction->rows < -1 || f.contraction->rows == 0 || f.contraction->weightBytes < 0)
      throw SchemaError(c.path(), "rows must be -1 (a run-time extent) or at least 1, weight_bytes non-negative");
    c.done();
  }
  r.done();
  return f;
}
} // namespace

void finalizeFacts(WorkloadFacts &f, int64_t distinctReadElements, int64_t elementReads) {
  f.reuse = distinctReadElements > 0 ? double(elementReads) / double(distinctReadElements) : 0;
  double bytes = double(f.readBytes.upper) + double(f.writeBytes.upper); // no int64 overflow
  f.arithmeticIntensity = bytes > 0 ? double(f.ops.upper) / bytes : 0;
}

const Task *PortablePlan::task(const std::string &id) const {
  for (const Task &t : tasks)
    if (t.id == id)
      return &t;
  return nullptr;
}
const Buffer *PortablePlan::buffer(const std::string &id) const {
  for (const Buffer &b : buffers)
    if (b.id == id)
      return &b;
  return nullptr;
}

Json toJson(const PortablePlan &p) {
  Json tasks = Json::array();
  for (const Task &t : p.tasks) {
    Json alts = Json::array();
    for (const Alternative &a : t.alternatives)
      alts.push_back({{"capability", a.capability}, {"needs", a.needs}});
    Json task = {{"id", t.id},
                 {"name", t.name},
                 {"kind", t.kind},
                 {"depends_on", t.dependsOn},
                 {"reads", t.reads},
                 {"writes", t.writes},
                 {"facts", toJson(t.facts)},
                 {"resources",
                  {{"engine_class", t.resources.engineClass},
                   {"parallelism", toJson(t.resources.parallelism)},
                   {"memory_bytes", toJson(t.resources.memoryBytes)},
                   {"dtypes", t.resources.dtypes},
                   {"collective", t.resources.collective}}},
                 {"alternatives", alts},
                 {"provenance", toJson(t.provenance)}};
    if (t.kernel) {
      const KernelInfo &k = *t.kernel;
      task["kernel"] = {{"function", k.function},     {"traversal", k.traversal},
                        {"schedule_kind", k.scheduleKind}, {"rows", k.rows},
                        {"block_rows", k.blockRows},   {"block_neighbors", k.blockNeighbors},
                        {"num_warps", k.numWarps},     {"pipeline_stages", k.pipelineStages},
                        {"reducer", k.reducer},        {"deterministic", k.deterministic}};
    }
    tasks.push_back(std::move(task));
  }
  Json buffers = Json::array();
  for (const Buffer &b : p.buffers)
    buffers.push_back({{"id", b.id},
                       {"name", b.name},
                       {"dtype", b.dtype},
                       {"compute_dtype", b.computeDtype.empty() ? b.dtype : b.computeDtype},
                       {"role", toString(b.role)},
                       {"storage", toString(b.storage)},
                       {"bytes", toJson(b.bytes)},
                       {"bound_semantic", b.boundSemantic},
                       {"bound_derivation", b.boundDerivation},
                       {"writers", b.writers},
                       {"readers", b.readers},
                       {"first_use", b.firstUse},
                       {"last_use", b.lastUse}});
  Json groups = Json::array();
  for (const ConcurrencyGroup &g : p.concurrencyGroups)
    groups.push_back({{"id", g.id}, {"tasks", g.tasks}, {"reason", g.reason}});
  Json phases = Json::array();
  for (const Phase &ph : p.phases) {
    Json tasks = Json::array();
    for (const PhaseTask &t : ph.tasks)
      if (t.launches == t.executions)
        tasks.push_back({{"task", t.task}, {"executions", t.executions}});
      else
        tasks.push_back({{"task", t.task}, {"executions", t.executions}, {"launches", t.launches}});
    phases.push_back({{"id", ph.id}, {"entry", ph.entry}, {"tasks", tasks}, {"derivation", ph.derivation}});
  }
  Json objectives = Json::array();
  for (const Objective &o : p.objectives)
    objectives.push_back({{"id", o.id}, {"metric", o.metric}, {"direction", o.direction},
                          {"priority", o.priority}});
  Json constraints = Json::array();
  for (const Constraint &c : p.constraints)
    constraints.push_back({{"id", c.id}, {"kind", c.kind}, {"metric", c.metric},
                           {"bound", c.bound}, {"objective", c.objective}});
  Json doc = {{"schema", p.schema},
          {"id", p.id},
          {"source", {{"file", p.sourceFile}, {"digest", p.sourceDigest}}},
          {"numerics", p.numerics},
          {"partitioning",
           {{"scheme", p.partitioning.scheme},
            {"mesh_shape", p.partitioning.meshShape},
            {"mesh_axis", p.partitioning.meshAxis},
            {"parts", p.partitioning.parts}}},
          {"requirements",
           {{"ranks", p.requirements.ranks},
            {"dtypes", p.requirements.dtypes},
            {"collectives", p.requirements.collectives},
            {"memory_bytes_per_rank", toJson(p.requirements.memoryBytesPerRank)}}},
          {"tasks", tasks},
          {"buffers", buffers},
          {"concurrency_groups", groups},
          {"objectives", objectives},
          {"constraints", constraints}};
  // Written only when there are phases: Task IR without entries keeps its bytes.
  if (!p.phases.empty())
    doc["phases"] = phases;
  if (p.matmulPrecision != "highest")
    doc["matmul_precision"] = p.matmulPrecision;
  if (p.blockProducts != "exact")
    doc["block_products"] = p.blockProducts;
  return doc;
}

PortablePlan portableFromJson(const Json &j) {
  ObjReader r(j, "");
  PortablePlan p;
  p.schema = r.str("schema");
  if (p.schema != kPortableSchema)
    throw SchemaError("/schema", "unsupported schema `" + p.schema + "`; expected `" +
                                     kPortableSchema + "`");
  p.id = r.str("id");
  {
    ObjReader s = r.obj("source");
    p.sourceFile = s.str("file");
    p.sourceDigest = s.str("digest");
    s.done();
  }
  if (r.opt("numerics"))
    p.numerics = r.str("numerics");
  if (r.opt("matmul_precision"))
    p.matmulPrecision = r.str("matmul_precision");
  if (r.opt("block_products"))
    p.blockProducts = r.str("block_products");
  {
    ObjReader s = r.obj("partitioning");
    p.partitioning = {s.str("scheme"), s.i64s("mesh_shape"), s.i64("mesh_axis"), s.i64("parts")};
    s.done();
  }
  {
    ObjReader s = r.obj("requirements");
    p.requirements = {s.i64("ranks"), s.strs("dtypes"), s.strs("collectives"),
                      s.qty("memory_bytes_per_rank")};
    s.done();
  }
  r.each("tasks", [&](const Json &e, const std::string &path) {
    ObjReader t(e, path);
    Task task;
    task.id = t.str("id");
    task.name = t.str("name");
    task.kind = t.str("kind");
    task.dependsOn = t.strs("depends_on");
    task.reads = t.strs("reads");
    task.writes = t.strs("writes");
    task.facts = factsFrom(t.obj("facts"));
    {
      ObjReader res = t.obj("resources");
      task.resources = {res.str("engine_class"), res.qty("parallelism"), res.qty("memory_bytes"),
                        res.strs("dtypes"), res.str("collective")};
      res.done();
    }
    t.each("alternatives", [&](const Json &a, const std::string &ap) {
      ObjReader ar(a, ap);
      task.alternatives.push_back({ar.str("capability"), ar.strs("needs")});
      ar.done();
    });
    if (t.has("kernel")) {
      ObjReader k = t.obj("kernel");
      KernelInfo ki;
      ki.function = k.str("function");
      ki.traversal = k.str("traversal");
      ki.scheduleKind = k.str("schedule_kind");
      ki.rows = k.i64("rows");
      ki.blockRows = k.i64("block_rows");
      ki.blockNeighbors = k.i64("block_neighbors");
      ki.numWarps = k.i64("num_warps");
      ki.pipelineStages = k.i64("pipeline_stages");
      ki.reducer = k.str("reducer");
      ki.deterministic = k.boolean("deterministic");
      k.done();
      task.kernel = ki;
    }
    task.provenance = provenanceFrom(t.obj("provenance"));
    t.done();
    p.tasks.push_back(std::move(task));
  });
  r.each("buffers", [&](const Json &e, const std::string &path) {
    ObjReader b(e, path);
    Buffer buf;
    buf.id = b.str("id");
    buf.name = b.str("name");
    buf.dtype = b.str("dtype");
    buf.computeDtype = b.opt("compute_dtype") ? b.str("compute_dtype") : buf.dtype;
    buf.role = roleFrom(b.str("role"), b.at("role"));
    buf.storage = storageFrom(b.str("storage"), b.at("storage"));
    buf.bytes = b.qty("bytes");
    buf.boundSemantic = b.str("bound_semantic");
    buf.boundDerivation = b.str("bound_derivation");
    buf.writers = b.strs("writers");
    buf.readers = b.strs("readers");
    buf.firstUse = b.str("first_use");
    buf.lastUse = b.str("last_use");
    b.done();
    p.buffers.push_back(std::move(buf));
  });
  r.each("concurrency_groups", [&](const Json &e, const std::string &path) {
    ObjReader g(e, path);
    p.concurrencyGroups.push_back({g.str("id"), g.strs("tasks"), g.str("reason")});
    g.done();
  });
  if (r.has("phases"))
    r.each("phases", [&](const Json &e, const std::string &path) {
      ObjReader ph(e, path);
      Phase phase;
      phase.id = ph.str("id");
      phase.entry = ph.str("entry");
      ph.each("tasks", [&](const Json &te, const std::string &tpath) {
        ObjReader t(te, tpath);
        PhaseTask pt{t.str("task"), t.i64("executions")};
        pt.launches = t.has("launches") ? t.i64("launches") : pt.executions;
        if (pt.executions < 1)
          throw SchemaError(t.at("executions"), "executions must be at least 1");
        if (pt.launches < 1 || pt.launches > pt.executions)
          throw SchemaError(t.at("launches"), "launches must be at least 1 and at most executions");
        t.done();
        phase.tasks.push_back(std::move(pt));
      });
      phase.derivation = ph.str("derivation");
      ph.done();
      p.phases.push_back(std::move(phase));
    });
  r.each("objectives", [&](const Json &e, const std::string &path) {
    ObjReader o(e, path);
    p.objectives.push_back({o.str("id"), o.str("metric"), o.str("direction"), o.i64("priority")});
    o.done();
  });
  r.each("constraints", [&](const Json &e, const std::string &path) {
    ObjReader c(e, path);
    p.constraints.push_back(
        {c.str("id"), c.str("kind"), c.str("metric"), c.i64("bound"), c.str("objective")});
    c.done();
  });
  r.done();
  return p;
}

std::optional<std::vector<size_t>> topoOrder(const PortablePlan &p) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < p.tasks.size(); ++i)
    index[p.tasks[i].id] = i;
  std::vector<int> indeg(p.tasks.size(), 0);
  std::vector<std::vector<size_t>> succ(p.tasks.size());
  for (size_t i = 0; i < p.tasks.size(); ++i)
    for (const std::string &d : p.tasks[i].dependsOn)
      if (auto it = index.find(d); it != index.end()) {
        succ[it->second].push_back(i);
        ++indeg[i];
      }
  // Kahn's algorithm, smallest index first: deterministic.
  std::set<size_t> ready;
  for (size_t i = 0; i < indeg.size(); ++i)
    if (!indeg[i])
      ready.insert(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t n = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(n);
    for (size_t s : succ[n])
      if (!--indeg[s])
        ready.insert(s);
  }
  if (order.size() != p.tasks.size())
    return std::nullopt;
  return order;
}

Diagnostics scanTargetBoundFields(const Json &j) {
  // Keys that only a bound plan may carry, and values naming vendors or
  // physical devices. Portable plans say "what", never "where" or "when".
  static const std::set<std::string> keys = {
      "device", "devices", "queue", "queues", "engine", "engines", "address", "offset",
      "timestamp", "start_ns", "end_ns", "latency", "latency_ns", "library", "vendor",
      "implementation", "implementation_id", "route", "memory_bank", "stream"};
  static const std::regex vendor(
      R"((^|[^a-z])(cublas|cusparse|cudnn|nccl|openblas|mkl|rocblas|cutlass)([^a-z]|$)|^(cuda|cpu|gpu|hip):[0-9]+$)",
      std::regex::icase);
  Diagnostics out;
  std::function<void(const Json &, const std::string &)> walk = [&](const Json &v,
                                                                   const std::string &path) {
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (keys.count(it.key()))
          out.push_back({"portable.target-bound-field", path + "/" + it.key(),
                         "target-bound field `" + it.key() +
                             "` may not appear in a portable plan; the binding gate decides it"});
        walk(it.value(), path + "/" + it.key());
      }
    } else if (v.is_array()) {
      for (size_t i = 0; i < v.size(); ++i)
        walk(v[i], path + "/" + std::to_string(i));
    } else if (v.is_string() && std::regex_search(v.get<std::string>(), vendor)) {
      out.push_back({"portable.target-bound-field", path,
                     "value `" + v.get<std::string>() +
                         "` names a vendor library or physical device; a portable plan names "
                         "capability classes only"});
    }
  };
  walk(j, "");
  return out;
}

namespace {
bool validQuantity(const Quantity &q) { return q.lower >= 0 && q.lower <= q.upper; }

struct Verifier {
  const PortablePlan &p;
  Diagnostics out;
  std::map<std::string, size_t> taskIndex;
  std::vector<std::set<size_t>> ancestors; // transitive, filled when acyclic

  void err(const char *code, std::string path, std::string msg) {
    out.push_back({code, std::move(path), std::move(msg)});
  }
  std::string tp(size_t i) const { return "/tasks/" + std::to_string(i); }
  std::string bp(size_t i) const { return "/buffers/" + std::to_string(i); }

  void references() {
    for (size_t i = 0; i < p.tasks.size(); ++i)
      if (!taskIndex.emplace(p.tasks[i].id, i).second)
        err("portable.task-ref", tp(i) + "/id", "duplicate task id `" + p.tasks[i].id + "`");
    std::set<std::string> bufferIds;
    for (size_t i = 0; i < p.buffers.size(); ++i)
      if (!bufferIds.insert(p.buffers[i].id).second)
        err("portable.task-ref", bp(i) + "/id", "duplicate buffer id `" + p.buffers[i].id + "`");
    auto taskRef = [&](const std::string &id, const std::string &path) {
      if (!taskIndex.count(id))
        err("portable.task-ref", path, "reference to unknown task `" + id + "`");
    };
    auto bufRef = [&](const std::string &id, const std::string &path) {
      if (!bufferIds.count(id))
        err("portable.task-ref", path, "reference to unknown buffer `" + id + "`");
    };
    for (size_t i = 0; i < p.tasks.size(); ++i) {
      const Task &t = p.tasks[i];
      for (size_t k = 0; k < t.dependsOn.size(); ++k)
        taskRef(t.dependsOn[k], tp(i) + "/depends_on/" + std::to_string(k));
      for (size_t k = 0; k < t.reads.size(); ++k)
        bufRef(t.reads[k], tp(i) + "/reads/" + std::to_string(k));
      for (size_t k = 0; k < t.writes.size(); ++k)
        bufRef(t.writes[k], tp(i) + "/writes/" + std::to_string(k));
    }
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      const Buffer &b = p.buffers[i];
      for (size_t k = 0; k < b.writers.size(); ++k)
        taskRef(b.writers[k], bp(i) + "/writers/" + std::to_string(k));
      for (size_t k = 0; k < b.readers.size(); ++k)
        taskRef(b.readers[k], bp(i) + "/readers/" + std::to_string(k));
      if (!b.firstUse.empty())
        taskRef(b.firstUse, bp(i) + "/first_use");
      if (!b.lastUse.empty())
        taskRef(b.lastUse, bp(i) + "/last_use");
    }
    for (size_t g = 0; g < p.concurrencyGroups.size(); ++g)
      for (size_t k = 0; k < p.concurrencyGroups[g].tasks.size(); ++k)
        taskRef(p.concurrencyGroups[g].tasks[k],
                "/concurrency_groups/" + std::to_string(g) + "/tasks/" + std::to_string(k));
    for (size_t g = 0; g < p.phases.size(); ++g)
      for (size_t k = 0; k < p.phases[g].tasks.size(); ++k)
        taskRef(p.phases[g].tasks[k].task, "/phases/" + std::to_string(g) + "/tasks/" + std::to_string(k) + "/task");
  }

  bool reaches(size_t from, size_t to) const { return ancestors[to].count(from) > 0; }

  void dag() {
    for (size_t i = 0; i < p.tasks.size(); ++i)
      for (size_t k = 0; k < p.tasks[i].dependsOn.size(); ++k)
        if (p.tasks[i].dependsOn[k] == p.tasks[i].id)
          err("portable.dag", tp(i) + "/depends_on/" + std::to_string(k),
              "task `" + p.tasks[i].id + "` depends on itself");
    auto order = topoOrder(p);
    if (!order) {
      err("portable.dag", "/tasks", "the task dependencies form a cycle");
      return;
    }
    ancestors.assign(p.tasks.size(), {});
    for (size_t n : *order)
      for (const std::string &d : p.tasks[n].dependsOn)
        if (auto it = taskIndex.find(d); it != taskIndex.end()) {
          ancestors[n].insert(it->second);
          ancestors[n].insert(ancestors[it->second].begin(), ancestors[it->second].end());
        }
    // Closure: whoever reads a buffer that tasks write must depend on them,
    // else the read races the write.
    for (size_t i = 0; i < p.tasks.size(); ++i)
      for (const std::string &bid : p.tasks[i].reads) {
        const Buffer *b = p.buffer(bid);
        if (!b)
          continue;
        for (const std::string &w : b->writers) {
          auto it = taskIndex.find(w);
          if (it == taskIndex.end() || it->second == i)
            continue;
          if (!reaches(it->second, i))
            err("portable.dag-closure", tp(i) + "/depends_on",
                "task `" + p.tasks[i].id + "` reads buffer `" + bid + "` written by `" + w +
                    "` but does not depend on it");
        }
      }
    for (size_t g = 0; g < p.concurrencyGroups.size(); ++g) {
      const ConcurrencyGroup &cg = p.concurrencyGroups[g];
      for (size_t a = 0; a < cg.tasks.size(); ++a)
        for (size_t b = a + 1; b < cg.tasks.size(); ++b) {
          auto ia = taskIndex.find(cg.tasks[a]), ib = taskIndex.find(cg.tasks[b]);
          if (ia == taskIndex.end() || ib == taskIndex.end())
            continue;
          if (reaches(ia->second, ib->second) || reaches(ib->second, ia->second))
            err("portable.concurrency-group", "/concurrency_groups/" + std::to_string(g),
                "tasks `" + cg.tasks[a] + "` and `" + cg.tasks[b] +
                    "` are ordered by a dependency and cannot run concurrently");
        }
    }
  }

  void lifecycle() {
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      const Buffer &b = p.buffers[i];
      std::string path = bp(i);
      auto listed = [&](const std::vector<std::string> &ids, const char *what) {
        for (const std::string &tid : ids) {
          const Task *t = p.task(tid);
          if (!t)
            continue;
          const auto &use = std::string(what) == "writes" ? t->writes : t->reads;
          if (std::find(use.begin(), use.end(), b.id) == use.end())
            err("portable.buffer-lifecycle", path,
                "buffer `" + b.id + "` lists task `" + tid + "` which does not " +
                    (std::string(what) == "writes" ? "write" : "read") + " it");
        }
      };
      listed(b.writers, "writes");
      listed(b.readers, "reads");
      for (const Task &t : p.tasks) {
        if (std::count(t.writes.begin(), t.writes.end(), b.id) &&
            !std::count(b.writers.begin(), b.writers.end(), t.id))
          err("portable.buffer-lifecycle", path + "/writers",
              "task `" + t.id + "` writes buffer `" + b.id + "` but is not listed as a writer");
        if (std::count(t.reads.begin(), t.reads.end(), b.id) &&
            !std::count(b.readers.begin(), b.readers.end(), t.id))
          err("portable.buffer-lifecycle", path + "/readers",
              "task `" + t.id + "` reads buffer `" + b.id + "` but is not listed as a reader");
      }
      if (!validQuantity(b.bytes))
        err("portable.buffer-lifecycle", path + "/bytes",
            "buffer `" + b.id + "` has invalid size bounds");
      if (b.storage == StorageClass::Transient && b.writers.empty() && !b.readers.empty())
        err("portable.buffer-lifecycle", path,
            "transient buffer `" + b.id + "` is read but never written");
      if (b.storage != StorageClass::External && b.role == BufferRole::Input)
        err("portable.buffer-lifecycle", path + "/storage",
            "input buffer `" + b.id + "` must be EXTERNAL");
      if (b.role == BufferRole::Workspace &&
          (b.storage != StorageClass::Transient || b.boundSemantic.empty() ||
           b.boundDerivation.empty()))
        err("portable.buffer-lifecycle", path,
            "WORKSPACE buffer `" + b.id +
                "` must be TRANSIENT and record its bound's semantic and derivation");
      if (!b.isBoundRecorded())
        err("portable.buffer-lifecycle", path + "/bound_semantic",
            "buffer `" + b.id + "` has a size bound but no recorded bound semantic");
      // The lifetime spans all uses: first_use precedes every use and
      // last_use follows every use.
      bool used = !b.writers.empty() || !b.readers.empty();
      if (used && (b.firstUse.empty() || b.lastUse.empty())) {
        err("portable.buffer-lifecycle", path, "buffer `" + b.id + "` is used but has no lifetime");
        continue;
      }
      if (ancestors.empty() || !used)
        continue;
      auto fi = taskIndex.find(b.firstUse), li = taskIndex.find(b.lastUse);
      if (fi == taskIndex.end() || li == taskIndex.end())
        continue;
      std::vector<std::string> users = b.writers;
      users.insert(users.end(), b.readers.begin(), b.readers.end());
      for (const std::string &u : users) {
        auto ui = taskIndex.find(u);
        if (ui == taskIndex.end())
          continue;
        if (ui->second != li->second && reaches(li->second, ui->second))
          err("portable.buffer-lifecycle", path + "/last_use",
              "buffer `" + b.id + "` is used by `" + u + "` after its last use `" + b.lastUse +
                  "`");
        if (ui->second != fi->second && reaches(ui->second, fi->second))
          err("portable.buffer-lifecycle", path + "/first_use",
              "buffer `" + b.id + "` is used by `" + u + "` before its first use `" +
                  b.firstUse + "`");
      }
      if (std::find(users.begin(), users.end(), b.firstUse) == users.end() ||
          std::find(users.begin(), users.end(), b.lastUse) == users.end())
        err("portable.buffer-lifecycle", path,
            "lifetime of buffer `" + b.id + "` must start and end at tasks that use it");
    }
  }

  void resources() {
    static const std::set<std::string> engines = {"compute", "communication", "copy"};
    static const std::set<std::string> dtypes = {"f16", "bf16", "f32", "f64", "i8", "i16",
                                                 "i32", "i64", "i1"};
    static const std::set<std::string> collectives = {"", "halo-exchange", "all-reduce",
                                                      "all-gather", "all-to-all"};
    for (size_t i = 0; i < p.tasks.size(); ++i) {
      const ResourceRequirements &r = p.tasks[i].resources;
      std::string path = tp(i) + "/resources";
      if (!engines.count(r.engineClass))
        err("portable.resources", path + "/engine_class",
            "unknown engine class `" + r.engineClass + "`");
      if (!validQuantity(r.parallelism) || !validQuantity(r.memoryBytes))
        err("portable.resources", path, "resource bounds must satisfy 0 <= lower <= upper");
      if (r.engineClass == "compute" && r.parallelism.upper < 1)
        err("portable.resources", path + "/parallelism",
            "a compute task needs at least one work item");
      for (const std::string &d : r.dtypes)
        if (!dtypes.count(d))
          err("portable.resources", path + "/dtypes", "unknown dtype `" + d + "`");
      if (!collectives.count(r.collective))
        err("portable.resources", path + "/collective",
            "unknown collective `" + r.collective + "`");
      if (!r.collective.empty() && r.engineClass != "communication")
        err("portable.resources", path + "/collective",
            "collective `" + r.collective + "` requires the communication engine class");
      if (!r.collective.empty() &&
          !std::count(p.requirements.collectives.begin(), p.requirements.collectives.end(),
                      r.collective))
        err("portable.resources", path + "/collective",
            "collective `" + r.collective + "` is missing from the plan's requirements");
    }
    if (p.requirements.ranks < 1)
      err("portable.resources", "/requirements/ranks", "a plan needs at least one rank");
    if (!validQuantity(p.requirements.memoryBytesPerRank))
      err("portable.resources", "/requirements/memory_bytes_per_rank",
          "memory bounds must satisfy 0 <= lower <= upper");
  }

  void facts() {
    for (size_t i = 0; i < p.tasks.size(); ++i) {
      const WorkloadFacts &f = p.tasks[i].facts;
      std::string path = tp(i) + "/facts";
      std::pair<const char *, const Quantity *> qs[] = {{"ops", &f.ops},
                                                        {"read_bytes", &f.readBytes},
                                                        {"write_bytes", &f.writeBytes},
                                                        {"message_bytes", &f.messageBytes},
                                                        {"messages", &f.messages}};
      for (auto [name, q] : qs) {
        if (q->lower < 0)
          err("portable.work-facts", path + "/" + name, std::string(name) + " is negative");
        else if (q->lower > q->upper)
          err("portable.work-facts", path + "/" + name,
              std::string(name) + " has lower bound above its upper bound");
      }
      if (!std::isfinite(f.reuse) || f.reuse < 0)
        err("portable.work-facts", path + "/reuse", "reuse must be finite and non-negative");
      int64_t bytes = f.readBytes.upper + f.writeBytes.upper;
      double ai = bytes > 0 ? double(f.ops.upper) / double(bytes) : 0;
      if (!std::isfinite(f.arithmeticIntensity) ||
          std::fabs(ai - f.arithmeticIntensity) > 1e-9 * std::max(1.0, ai))
        err("portable.work-facts", path + "/arithmetic_intensity",
            "arithmetic intensity does not equal ops / bytes (" + std::to_string(ai) + ")");
      if (f.derivation.empty())
        err("portable.work-facts", path + "/derivation", "work facts must state their derivation");
    }
  }

  void objectives() {
    static const std::set<std::string> metrics = {"latency", "peak_memory_bytes", "devices",
                                                  "bytes_moved"};
    static const std::set<std::string> kinds = {"memory-capacity", "determinism", "max-ranks"};
    static const std::regex idForm(R"([a-z][a-z0-9_.-]*)");
    std::set<std::string> ids, objectiveMetrics;
    for (size_t i = 0; i < p.objectives.size(); ++i) {
      const Objective &o = p.objectives[i];
      std::string path = "/objectives/" + std::to_string(i);
      if (!std::regex_match(o.id, idForm) || !ids.insert(o.id).second)
        err("portable.objective-identity", path + "/id",
            "objective id `" + o.id + "` is malformed or not unique");
      if (!metrics.count(o.metric))
        err("portable.objective-identity", path + "/metric", "unknown metric `" + o.metric + "`");
      else if (!objectiveMetrics.insert(o.metric).second)
        err("portable.objective-identity", path + "/metric",
            "metric `" + o.metric + "` is the subject of two objectives");
      if (o.direction != "minimize" && o.direction != "maximize")
        err("portable.objective-identity", path + "/direction",
            "direction must be minimize or maximize");
    }
    for (size_t i = 0; i < p.constraints.size(); ++i) {
      const Constraint &c = p.constraints[i];
      std::string path = "/constraints/" + std::to_string(i);
      if (!std::regex_match(c.id, idForm) || !ids.insert(c.id).second)
        err("portable.objective-identity", path + "/id",
            "constraint id `" + c.id + "` is malformed or not unique");
      if (!kinds.count(c.kind))
        err("portable.objective-identity", path + "/kind", "unknown constraint kind `" + c.kind + "`");
      if (!c.metric.empty() && !metrics.count(c.metric))
        err("portable.objective-identity", path + "/metric", "unknown metric `" + c.metric + "`");
      if (!c.objective.empty() &&
          std::none_of(p.objectives.begin(), p.objectives.end(),
                       [&](const Objective &o) { return o.id == c.objective; }))
        err("portable.objective-identity", path + "/objective",
            "constraint refers to unknown objective `" + c.objective + "`");
    }
  }

  void lineage() {
    static const std::regex digest(R"(sha256:[0-9a-f]{64})");
    if (p.sourceFile.empty() || !std::regex_match(p.sourceDigest, digest))
      err("portable.lineage", "/source", "the plan must name its source file and its sha256 digest");
    for (size_t i = 0; i < p.tasks.size(); ++i) {
      const Provenance &pv = p.tasks[i].provenance;
      if (pv.op.empty() || pv.location.empty() || pv.lineage.empty())
        err("portable.lineage", tp(i) + "/provenance",
            "task `" + p.tasks[i].id + "` has no source lineage (op, location and lineage chain)");
    }
  }
};
} // namespace

bool Buffer::isBoundRecorded() const { return bytes.isExact() || !boundSemantic.empty(); }

Diagnostics verifyPortable(const PortablePlan &p) {
  Verifier v{p, {}, {}, {}};
  if (p.schema != kPortableSchema)
    v.err("portable.schema", "/schema", "unsupported schema `" + p.schema + "`");
  v.references();
  v.dag();
  v.lifecycle();
  v.resources();
  v.facts();
  v.objectives();
  v.lineage();
  for (Diagnostic &d : scanTargetBoundFields(toJson(p)))
    v.out.push_back(std::move(d));
  return v.out;
}

} // namespace linnet::planning

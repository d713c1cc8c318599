//===- Binding.cpp - The binding gate and the memory planner --------------===//
#include "linnet/Planning/Binding.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace linnet::planning {

ArenaPlan planArena(std::vector<Allocation> &allocs, int64_t alignment) {
  auto align = [&](int64_t v) { return (v + alignment - 1) / alignment * alignment; };
  std::vector<size_t> order(allocs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Largest first (ties: earlier first, then index): big blocks get the
  // low offsets and small ones fill the gaps between them.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (allocs[a].bytes != allocs[b].bytes) return allocs[a].bytes > allocs[b].bytes;
    return allocs[a].first < allocs[b].first;
  });
  ArenaPlan plan;
  std::vector<size_t> placed;
  for (size_t i : order) {
    Allocation &a = allocs[i];
    if (a.bytes == 0) {
      a.offset = 0;
      continue;
    }
    // Occupied ranges of allocations live at the same time, by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed) {
      const Allocation &o = allocs[j];
      if (o.first <= a.last && a.first <= o.last) busy.push_back({o.offset, o.offset + o.bytes});
    }
    std::sort(busy.begin(), busy.end());
    int64_t candidate = 0;
    for (auto [lo, hi] : busy) {
      if (candidate + a.bytes <= lo) break;
      candidate = std::max(candidate, align(hi));
    }
    a.offset = candidate;
    plan.peak = std::max(plan.peak, a.offset + a.bytes);
    placed.push_back(i);
  }
  // Lower bound: the most aligned bytes live at any one time.
  std::set<int64_t> points;
  for (const Allocation &a : allocs) points.insert(a.first);
  for (int64_t t : points) {
    int64_t live = 0;
    for (const Allocation &a : allocs)
      if (a.first <= t && t <= a.last && a.bytes) live += align(a.bytes);
    plan.lowerBound = std::max(plan.lowerBound, live);
  }
  // The last block needs no alignment padding after it.
  plan.lowerBound = std::min(plan.lowerBound, std::max(plan.peak, plan.lowerBound - alignment + 1));
  return plan;
}

RooflineSides rooflineSides(const Task &t, const Target &target, bool lower) {
  const WorkloadFacts &f = t.facts;
  auto pick = [&](const Quantity &q) { return double(lower ? q.lower : q.upper); };
  double peak = 0;
  for (const std::string &d : t.resources.dtypes)
    if (auto it = target.peakFlops.find(d); it != target.peakFlops.end())
      peak = peak == 0 ? it->second : std::min(peak, it->second);
  if (peak == 0 && !target.peakFlops.empty()) peak = target.peakFlops.begin()->second;
  return {peak > 0 ? pick(f.ops) / peak : 0, (pick(f.readBytes) + pick(f.writeBytes)) / target.memoryBandwidth};
}

double rooflineSeconds(const Task &t, const Target &target, const Evidence &e, bool lower) {
  if (t.resources.engineClass == "communication") {
    double bytes = double(lower ? t.facts.messageBytes.lower : t.facts.messageBytes.upper);
    return target.linkLatencyNs * 1e-9 + bytes / (target.linkBandwidth * e.communicationEfficiency);
  }
  RooflineSides s = rooflineSides(t, target, lower);
  return std::max(s.computeSeconds / e.computeEfficiency, s.memorySeconds / e.memoryEfficiency);
}

namespace {

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

/// `prefix` names `capability` or one of its refinements ("a.b" covers "a.b.c").
bool covers(const std::string &prefix, const std::string &capability) {
  return capability == prefix ||
         (capability.size() > prefix.size() && capability.compare(0, prefix.size(), prefix) == 0 &&
          capability[prefix.size()] == '.');
}

std::string symbolFor(const std::string &taskId) {
  std::string s = "linnet_" + taskId.substr(taskId.find('.') + 1);
  for (char &c : s)
    if (c == '.' || c == '-') c = '_';
  return s;
}

int64_t workspaceFor(const ImplementationSpec &s, const Task &t) {
  if (s.workspace.kind == "fixed") return s.workspace.bytes;
  if (s.workspace.kind == "per-row") return s.workspace.bytes * t.resources.parallelism.upper;
  if (s.workspace.kind == "per-edge") return s.workspace.bytes * t.facts.messages.upper;
  return 0;
}

struct Gate {
  const BindInputs &in;
  Diagnostics &diags;
  ConcretePlan plan;
  std::map<std::string, const ImplementationRef *> taskImpl;

  void fail(const char *code, std::string path, std::string msg) { diags.push_back({code, std::move(path), std::move(msg)}); }

  // Step 1: capability and ABI.
  void capability() {
    const PortablePlan &p = in.portable;
    const Target &t = in.target;
    if (in.deployment.target != t.id)
      fail("bind.abi", "/deployment/target",
           "deployment `" + in.deployment.id + "` is written for target `" + in.deployment.target + "`, not `" + t.id + "`");
    for (const std::string &d : p.requirements.dtypes)
      if (!contains(t.dtypes, d))
        fail("bind.capability", "/requirements/dtypes", "target `" + t.id + "` does not support dtype `" + d + "`");
    for (const std::string &c : p.requirements.collectives)
      if (!contains(t.capabilities, "collective." + c))
        fail("bind.capability", "/requirements/collectives", "target `" + t.id + "` offers no `" + c + "` collective");
    int64_t devices = in.deployment.devices.size();
    if (p.requirements.ranks > devices && !in.deployment.oversubscribe)
      fail("bind.resources", "/requirements/ranks",
           "the plan needs " + std::to_string(p.requirements.ranks) + " ranks; deployment `" + in.deployment.id +
               "` has " + std::to_string(devices) + " device(s) and does not allow several ranks per device");
    if (!t.engines.count("compute"))
      fail("bind.resources", "/engines", "target `" + t.id + "` has no compute engine");
  }

  // Step 2: legal implementations, chosen by the policy.
  void implementations() {
    const auto &pref = in.implementations.preference;
    auto prefIt = pref.find(in.target.kind);
    std::vector<std::string> order = prefIt == pref.end() ? std::vector<std::string>{} : prefIt->second;
    auto rank = [&](const ImplementationSpec &s) {
      auto it = std::find(order.begin(), order.end(), s.id);
      return it == order.end() ? order.size() : size_t(it - order.begin());
    };
    int64_t minFree = INT64_MAX;
    for (const auto &d : in.deployment.devices) minFree = std::min(minFree, d.memoryFreeBytes);
    for (size_t ti = 0; ti < in.portable.tasks.size(); ++ti) {
      const Task &task = in.portable.tasks[ti];
      std::vector<std::pair<const ImplementationSpec *, const Alternative *>> legal;
      std::vector<std::string> why;
      for (const Alternative &alt : task.alternatives)
        for (const ImplementationSpec &s : in.implementations.implementations) {
          if (!covers(s.capability, alt.capability)) continue;
          std::string reason;
          if (!contains(s.targets, in.target.kind)) reason = "not for " + in.target.kind;
          for (const std::string &d : task.resources.dtypes)
            if (reason.empty() && !contains(s.dtypes, d)) reason = "no " + d + " variant";
          for (const std::string &n : alt.needs)
            if (reason.empty() && !contains(in.target.capabilities, n)) reason = "target lacks `" + n + "`";
          if (reason.empty() && !s.soname.empty() && !contains(in.deployment.runtimeLibraries, s.soname))
            reason = "`" + s.soname + "` is not available in deployment `" + in.deployment.id + "`";
          if (reason.empty() && workspaceFor(s, task) > minFree)
            reason = "workspace " + formatBytes(workspaceFor(s, task)) + " exceeds free memory";
          if (reason.empty()) legal.push_back({&s, &alt});
          else why.push_back(s.id + " (" + reason + ")");
        }
      if (legal.empty()) {
        fail("bind.implementation", "/tasks/" + std::to_string(ti),
             "no legal implementation for task `" + task.id + "` on `" + in.target.id + "`" +
                 (why.empty() ? std::string(": no implementation offers its capabilities")
                              : ": rejected " + [&] {
                                  std::string s;
                                  for (const auto &w : why) s += (s.empty() ? "" : ", ") + w;
                                  return s;
                                }()));
        continue;
      }
      // Preference: the policy's order. min-estimated-time: planning-
      // evidence roofline plus the traffic of writing and reading the
      // workspace, preference breaking ties.
      auto cost = [&](const ImplementationSpec &s) {
        double ws = double(workspaceFor(s, task)) * 2 /
                    (in.target.memoryBandwidth * in.evidence.planning.memoryEfficiency);
        return rooflineSeconds(task, in.target, in.evidence.planning) + ws;
      };
      std::stable_sort(legal.begin(), legal.end(), [&](const auto &a, const auto &b) {
        if (in.implementations.strategy == "min-estimated-time" && cost(*a.first) != cost(*b.first))
          return cost(*a.first) < cost(*b.first);
        return rank(*a.first) < rank(*b.first);
      });
      const ImplementationSpec &s = *legal.front().first;
      ImplementationRef ref;
      ref.id = "impl." + task.id.substr(task.id.find('.') + 1);
      ref.spec = s.id;
      ref.kind = s.kind;
      ref.capability = legal.front().second->capability;
      if (s.kind == "generated") ref.symbol = symbolFor(task.id);
      ref.library = s.library;
      ref.routine = s.routine;
      ref.soname = s.soname;
      ref.workspaceBytes = workspaceFor(s, task);
      plan.implementations.push_back(ref);
    }
    for (const ImplementationRef &r : plan.implementations)
      taskImpl["task." + r.id.substr(5)] = &r;
  }

  // Steps 3 and 4: devices, engines, queues and memory spaces.
  void resources() {
    const Target &t = in.target;
    plan.ranks = in.portable.requirements.ranks;
    for (int64_t r = 0; r < plan.ranks; ++r)
      plan.rankDevices.push_back(in.deployment.devices[r % in.deployment.devices.size()].id);
    for (const DeploymentDevice &d : in.deployment.devices) {
      if (!contains(plan.rankDevices, d.id)) continue;
      plan.devices.push_back({d.id, d.id + "/" + t.memorySpace, d.memoryFreeBytes});
      for (auto &[kind, count] : t.engines)
        if (count > 0) {
          plan.engines.push_back({d.id + "/" + kind, d.id, kind});
          plan.queues.push_back({d.id + "/" + kind + ".q0", d.id, d.id + "/" + kind});
        }
    }
  }

  std::string queueFor(const Task &task) {
    // Commands are written for rank 0's device; rank r runs the same
    // stream on rank_devices[r].
    std::string dev = plan.rankDevices.front();
    std::string kind = task.resources.engineClass;
    if (!in.target.engines.count(kind) || in.target.engines.at(kind) == 0) kind = "compute";
    return dev + "/" + kind + ".q0";
  }

  // Step 5: commands in an issue order, tokens across queues, buffers.
  void commands() {
    const PortablePlan &p = in.portable;
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < p.tasks.size(); ++i) index[p.tasks[i].id] = i;
    std::vector<int> indeg(p.tasks.size(), 0);
    for (size_t i = 0; i < p.tasks.size(); ++i) indeg[i] = p.tasks[i].dependsOn.size();
    std::vector<std::string> queueOf(p.tasks.size());
    for (size_t i = 0; i < p.tasks.size(); ++i) queueOf[i] = queueFor(p.tasks[i]);
    // Kahn's order, preferring ready tasks that need no other queue's
    // result: on an in-order queue a waiting command would block the
    // independent work behind it (interior rows behind the halo unpack).
    std::vector<size_t> order;
    std::vector<bool> done(p.tasks.size(), false);
    while (order.size() < p.tasks.size()) {
      size_t best = SIZE_MAX;
      bool bestCross = true;
      for (size_t i = 0; i < p.tasks.size(); ++i) {
        if (done[i] || indeg[i]) continue;
        bool cross = std::any_of(p.tasks[i].dependsOn.begin(), p.tasks[i].dependsOn.end(),
                                 [&](const std::string &d) { return queueOf[index.at(d)] != queueOf[i]; });
        if (best == SIZE_MAX || (bestCross && !cross)) {
          best = i;
          bestCross = cross;
        }
      }
      if (best == SIZE_MAX) return; // cycle: the portable verifier reports it
      done[best] = true;
      order.push_back(best);
      for (size_t i = 0; i < p.tasks.size(); ++i)
        if (!done[i] && contains(p.tasks[i].dependsOn, p.tasks[best].id)) --indeg[i];
    }
    std::map<std::string, std::string> cmdOf;
    std::map<std::string, int64_t> first, last;
    std::vector<std::vector<std::string>> signals(order.size());
    for (size_t n = 0; n < order.size(); ++n) {
      const Task &t = p.tasks[order[n]];
      Command c;
      c.id = "cmd." + t.id.substr(t.id.find('.') + 1);
      c.portableTask = t.id;
      std::vector<std::string> bufs;
      for (const std::string &b : t.reads) if (!contains(bufs, "region." + b.substr(4))) bufs.push_back("region." + b.substr(4));
      for (const std::string &b : t.writes) if (!contains(bufs, "region." + b.substr(4))) bufs.push_back("region." + b.substr(4));
      for (const std::string &b : bufs) {
        if (!first.count(b)) first[b] = n;
        last[b] = n;
      }
      auto impl = taskImpl.find(t.id);
      std::string implId = impl == taskImpl.end() ? "" : impl->second->id;
      if (t.resources.engineClass == "communication") {
        std::string group = "world";
        for (const Alternative &a : t.alternatives)
          if (covers("collective.halo-exchange", a.capability) && a.capability.size() > 24)
            group = a.capability.substr(25);
        c.body = CollectiveCommand{implId, queueOf[order[n]], t.resources.collective, group, bufs};
      } else {
        c.body = Launch{implId, queueOf[order[n]], bufs};
      }
      std::vector<std::string> waits;
      for (const std::string &d : t.dependsOn) {
        c.dependsOn.push_back(cmdOf.at(d));
        if (queueOf[index.at(d)] != queueOf[order[n]]) {
          std::string tok = "tok." + cmdOf.at(d).substr(4);
          waits.push_back(tok);
          size_t producer = std::find(order.begin(), order.end(), index.at(d)) - order.begin();
          if (!contains(signals[producer], tok)) signals[producer].push_back(tok);
        }
      }
      c.sync = makeSync(waits, {});
      cmdOf[t.id] = c.id;
      plan.commands.push_back(std::move(c));
    }
    for (size_t n = 0; n < order.size(); ++n)
      plan.commands[n].sync = makeSync(waitsOf(plan.commands[n].sync), signals[n]);

    // Buffers: externals are bound by the caller, parameters and state live
    // as long as the loaded model; the rest share an arena.
    std::string space = plan.devices.empty() ? "" : plan.devices.front().memorySpace;
    std::vector<Allocation> allocs;
    std::vector<size_t> arenaIndex;
    ArenaReport report{space, 0, 0, 0};
    for (const Buffer &b : p.buffers) {
      BufferRegion r;
      r.id = "region." + b.id.substr(4);
      r.portableBuffer = b.id;
      r.memorySpace = space;
      r.external = b.storage == StorageClass::External;
      r.persistent = b.storage == StorageClass::Persistent;
      r.bytes = b.bytes.upper;
      r.alignment = in.target.alignment;
      r.firstCommand = first.count(r.id) ? first[r.id] : 0;
      r.lastCommand = last.count(r.id) ? last[r.id] : 0;
      if (b.role == BufferRole::Workspace) {
        // The conservative bound gives way to what the chosen
        // implementation needs; work facts are untouched.
        r.replacedBoundBytes = b.bytes.upper;
        r.bytes = 0;
        for (const std::string &w : b.writers)
          if (auto it = taskImpl.find(w); it != taskImpl.end()) r.bytes = std::max(r.bytes, it->second->workspaceBytes);
      }
      if (r.external) {
        report.externalBytes += r.bytes;
      } else if (r.persistent) {
        report.persistentBytes += r.bytes;
      } else {
        allocs.push_back({r.bytes, r.firstCommand, r.lastCommand, -1});
        arenaIndex.push_back(plan.buffers.size());
      }
      plan.buffers.push_back(r);
    }
    ArenaPlan ap = planArena(allocs, in.target.alignment);
    for (size_t i = 0; i < allocs.size(); ++i) plan.buffers[arenaIndex[i]].offset = allocs[i].offset;
    report.arenaBytes = ap.peak;
    report.lowerBoundBytes = ap.lowerBound;
    plan.arenas.push_back(report);
  }

  void extension() {
    if (in.target.kind == "cpu") {
      int64_t perDevice = 0;
      for (const auto &d : plan.rankDevices) perDevice = std::max<int64_t>(perDevice, std::count(plan.rankDevices.begin(), plan.rankDevices.end(), d));
      plan.extension = CpuSchedule{std::max<int64_t>(1, in.target.cores / std::max<int64_t>(1, perDevice)), in.target.vectorBits};
      return;
    }
    CudaSchedule cs;
    for (const Command &c : plan.commands) {
      if (!std::holds_alternative<Launch>(c.body)) continue;
      const Task *t = in.portable.task(c.portableTask);
      if (!t) continue;
      CudaLaunchConfig l;
      l.command = c.id;
      if (t->kernel && t->kernel->numWarps > 0) {
        // One workgroup per block_rows destinations, num_warps warps each.
        l.blockX = std::min<int64_t>(t->kernel->numWarps * 32, in.target.maxThreadsPerBlock);
        int64_t rowsPerBlock = std::max<int64_t>(1, t->kernel->blockRows);
        l.gridX = std::max<int64_t>(1, (t->resources.parallelism.upper + rowsPerBlock - 1) / rowsPerBlock);
      } else {
        l.blockX = 256;
        l.gridX = std::max<int64_t>(1, (t->resources.parallelism.upper + 255) / 256);
      }
      cs.launches.push_back(l);
    }
    plan.extension = cs;
  }

  // Step 6: capacity, with the buffer to blame when one alone is too big.
  void capacity() {
    for (const Device &d : plan.devices) {
      int64_t ranksHere = std::count(plan.rankDevices.begin(), plan.rankDevices.end(), d.id);
      for (const BufferRegion &b : plan.buffers) {
        if (b.bytes * ranksHere <= d.memoryFreeBytes) continue;
        const Buffer *pb = in.portable.buffer(b.portableBuffer);
        fail("bind.capacity", "/buffers",
             "buffer `" + (pb ? pb->name : b.id) + "` needs " + formatBytes(b.bytes * ranksHere) +
                 (ranksHere > 1 ? " (" + std::to_string(ranksHere) + " ranks)" : std::string()) + ", device `" +
                 d.id + "` has " + formatBytes(d.memoryFreeBytes) + " free");
        return;
      }
      int64_t need = 0, persistent = 0, working = 0;
      for (const ArenaReport &a : plan.arenas)
        if (a.memorySpace == d.memorySpace) {
          need += (a.arenaBytes + a.externalBytes + a.persistentBytes) * ranksHere;
          persistent += a.persistentBytes * ranksHere;
          working += (a.arenaBytes + a.externalBytes) * ranksHere;
        }
      if (need <= d.memoryFreeBytes)
        continue;
      // What to shrink first: the largest tensors.
      std::vector<const BufferRegion *> largest;
      for (const BufferRegion &b : plan.buffers)
        if (b.memorySpace == d.memorySpace && b.bytes > 0) largest.push_back(&b);
      std::stable_sort(largest.begin(), largest.end(),
                       [](const BufferRegion *a, const BufferRegion *b) { return a->bytes > b->bytes; });
      std::string names;
      for (size_t i = 0; i < largest.size() && i < 3; ++i) {
        const Buffer *pb = in.portable.buffer(largest[i]->portableBuffer);
        names += (i ? ", `" : "`") + (pb ? pb->name : largest[i]->id) + "` " + formatBytes(largest[i]->bytes);
      }
      fail("bind.capacity", "/buffers",
           "the model does not fit: it needs " + formatBytes(need) + " on device `" + d.id + "` (" +
               std::to_string(ranksHere) + " rank(s): parameters and state " + formatBytes(persistent) +
               ", working memory " + formatBytes(working) + "), which has " + formatBytes(d.memoryFreeBytes) +
               " free; the largest tensors: " + names);
    }
  }
};
} // namespace

std::optional<ConcretePlan> bind(const BindInputs &in, Diagnostics &diags) {
  size_t before = diags.size();
  Gate g{in, diags, {}, {}};
  g.capability();
  if (diags.size() > before) return std::nullopt;
  g.implementations();
  if (diags.size() > before) return std::nullopt;
  g.resources();
  g.commands();
  g.extension();
  g.capacity();
  if (diags.size() > before) return std::nullopt;
  ConcretePlan &p = g.plan;
  p.portableId = in.portable.id;
  p.portableDigest = digestOf(toJson(in.portable));
  p.targetId = in.target.id;
  p.targetFingerprint = in.target.fingerprint();
  p.deploymentId = in.deployment.id;
  p.deploymentFingerprint = in.deployment.fingerprint();
  p.abiFingerprint = in.target.abiFingerprint();
  p.plannerRevision = kPlannerRevision;
  p.planningEvidenceRevision = in.evidence.planning.revision;
  p.planningEvidenceFingerprint = digestOf(in.evidence.raw.at("planning"));
  p.implementationPolicyFingerprint = in.implementations.fingerprint();
  p.id = "concrete." + in.portable.id.substr(in.portable.id.find('.') + 1) + "." + in.target.id;
  return std::move(g.plan);
}

} // namespace linnet::planning

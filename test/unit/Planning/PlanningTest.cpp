//===- PlanningTest.cpp - Unit tests of the planning layers ---------------===//
#include "linnet/Planning/Binding.h"
#include "linnet/Planning/Derived.h"

#include <gtest/gtest.h>

#include <random>

using namespace linnet::planning;

TEST(Sha256, FipsVectors) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(MemoryPlanner, LiveBuffersNeverOverlapAndPeakIsNearLowerBound) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<Allocation> a;
    for (int i = 0; i < 40; ++i) {
      int64_t first = rng() % 30;
      a.push_back({int64_t(1 + rng() % 5000), first, first + int64_t(rng() % 6), -1});
    }
    ArenaPlan plan = planArena(a, 64);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].offset % 64, 0);
      EXPECT_LE(a[i].offset + a[i].bytes, plan.peak);
      for (size_t j = i + 1; j < a.size(); ++j) {
        bool live = a[i].first <= a[j].last && a[j].first <= a[i].last;
        bool overlap = a[i].offset < a[j].offset + a[j].bytes && a[j].offset < a[i].offset + a[i].bytes;
        EXPECT_FALSE(live && overlap) << i << " " << j;
      }
    }
    EXPECT_GE(plan.peak, plan.lowerBound - 64 * 40);
    // Largest-first placement stays within 1.5x of the bound on these.
    EXPECT_LE(plan.peak, plan.lowerBound * 3 / 2);
  }
}

TEST(MemoryPlanner, DisjointLifetimesShareMemory) {
  std::vector<Allocation> a = {{1000, 0, 1, -1}, {1000, 2, 3, -1}, {500, 1, 2, -1}};
  ArenaPlan plan = planArena(a, 64);
  EXPECT_EQ(a[0].offset, a[1].offset);
  EXPECT_EQ(plan.peak, 1024 + 500);
}

TEST(ConcreteAdt, BodiesAndSyncAreOrthogonal) {
  CommandBody launch = Launch{"impl.a", "cpu:0/compute.q0", {}};
  CommandBody barrier = Barrier{"world"};
  CommandBody host = HostCall{"impl.h", {}};
  EXPECT_NE(bodyImplementation(launch), nullptr);
  EXPECT_NE(bodyQueue(launch), nullptr);
  EXPECT_EQ(bodyImplementation(barrier), nullptr);
  EXPECT_EQ(bodyQueue(barrier), nullptr);
  EXPECT_NE(bodyImplementation(host), nullptr);
  EXPECT_EQ(bodyQueue(host), nullptr); // host calls own no queue
  EXPECT_TRUE(std::holds_alternative<NoSync>(makeSync({}, {})));
  EXPECT_TRUE(std::holds_alternative<WaitSync>(makeSync({"t"}, {})));
  EXPECT_TRUE(std::holds_alternative<SignalSync>(makeSync({}, {"t"})));
  EXPECT_TRUE(std::holds_alternative<WaitSignalSync>(makeSync({"a"}, {"b"})));
}

TEST(ConcreteJson, RoundTripIsByteIdentical) {
  ConcretePlan p;
  p.id = "c";
  p.commands.push_back({"cmd.a", Launch{"impl.a", "q", {"r"}}, SignalSync{{"tok.a"}}, {}, "task.a"});
  p.commands.push_back({"cmd.b", Wait{"tok.a"}, NoSync{}, {"cmd.a"}, ""});
  p.commands.push_back({"cmd.c", HostCall{"impl.c", {}}, WaitSignalSync{{"x"}, {"y"}}, {}, "task.c"});
  p.extension = CudaSchedule{{{"cmd.a", 4, 128, 0}}};
  std::string once = canonicalDump(toJson(p));
  EXPECT_EQ(canonicalDump(toJson(concreteFromJson(Json::parse(once)))), once);
}

TEST(PlanSet, DominanceAndSelection) {
  std::vector<Objective> objs = {{"obj.latency", "latency", "minimize", 0},
                                 {"obj.mem", "peak_memory_bytes", "minimize", 1}};
  std::vector<Candidate> c = {{"a", "", "", {{"latency", 2}, {"peak_memory_bytes", 10}}, true, ""},
                              {"b", "", "", {{"latency", 1}, {"peak_memory_bytes", 20}}, true, ""},
                              {"c", "", "", {{"latency", 3}, {"peak_memory_bytes", 30}}, true, ""},
                              {"d", "", "", {}, false, "[bind.capacity] too big"}};
  PlanSet set = planSet(c, objs);
  EXPECT_EQ(set.selected, "b"); // non-dominated, best on the first objective
  ASSERT_EQ(set.dominance.size(), 2u);
  EXPECT_EQ(set.dominated, std::vector<std::string>{"c"});
  // a dominates c on both objectives, b on latency only (c is worse there).
  EXPECT_EQ(set.dominance[0].dominant, "a");
  EXPECT_EQ(set.dominance[0].on, (std::vector<std::string>{"latency", "peak_memory_bytes"}));
  std::string once = canonicalDump(toJson(set));
  EXPECT_EQ(canonicalDump(toJson(planSetFromJson(Json::parse(once)))), once);
}

TEST(Portable, VerifierNamesCycleAndNegativeFacts) {
  PortablePlan p;
  p.sourceFile = "x.mlir";
  p.sourceDigest = "sha256:" + sha256Hex("x");
  Task a;
  a.id = "task.a";
  a.kind = "compute";
  a.dependsOn = {"task.b"};
  a.resources = {"compute", {1, 1}, {}, {"f32"}, ""};
  a.facts.derivation = "test";
  a.facts.ops = {-1, 4};
  a.provenance = {"op", "x.mlir:1:1", {"func:f"}};
  Task b = a;
  b.id = "task.b";
  b.dependsOn = {"task.a"};
  b.facts.ops = {0, 4};
  p.tasks = {a, b};
  Diagnostics d = verifyPortable(p);
  auto has = [&](const std::string &code) {
    return std::any_of(d.begin(), d.end(), [&](const Diagnostic &x) { return x.code == code; });
  };
  EXPECT_TRUE(has("portable.dag"));
  EXPECT_TRUE(has("portable.work-facts"));
  std::string once = canonicalDump(toJson(p));
  EXPECT_EQ(canonicalDump(toJson(portableFromJson(Json::parse(once)))), once);
}

namespace {
/// Two queues: a -> b on q0, c on q1 depending on a (through a token).
ConcretePlan tinyConcrete() {
  ConcretePlan c;
  c.id = "tiny";
  c.commands.push_back({"a", Launch{"impl.a", "q0", {}}, SignalSync{{"tok.a"}}, {}, "task.a"});
  c.commands.push_back({"b", Launch{"impl.b", "q0", {}}, NoSync{}, {"a"}, "task.b"});
  c.commands.push_back({"c", Launch{"impl.c", "q1", {}}, WaitSync{{"tok.a"}}, {"a"}, "task.c"});
  return c;
}
TimingProjection tinyProjection() {
  TimingProjection tp;
  tp.intervals = {{"a", "q0", 0, 10}, {"b", "q0", 10, 30}, {"c", "q1", 10, 15}};
  tp.makespanNs = 30;
  tp.serialNs = 35;
  tp.criticalPath = {"a", "b"};
  return tp;
}
} // namespace

TEST(Simulation, EventsFollowTheProjectionAndCarryLineage) {
  PortablePlan p;
  Task t;
  t.id = "task.a";
  t.provenance = {"op", "f.mlir:1:1", {"func:f", "op@f.mlir:1:1"}};
  p.tasks = {t};
  SimulationTrace st = simulate(p, tinyConcrete(), tinyProjection());
  std::map<std::string, std::pair<double, double>> span;
  for (const SimEvent &e : st.events) {
    if (e.kind == "begin") span[e.command].first = e.timeNs;
    if (e.kind == "end") span[e.command].second = e.timeNs;
  }
  for (const Interval &i : tinyProjection().intervals) {
    EXPECT_EQ(span[i.command].first, i.startNs) << i.command;
    EXPECT_EQ(span[i.command].second, i.endNs) << i.command;
  }
  EXPECT_EQ(st.endNs, 30);
  EXPECT_EQ(st.events.front().lineage, (std::vector<std::string>{"func:f", "op@f.mlir:1:1"}));
  bool signalled = false;
  for (const SimEvent &e : st.events) signalled |= e.kind == "signal" && e.token == "tok.a" && e.timeNs == 10;
  EXPECT_TRUE(signalled);
  std::string once = canonicalDump(toJson(st));
  EXPECT_EQ(canonicalDump(toJson(traceFromJson(Json::parse(once)))), once);
}

TEST(Observations, SupersedingNeverMutatesAndChainsByDigest) {
  ConcretePlan c = tinyConcrete();
  SimulationTrace st = simulate(PortablePlan{}, c, tinyProjection());
  ObservationSet r1 = observeSimulation(c, st);
  std::string before = canonicalDump(toJson(r1));
  ObservationSet r2 = supersede(r1, {{"concrete", "sha256:x"}}, "measured", {{"a", "task.a", "duration_ns", 12}});
  EXPECT_EQ(canonicalDump(toJson(r1)), before); // untouched
  EXPECT_EQ(r2.revision, 2);
  EXPECT_EQ(r2.supersedes, digestOf(toJson(r1)));
  EXPECT_TRUE(verifyObservations(r1).empty());
  EXPECT_TRUE(verifyObservations(r2, &r1).empty());
  ObservationSet forged = r2;
  forged.supersedes = digestOf(toJson(r2));
  EXPECT_FALSE(verifyObservations(forged, &r1).empty());
  std::string once = canonicalDump(toJson(r2));
  EXPECT_EQ(canonicalDump(toJson(observationsFromJson(Json::parse(once)))), once);
}

TEST(DerivedJson, ProjectionRejectsInconsistentOverlapWithItsPath) {
  Json j = toJson(tinyProjection());
  EXPECT_EQ(canonicalDump(toJson(projectionFromJson(j))), canonicalDump(j));
  j["overlap_ns"] = 1.0;
  try {
    projectionFromJson(j);
    FAIL() << "accepted";
  } catch (const SchemaError &e) {
    EXPECT_EQ(e.path, "/overlap_ns");
  }
}

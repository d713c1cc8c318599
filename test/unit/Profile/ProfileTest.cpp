// The profile library's products from a measurement made by hand: the
// observations a concrete plan's commands get, and the measured timeline.
#include "linnet/Profile/Profile.h"

#include <gtest/gtest.h>

using namespace linnet;

namespace {
profile::Measurement twoCalls() {
  profile::Measurement m;
  m.entry = "decode";
  m.timerTasks = {"task.a", "task.b", "task.gone"};
  m.commandTimers = true;
  // Calls of 100 and 300 ns; task.a runs twice in each call, task.b once;
  // task.gone has no command in the plan.
  m.calls = {{1000, 1100}, {2000, 2300}};
  m.commands = {{0, 0, 1010, 1020}, {0, 0, 1030, 1050}, {1, 0, 1060, 1090},
                {0, 1, 2010, 2040}, {0, 1, 2050, 2060}, {1, 1, 2100, 2200}, {2, 1, 2200, 2210}};
  return m;
}

planning::ConcretePlan plan() {
  planning::ConcretePlan c;
  c.id = "concrete.test";
  planning::Command a, b;
  a.id = "cmd.a";
  a.portableTask = "task.a";
  b.id = "cmd.b";
  b.portableTask = "task.b";
  c.commands = {a, b};
  return c;
}

double record(const planning::ObservationSet &o, const std::string &command, const std::string &metric) {
  for (const planning::ObservationRecord &r : o.records)
    if (r.command == command && r.metric == metric)
      return r.value;
  ADD_FAILURE() << "no " << metric << " record for " << command;
  return -1;
}
} // namespace

TEST(ProfileObservations, PerCommandMeansAndExecutionsPerCall) {
  planning::ObservationSet o = profile::observations(twoCalls(), plan(), "sha256:lib");
  EXPECT_EQ(o.source, "measured");
  EXPECT_EQ(o.subject.at("entry"), "decode");
  EXPECT_EQ(o.subject.at("library"), "sha256:lib");
  // task.a: 10, 20, 30, 10 ns over 4 executions in 2 calls.
  EXPECT_DOUBLE_EQ(record(o, "cmd.a", "duration_ns"), 17.5);
  EXPECT_DOUBLE_EQ(record(o, "cmd.a", "executions"), 2.0);
  EXPECT_DOUBLE_EQ(record(o, "cmd.b", "duration_ns"), 65.0);
  EXPECT_DOUBLE_EQ(record(o, "cmd.b", "executions"), 1.0);
  // The median of 100 and 300; inside timed commands of the plan: (70 + 130) / 2.
  EXPECT_DOUBLE_EQ(record(o, "linnet_entry_decode", "call_ns"), 200.0);
  EXPECT_DOUBLE_EQ(record(o, "linnet_entry_decode", "attributed_ns"), 100.0);
  for (size_t i = 1; i < o.records.size(); ++i)
    EXPECT_LE(std::tie(o.records[i - 1].command, o.records[i - 1].metric),
              std::tie(o.records[i].command, o.records[i].metric));
}

TEST(ProfileObservations, WithoutTimersOnlyTheCalls) {
  profile::Measurement m = twoCalls();
  m.commandTimers = false;
  m.commands.clear();
  planning::ObservationSet o = profile::observations(m, plan(), "");
  ASSERT_EQ(o.records.size(), 1u);
  EXPECT_EQ(o.records[0].metric, "call_ns");
}

TEST(ProfileTimeline, MeasuredRunReadsBackThroughTheSchema) {
  profile::Measurement m = twoCalls();
  planning::PortablePlan p;
  planning::Task t;
  t.id = "task.a";
  t.name = "decode: matvec";
  t.provenance.location = "model.ln:3:5";
  t.provenance.op = "linalg.matvec";
  p.tasks.push_back(t);
  planning::ProgramManifest manifest;
  planning::ObservationSet o = profile::observations(m, plan(), "");
  planning::Timeline tl = profile::measuredTimeline(m, p, plan(), manifest, o, "art");
  // Two thread names, two calls, seven command executions.
  ASSERT_EQ(tl.events.size(), 2u + 2u + 7u);
  EXPECT_EQ(tl.events[2].cat, "entry");
  EXPECT_DOUBLE_EQ(*tl.events[3].ts, 1.0); // 2000 ns after the first call, in us
  const planning::ChromeEvent &first = tl.events[4];
  EXPECT_EQ(first.name, "decode: matvec");
  EXPECT_EQ(first.args["command"], "cmd.a");
  EXPECT_EQ(first.args["source"], "model.ln:3:5");
  EXPECT_DOUBLE_EQ(*first.dur, 0.01);
  planning::Timeline back = planning::timelineFromJson(planning::toJson(tl));
  EXPECT_EQ(back.bundle.source, "measured");
  EXPECT_EQ(back.bundle.observations, planning::digestOf(planning::toJson(o)));
  EXPECT_EQ(back.bundle.artifact, "art");
  EXPECT_EQ(back.events.size(), tl.events.size());
}

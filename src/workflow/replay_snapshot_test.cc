// Snapshots in the workflow runtime: the replay state's JSON round trip, resume from the
// newest snapshot plus the log's tail (same result as from the whole log, recorded steps not
// called, only the tail scanned), snapshots written during a run that then dies, and every way
// a snapshot can be unusable falling back to the whole log with a warning.
#include "replay_snapshot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "loom/effects/errors.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/kernel/memory_snapshot_store.h"
#include "loom/util/error.h"
#include "loom/workflow/runtime.h"
#include "support/faulty_event_store.h"

namespace loom::workflow {
namespace {

using kernel::Event;
using kernel::EventType;
using kernel::ExecutionStatus;

// Forwards to a store and counts the events its scans visit.
class CountingEventStore : public testing::FaultyEventStore {
 public:
  using FaultyEventStore::FaultyEventStore;
  void scan(const std::string& id, int64_t from,
            const std::function<void(const Event&)>& visit) const override {
    FaultyEventStore::scan(id, from, [&](const Event& e) {
      ++scanned;
      visit(e);
    });
  }
  mutable std::atomic<int64_t> scanned{0};
};

// A snapshot store whose reads fail as a corrupt one does.
class BrokenSnapshotStore : public kernel::MemorySnapshotStore {
 public:
  std::optional<kernel::Snapshot> latest(const std::string& id) const override {
    throw DataLossError("snapshot of execution '" + id + "' at seq 3 is corrupt (injected)");
  }
};

class ReplaySnapshotTest : public ::testing::Test {
 protected:
  ReplaySnapshotTest() {
    // Five steps, a signal, two more steps: the output depends on every recorded value.
    workflows_.add("long", "", [this](WorkflowContext& ctx) {
      int64_t sum = 0;
      for (int i = 1; i <= 5; ++i) {
        sum += ctx.step("a" + std::to_string(i),
                        [&] {
                          ++calls_;
                          return json::value(i * 10);
                        })
                   .as_int64();
      }
      int64_t go = ctx.awaitSignal("go").as_int64();
      for (int i = 1; i <= 2; ++i) {
        sum += ctx.step("b" + std::to_string(i),
                        [&] {
                          ++calls_;
                          return json::value(i * go);
                        })
                   .as_int64();
      }
      return json::value{{"sum", sum}, {"input", ctx.input()}};
    });
  }

  std::unique_ptr<WorkflowRuntime> runtime(kernel::EventStore& store,
                                           kernel::SnapshotStore* snapshots, int64_t every) {
    RuntimeOptions options;
    options.clock = clock_;
    options.workers = 1;
    options.snapshots = snapshots;
    options.snapshotEveryEvents = every;
    options.onWarn = [this](std::string_view m) { warnings_.emplace_back(m); };
    return std::make_unique<WorkflowRuntime>(store, workflows_, tasks_, nullptr, options);
  }

  static std::vector<std::string> texts(const kernel::EventStore& store, const std::string& id) {
    std::vector<std::string> out;
    for (const auto& e : store.read(id)) out.push_back(kernel::toText(e));
    return out;
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  std::atomic<int> calls_{0};
  std::vector<std::string> warnings_;
};

TEST_F(ReplaySnapshotTest, ReplayStateRoundTripsThroughJson) {
  ReplayLog log;
  std::vector<Event> events{
      kernel::executionStarted("wf", json::object{{"q", "naïve ✓"}}, "alice", 1'780'000'000'123),
      kernel::stepCompleted("s1", "tool", "fetch", json::object{{"__loomContent", "ab"}}, 1),
      kernel::stepFailed("s2", "tool", "fetch", "stopped", "kill switch", true, 2),
      kernel::stepFailed("s2", "tool", "fetch", "stopped", "kill switch", true, 3),
      kernel::stepCompleted("s2", "tool", "fetch", nullptr, 4),
      kernel::stepFailed("s3", "flow", "s3", "internal", "kaput", false, 5),
      kernel::signalReceived("go", json::array{1, 2}, 6),
      kernel::signalReceived("go", "again", 7),
      kernel::executionParked("approval", "ok", "s4", 8)};
  for (std::size_t i = 0; i < events.size(); ++i) {
    events[i].seq = static_cast<int64_t>(i) + 1;
    log.apply(events[i]);
  }
  json::value state = replayStateToJson(log, 9);
  ReplayLog back = replayStateFromJson(json::parse(json::toText(state), "state"), "e1", 9);
  EXPECT_EQ(json::toText(replayStateToJson(back, 9)), json::toText(state));
  EXPECT_EQ(back.workflow, "wf");
  EXPECT_EQ(back.subject, std::optional<std::string>("alice"));
  EXPECT_EQ(back.startedAtMillis, 1'780'000'000'123);
  EXPECT_EQ(back.nextSeq, 10);
  EXPECT_EQ(back.snapshotSeq, 9);
  EXPECT_TRUE(back.steps.at("s2").completed);
  EXPECT_TRUE(back.steps.at("s2").output.is_null());
  EXPECT_EQ(back.steps.at("s2").failedAttempts, 2);
  EXPECT_FALSE(back.steps.at("s3").completed);
  EXPECT_FALSE(back.steps.at("s3").retryable);
  EXPECT_EQ(back.steps.at("s3").errorMessage, "kaput");
  EXPECT_EQ(back.signals.at("go").size(), 2u);
  EXPECT_EQ(back.lastType, EventType::kExecutionParked);
  EXPECT_EQ(back.lastParked.at("waitingFor").as_string(), "ok");
}

TEST_F(ReplaySnapshotTest, ACheckpointForgetsItsPrefixesOnlyAndRoundTrips) {
  ReplayLog log;
  std::vector<Event> events{
      kernel::executionStarted("wf", nullptr, std::nullopt, 1),
      kernel::stepCompleted("a#turn:1:model", "llm", "m", 1, 2),
      kernel::stepCompleted("a#turn:1:tool:0", "tool", "t", 2, 3),
      kernel::stepCompleted("a#turn:10:model", "llm", "m", 3, 4),
      kernel::stepCompleted("before", "flow", "before", 4, 5),
      kernel::signalReceived("approve:a#turn:1:tool:0", true, 6),
      kernel::signalReceived("approve:a#turn:10:tool:0", true, 7)};
  for (std::size_t i = 0; i < events.size(); ++i) {
    events[i].seq = static_cast<int64_t>(i) + 1;
    log.apply(events[i]);
  }
  log.checkpoint("a", json::object{{"turn", 2}}, {"a#turn:1:", "approve:a#turn:1:"});
  EXPECT_EQ(log.steps.size(), 2u);
  EXPECT_TRUE(log.steps.contains("a#turn:10:model"));
  EXPECT_TRUE(log.steps.contains("before"));
  EXPECT_EQ(log.signals.size(), 1u);
  EXPECT_TRUE(log.signals.contains("approve:a#turn:10:tool:0"));

  json::value state = replayStateToJson(log, 7);
  EXPECT_EQ(state.at("version").as_int64(), 2);
  ReplayLog back = replayStateFromJson(json::parse(json::toText(state), "state"), "e1", 7);
  EXPECT_EQ(back.checkpoints.at("a"), (json::value{{"turn", 2}}));
  EXPECT_EQ(json::toText(replayStateToJson(back, 7)), json::toText(state));

  // A version 1 state (written before checkpoints) still reads, with none.
  json::object v1 = state.as_object();
  v1["version"] = 1;
  v1.erase("checkpoints");
  EXPECT_TRUE(replayStateFromJson(v1, "e1", 7).checkpoints.empty());
  json::object bad = state.as_object();
  bad["checkpoints"] = json::array{};
  EXPECT_THROW(replayStateFromJson(bad, "e1", 7), DataLossError);
}

TEST_F(ReplaySnapshotTest, UnreadableStatesAreTypedErrorsNamingExecutionAndSeq) {
  ReplayLog log;
  log.apply(Event{1, EventType::kExecutionStarted, 0, {{"workflow", "wf"}, {"input", nullptr}}});
  json::value good = replayStateToJson(log, 1);

  json::value newer = good;
  newer.as_object()["version"] = kSnapshotStateVersion + 1;
  EXPECT_THROW(replayStateFromJson(newer, "e1", 1), FailedPreconditionError);

  json::value noSteps = good;
  noSteps.as_object().erase("steps");
  for (const json::value& bad : {json::value("garbage"), noSteps, good}) {
    try {
      replayStateFromJson(bad, "e1", bad == good ? 2 : 1);  // `good` under the wrong seq
      ADD_FAILURE() << "accepted " << json::toText(bad);
    } catch (const DataLossError& e) {
      EXPECT_NE(std::string(e.what()).find("execution 'e1' at seq"), std::string::npos);
    }
  }
}

TEST_F(ReplaySnapshotTest, ResumeReadsTheSnapshotAndOnlyTheTailWithTheSameResult) {
  kernel::MemoryEventStore plainStore, snapStore;
  CountingEventStore counted(snapStore);
  kernel::MemorySnapshotStore snapshots;
  auto plain = runtime(plainStore, nullptr, 0);
  auto snapped = runtime(counted, &snapshots, 1000);

  EXPECT_EQ(plain->start("long", "in", {.id = "x"}).status, ExecutionStatus::kParked);
  EXPECT_EQ(snapped->start("long", "in", {.id = "x"}).status, ExecutionStatus::kParked);
  EXPECT_EQ(calls_, 10);
  // Parking wrote a snapshot at the log's end.
  auto parkedAt = snapshots.latest("x");
  ASSERT_TRUE(parkedAt.has_value());
  EXPECT_EQ(parkedAt->seq, snapStore.info("x")->nextSeq - 1);

  counted.scanned = 0;
  RunResult fromFull = plain->signal("x", "go", json::value(7));
  RunResult fromSnapshot = snapped->signal("x", "go", json::value(7));
  EXPECT_EQ(counted.scanned, 1);  // the SIGNAL_RECEIVED after the snapshot, nothing else
  EXPECT_EQ(fromSnapshot.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(fromSnapshot.output, fromFull.output);
  EXPECT_EQ(fromSnapshot.output.at("sum").as_int64(), 150 + 7 + 14);
  EXPECT_EQ(fromSnapshot.replayedSteps, 5);
  EXPECT_EQ(fromSnapshot.effectsRun, 2);
  EXPECT_EQ(calls_, 14);  // a1..a5 were replayed, not called
  EXPECT_EQ(texts(snapStore, "x"), texts(plainStore, "x"));
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(ReplaySnapshotTest, SnapshotsWrittenEveryNEventsSurviveARunThatDies) {
  kernel::MemoryEventStore inner;
  testing::FaultyEventStore faulty(inner);
  kernel::MemorySnapshotStore snapshots;
  faulty.failFromAppend(6);  // started, a1..a4 recorded; a5's append dies (and so does the rest)
  EXPECT_THROW(runtime(faulty, &snapshots, 2)->start("long", "in", {.id = "d"}), UnavailableError);
  EXPECT_EQ(inner.info("d")->nextSeq, 6);
  EXPECT_EQ(snapshots.latest("d")->seq, 4);  // written at 2 and 4; 2 pruned
  int64_t count = 0;
  snapshots.forEach([&](const kernel::Snapshot&) { ++count; });
  EXPECT_EQ(count, 1);

  CountingEventStore counted(inner);
  calls_ = 0;
  RunResult r = runtime(counted, &snapshots, 2)->resume("d");
  EXPECT_EQ(r.status, ExecutionStatus::kParked);
  EXPECT_EQ(counted.scanned, 1);  // a4's STEP_COMPLETED, seq 5
  EXPECT_EQ(r.replayedSteps, 4);
  EXPECT_EQ(calls_, 1);  // only a5, whose record was lost with the process
  RunResult done = runtime(counted, &snapshots, 2)->signal("d", "go", json::value(1));
  EXPECT_EQ(done.output.at("sum").as_int64(), 150 + 1 + 2);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(ReplaySnapshotTest, RetryableFailuresSurviveASnapshot) {
  bool stopped = true;
  workflows_.add("stoppable", "", [&](WorkflowContext& ctx) {
    return ctx.step("s", [&]() -> json::value {
      if (stopped) throw effects::EffectStopped("s");
      return json::value("ran");
    });
  });
  kernel::MemoryEventStore store;
  kernel::MemorySnapshotStore snapshots;
  EXPECT_EQ(runtime(store, &snapshots, 100)->start("stoppable", nullptr, {.id = "k"}).status,
            ExecutionStatus::kParked);
  ASSERT_TRUE(snapshots.latest("k").has_value());
  stopped = false;
  RunResult done = runtime(store, &snapshots, 100)->resume("k");
  EXPECT_EQ(done.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(store.read("k").back().type, EventType::kExecutionCompleted);
  EXPECT_EQ(store.read("k")[3].data.at("attempt").as_int64(), 2);  // the failure was restored
}

TEST_F(ReplaySnapshotTest, UnusableSnapshotsAreReportedAndTheWholeLogIsReplayed) {
  kernel::MemoryEventStore inner;
  CountingEventStore counted(inner);
  auto plain = runtime(inner, nullptr, 0);
  ASSERT_EQ(plain->start("long", "in", {.id = "p"}).status, ExecutionStatus::kParked);
  int64_t last = inner.info("p")->nextSeq - 1;
  int64_t startedAt = inner.read("p")[0].atMillis;

  kernel::MemorySnapshotStore garbage, beyond, otherRun, newer;
  garbage.put({"p", last, json::object{{"version", 1}, {"seq", last}}});
  beyond.put({"p", last + 5, replayStateToJson(ReplayLog{}, last + 5)});
  ReplayLog earlier;
  earlier.workflow = "long";
  earlier.startedAtMillis = startedAt - 1000;
  otherRun.put({"p", last, replayStateToJson(earlier, last)});
  newer.put({"p", last, json::object{{"version", kSnapshotStateVersion + 1}}});
  BrokenSnapshotStore broken;

  for (kernel::SnapshotStore* store :
       std::vector<kernel::SnapshotStore*>{&garbage, &beyond, &otherRun, &newer, &broken}) {
    warnings_.clear();
    counted.scanned = 0;
    calls_ = 0;
    RunResult r = runtime(counted, store, 0)->resume("p");
    EXPECT_EQ(r.status, ExecutionStatus::kParked);
    EXPECT_EQ(r.replayedSteps, 5);
    EXPECT_EQ(calls_, 0);
    EXPECT_EQ(counted.scanned, last);  // the whole log
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find("'p'"), std::string::npos) << warnings_[0];
    EXPECT_NE(warnings_[0].find("the log is replayed"), std::string::npos) << warnings_[0];
  }
}

TEST_F(ReplaySnapshotTest, NegativeIntervalIsRefused) {
  kernel::MemoryEventStore store;
  EXPECT_THROW(runtime(store, nullptr, -1), InvalidArgumentError);
}

}  // namespace
}  // namespace loom::workflow

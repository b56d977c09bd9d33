// Runs pinned to their code version (code_version.h, ADR 0029): a run records the code it
// started on and continues only on it; the check holds when the run is read from a snapshot;
// a run recorded before versions existed goes on.
#include <gtest/gtest.h>

#include "loom/kernel/memory_event_store.h"
#include "loom/kernel/memory_snapshot_store.h"
#include "loom/util/clock.h"
#include "loom/workflow/code_version.h"
#include "loom/workflow/runtime.h"

namespace loom::workflow {
namespace {

using kernel::ExecutionStatus;

class VersioningTest : public ::testing::Test {
 protected:
  VersioningTest() {
    workflows_.add("w", "", [this](WorkflowContext& ctx) {
      ctx.step("a", [] { return json::value(1); });
      json::value go = ctx.awaitSignal("go");
      ctx.step("b", [this] {
        ++bRuns_;
        return json::value(2);
      });
      return go;
    });
  }

  std::unique_ptr<WorkflowRuntime> runtime(const std::string& version,
                                           kernel::SnapshotStore* snapshots = nullptr) {
    RuntimeOptions options;
    options.clock = clock_;
    options.workers = 1;
    options.codeVersion = version;
    options.snapshots = snapshots;
    options.snapshotEveryEvents = snapshots != nullptr ? 1 : 0;
    return std::make_unique<WorkflowRuntime>(store_, workflows_, tasks_, nullptr, options);
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  kernel::MemoryEventStore store_{clock_};
  WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  int bRuns_ = 0;
};

TEST_F(VersioningTest, ARunContinuesOnlyOnTheVersionItStartedOn) {
  auto v1 = runtime("v1");
  ASSERT_EQ(v1->start("w", json::value(), {.id = "r"}).status, ExecutionStatus::kParked);
  EXPECT_EQ(store_.read("r").front().data.at("codeVersion"), "v1");

  auto v2 = runtime("v2");
  int64_t before = store_.info("r")->nextSeq;
  try {
    v2->signal("r", "go", json::value("x"));
    FAIL() << "a run of v1 went on on v2";
  } catch (const VersionMismatchError& e) {
    EXPECT_EQ(e.recorded(), "v1");
    EXPECT_EQ(e.current(), "v2");
    std::string m = e.what();
    EXPECT_NE(m.find("'r' started on code version v1"), std::string::npos) << m;
    EXPECT_NE(m.find("this code is version v2"), std::string::npos) << m;
    EXPECT_NE(m.find("pinned"), std::string::npos) << m;
  }
  EXPECT_EQ(bRuns_, 0) << "a step ran on the other version";
  EXPECT_EQ(store_.info("r")->nextSeq, before + 1) << "only the signal is recorded";
  EXPECT_EQ(store_.info("r")->status, ExecutionStatus::kParked);
  auto lease = store_.currentLease("r");
  EXPECT_TRUE(!lease || lease->released) << "the refused runner let the run go";

  RunResult done = v1->resume("r");  // its own version takes it, signal and all
  EXPECT_EQ(done.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(done.output, "x");
  EXPECT_EQ(bRuns_, 1);
}

TEST_F(VersioningTest, TheVersionHoldsWhenTheRunIsReadFromASnapshot) {
  kernel::MemorySnapshotStore snapshots;
  runtime("v1", &snapshots)->start("w", json::value(), {.id = "r"});
  ASSERT_TRUE(snapshots.latest("r")) << "the park wrote no snapshot";
  store_.append("r", store_.info("r")->nextSeq,
                {kernel::signalReceived("go", json::value("x"), clock_->nowMillis())});
  EXPECT_THROW(runtime("v2", &snapshots)->resume("r"), VersionMismatchError);
  EXPECT_EQ(runtime("v1", &snapshots)->resume("r").status, ExecutionStatus::kCompleted);
}

TEST_F(VersioningTest, ARunRecordedWithoutAVersionGoesOn) {
  runtime("")->start("w", json::value(), {.id = "old"});
  EXPECT_FALSE(store_.read("old").front().data.contains("codeVersion"));
  EXPECT_EQ(runtime("v2")->signal("old", "go", json::value("x")).status,
            ExecutionStatus::kCompleted);
}

// ctx.patched: the old code of workflow "p" runs step "old" after "a"; the new code asks
// patched("c1") there and runs "new" on true. Each test starts runs on one code and goes on
// on the other (a runtime of its own: another process).
class PatchedTest : public ::testing::Test {
 protected:
  void addP(WorkflowRegistry& registry, bool newCode, bool patchAfterSignal = false) {
    registry.add("p", "", [this, newCode, patchAfterSignal](WorkflowContext& ctx) {
      ctx.step("a", [] { return json::value(1); });
      if (patchAfterSignal) ctx.awaitSignal("go");
      bool takeNew = newCode && ctx.patched("c1");
      if (newCode) {
        EXPECT_EQ(ctx.patched("c1"), takeNew) << "asked again in the run";
      }
      ctx.step(takeNew ? "new" : "old", [this, takeNew] {
        (takeNew ? newRuns_ : oldRuns_)++;
        return json::value(takeNew);
      });
      if (!patchAfterSignal) ctx.awaitSignal("go");
      return json::value(takeNew ? "new" : "old");
    });
  }
  std::unique_ptr<WorkflowRuntime> runtime(WorkflowRegistry& registry) {
    RuntimeOptions options;
    options.clock = clock_;
    options.workers = 1;
    return std::make_unique<WorkflowRuntime>(store_, registry, tasks_, nullptr, options);
  }
  std::optional<json::value> marker(const std::string& id) {
    for (const auto& e : store_.read(id)) {
      if (e.type == kernel::EventType::kStepCompleted && e.data.at("stepId") == "loom:patch:c1") {
        return e.data.at("output");
      }
    }
    return std::nullopt;
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  kernel::MemoryEventStore store_{clock_};
  WorkflowRegistry oldCode_, newCode_;
  effects::TaskRegistry tasks_;
  int oldRuns_ = 0, newRuns_ = 0;
};

TEST_F(PatchedTest, ARunThatRecordedPastThePointKeepsTheOldPath) {
  addP(oldCode_, false);
  addP(newCode_, true);
  runtime(oldCode_)->start("p", json::value(), {.id = "r"});
  RunResult r = runtime(newCode_)->signal("r", "go", json::value(1));
  EXPECT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(r.output, "old");
  EXPECT_EQ(marker("r"), json::value(false)) << "the answer is journaled";
  EXPECT_EQ(oldRuns_, 1);
  EXPECT_EQ(newRuns_, 0);
}

TEST_F(PatchedTest, ANewRunTakesTheNewPathAndKeepsItAcrossAResume) {
  addP(newCode_, true);
  runtime(newCode_)->start("p", json::value(), {.id = "r"});
  EXPECT_EQ(marker("r"), json::value(true));
  RunResult r = runtime(newCode_)->signal("r", "go", json::value(1));  // a new process
  EXPECT_EQ(r.output, "new");
  EXPECT_EQ(newRuns_, 1) << "the recorded step replays";
}

TEST_F(PatchedTest, ARunParkedBeforeThePointTakesTheNewPath) {
  addP(oldCode_, false, true);
  addP(newCode_, true, true);
  runtime(oldCode_)->start("p", json::value(), {.id = "r"});
  EXPECT_FALSE(marker("r"));
  RunResult r = runtime(newCode_)->signal("r", "go", json::value(1));
  EXPECT_EQ(r.output, "new") << "it reaches the point on the new code";
  EXPECT_EQ(marker("r"), json::value(true));
}

// As a timer step's: the run fails as data loss, naming the step (as recordWakeAt's).
TEST_F(PatchedTest, ARecordedAnswerThatIsNoBooleanIsDataLoss) {
  addP(newCode_, true);
  store_.append("r", 1, {kernel::executionStarted("p", json::value(), std::nullopt, 0)});
  store_.append("r", 2,
                {kernel::stepCompleted("a", "flow", "a", json::value(1), 0),
                 kernel::stepCompleted("loom:patch:c1", "flow", "loom:patch:c1",
                                       json::value("yes"), 0)});
  RunResult r = runtime(newCode_)->resume("r");
  EXPECT_EQ(r.status, ExecutionStatus::kFailed);
  EXPECT_NE(json::toText(r.error).find("the patch step 'loom:patch:c1' recorded \\\"yes\\\""),
            std::string::npos)
      << json::toText(r.error);
  EXPECT_EQ(oldRuns_ + newRuns_, 0);
}

TEST(CodeVersionTest, TheProgramsBuildAndAFileSetsDigest) {
  const std::string& build = programCodeVersion();
  EXPECT_EQ(build.rfind("build:", 0), 0U) << build;
  EXPECT_GT(build.size(), 6U + 16U);
  EXPECT_EQ(&build, &programCodeVersion()) << "computed once";
  EXPECT_THROW(filesCodeVersion("app:", {"/nonexistent/loom-app.toml"}), NotFoundError);
}

}  // namespace
}  // namespace loom::workflow

namespace loom::workflow {
namespace {

// execution.versioning = "latest": a run of v1 continues on v2 where v2 replays its log, and
// parks "diverged" (running nothing) where it does not. Workflow "w" asks for step `first`,
// waits for "go", then runs `second`; each version is its own registry (its own program).
class LatestTest : public ::testing::Test {
 protected:
  void addW(WorkflowRegistry& registry, std::string first, std::string second) {
    registry.add("w", "", [this, first, second](WorkflowContext& ctx) {
      ctx.step(first, [this] { return json::value(++runs_); });
      ctx.awaitSignal("go");
      ctx.step(second, [this] { return json::value(++runs_); });
      return json::value("done");
    });
  }
  std::unique_ptr<WorkflowRuntime> runtime(const WorkflowRegistry& registry,
                                           const std::string& version, Versioning versioning) {
    RuntimeOptions options;
    options.clock = clock_;
    options.workers = 1;
    options.codeVersion = version;
    options.versioning = versioning;
    return std::make_unique<WorkflowRuntime>(store_, registry, tasks_, nullptr, options);
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  kernel::MemoryEventStore store_{clock_};
  effects::TaskRegistry tasks_;
  int runs_ = 0;
};

TEST_F(LatestTest, ARunContinuesOnNewCodeThatReplaysItsLog) {
  WorkflowRegistry v1, v2;
  addW(v1, "a", "b");
  addW(v2, "a", "b-v2");  // changed after the point the run recorded: new work
  runtime(v1, "v1", Versioning::kPinned)->start("w", json::value(), {.id = "r"});
  EXPECT_THROW(runtime(v2, "v2", Versioning::kPinned)->resume("r"), VersionMismatchError);
  RunResult done = runtime(v2, "v2", Versioning::kLatest)->signal("r", "go", json::value(1));
  EXPECT_EQ(done.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(runs_, 2) << "a replayed; b-v2 ran once";
}

TEST_F(LatestTest, ARecordedStepTheNewCodeDoesNotAskForParksTheRunDivergedRunningNothing) {
  WorkflowRegistry v1, v2;
  addW(v1, "a", "b");
  addW(v2, "a-renamed", "b");
  runtime(v1, "v1", Versioning::kPinned)->start("w", json::value(), {.id = "r"});
  RunResult parked = runtime(v2, "v2", Versioning::kLatest)->signal("r", "go", json::value(1));
  EXPECT_EQ(parked.status, ExecutionStatus::kParked);
  EXPECT_EQ(parked.parkReason, "diverged");
  EXPECT_NE(parked.parkDetail.find("the log recorded step 'a'"), std::string::npos)
      << parked.parkDetail;
  EXPECT_NE(parked.parkDetail.find("asked for step 'a-renamed'"), std::string::npos)
      << parked.parkDetail;
  EXPECT_EQ(runs_, 1) << "a step ran on mixed code";
  const auto last = store_.read("r").back();
  EXPECT_EQ(last.data.at("reason"), "diverged");
  EXPECT_EQ(last.data.at("stepId"), "a");
  // Resumed on the same code it parks where it was; on its own code it finishes.
  EXPECT_EQ(runtime(v2, "v2", Versioning::kLatest)->resume("r").parkReason, "diverged");
  EXPECT_EQ(runtime(v1, "v1", Versioning::kLatest)->resume("r").status,
            ExecutionStatus::kCompleted);
}

TEST_F(LatestTest, NewCodeThatEndsBeforeARecordedStepParksDiverged) {
  WorkflowRegistry v1, v2;
  addW(v1, "a", "b");
  v2.add("w", "", [](WorkflowContext&) { return json::value("nothing"); });
  runtime(v1, "v1", Versioning::kPinned)->start("w", json::value(), {.id = "r"});
  RunResult r = runtime(v2, "v2", Versioning::kLatest)->resume("r");
  EXPECT_EQ(r.parkReason, "diverged");
  EXPECT_NE(r.parkDetail.find("completed without asking for it"), std::string::npos)
      << r.parkDetail;
}

}  // namespace
}  // namespace loom::workflow

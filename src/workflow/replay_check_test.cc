// Replay checks (replay_check.h): the code at hand against recorded logs, in memory. Nothing
// runs; unchanged code matches completed, parked and failed runs; a renamed, removed or
// re-typed step, a step asked for after the run's end, and a run that now ends where it went
// on are divergences naming the step; over 1,000 runs exactly the ones with an injected
// divergence are found.
#include "loom/workflow/replay_check.h"

#include <gtest/gtest.h>

#include <set>

#include "loom/kernel/memory_event_store.h"
#include "loom/util/clock.h"
#include "loom/util/error.h"
#include "loom/workflow/runtime.h"

namespace loom::workflow {
namespace {

using kernel::ExecutionStatus;

// One workflow "w" whose shape a test changes between recording and checking.
struct Shape {
  std::string second = "b";    // the id of the second step
  std::string effect = "echo"; // the effect of the first
  bool third = false;          // asks for a third step after the signal
  bool waits = true;           // waits for signal "go" after b
  bool fails = false;          // b fails for good
};

class ReplayCheckTest : public ::testing::Test {
 protected:
  ReplayCheckTest() {
    for (const char* effect : {"echo", "other"}) {
      tasks_.add(effects::TaskDefinition{.id = effect, .kind = "tool"},
                 [this](const effects::EffectContext&, json::value in) {
                   ++ran_;
                   return in;
                 });
    }
    workflows_.add("w", "", [this](WorkflowContext& ctx) {
      ctx.effect("a", shape_.effect, ctx.input());
      ctx.step(shape_.second, [this]() -> json::value {
        ++ran_;
        if (shape_.fails) throw FailedPreconditionError("b is broken");
        return json::value(2);
      });
      if (shape_.waits) ctx.awaitSignal("go");
      if (shape_.third) ctx.step("c", [this] { return json::value(++ran_); });
      return json::value("done");
    });
  }

  RunResult record(const std::string& id, bool signalled = true) {
    WorkflowRuntime runtime(store_, workflows_, tasks_, nullptr, options());
    RunResult r = runtime.start("w", json::value(1), {.id = id});
    if (signalled && r.status == ExecutionStatus::kParked) r = runtime.signal(id, "go", 1);
    return r;
  }
  ReplayCheckResult check(const std::string& id) {
    int before = ran_;
    ReplayCheckResult r = checkReplay(id, store_.read(id), workflows_, tasks_);
    EXPECT_EQ(ran_, before) << "a replay check ran a step";
    return r;
  }
  RuntimeOptions options() {
    RuntimeOptions o;
    o.clock = clock_;
    o.workers = 1;
    return o;
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  kernel::MemoryEventStore store_{clock_};
  WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  Shape shape_;
  int ran_ = 0;
};

TEST_F(ReplayCheckTest, UnchangedCodeMatchesCompletedParkedAndFailedRunsAndLeavesTheirLogs) {
  ASSERT_EQ(record("done").status, ExecutionStatus::kCompleted);
  ASSERT_EQ(record("waiting", false).status, ExecutionStatus::kParked);
  shape_.fails = true;
  ASSERT_EQ(record("failed").status, ExecutionStatus::kFailed);
  shape_.fails = false;
  const auto before = store_.read("waiting").size();
  for (const char* id : {"done", "waiting", "failed"}) {
    ReplayCheckResult r = check(id);
    EXPECT_EQ(r.outcome, "matched") << id << ": " << r.stepId << " " << r.recorded << " / "
                                    << r.asked;
  }
  EXPECT_EQ(check("done").replayedSteps, 2);
  EXPECT_EQ(store_.read("waiting").size(), before) << "the check wrote to the run's log";
}

TEST_F(ReplayCheckTest, ARenamedStepIsADivergenceNamingTheRecordedOne) {
  record("r");
  shape_.second = "b2";
  ReplayCheckResult r = check("r");
  EXPECT_EQ(r.outcome, "diverged");
  EXPECT_EQ(r.stepId, "b");
  EXPECT_NE(r.asked.find("asked for step 'b2'"), std::string::npos) << r.asked;
}

TEST_F(ReplayCheckTest, AStepAskedForAsAnotherEffectIsADivergence) {
  record("r");
  shape_.effect = "other";
  ReplayCheckResult r = check("r");
  EXPECT_EQ(r.outcome, "diverged");
  EXPECT_EQ(r.stepId, "a");
  EXPECT_EQ(r.recorded, "it as a call of effect echo");
  EXPECT_EQ(r.asked, "asked for it as a call of effect other");
}

TEST_F(ReplayCheckTest, AStepAfterTheRecordedEndDivergesButAfterAParkIsWhereTheCheckStops) {
  record("done");
  record("waiting", false);
  shape_.third = true;
  EXPECT_EQ(check("waiting").outcome, "matched") << "the log ends before c: nothing to check";
  ReplayCheckResult r = check("done");
  EXPECT_EQ(r.outcome, "diverged");
  EXPECT_EQ(r.stepId, "c");
  EXPECT_EQ(r.recorded, "the run's end (EXECUTION_COMPLETED)");
}

TEST_F(ReplayCheckTest, ARunThatNowEndsWhereItWaitedAndAnUnknownWorkflowAreReported) {
  record("waiting", false);
  shape_.waits = false;
  ReplayCheckResult r = check("waiting");
  EXPECT_EQ(r.outcome, "diverged");
  EXPECT_EQ(r.asked, "completed there");
  WorkflowRegistry none;
  ReplayCheckResult unknown = checkReplay("waiting", store_.read("waiting"), none, tasks_);
  EXPECT_EQ(unknown.outcome, "unchecked");
  EXPECT_NE(unknown.recorded.find("'w' is not registered"), std::string::npos);
}

// A thousand recorded runs; the code then renames step b of the runs whose input is a
// multiple of 7 (their branch): exactly those runs diverge.
TEST_F(ReplayCheckTest, OverAThousandRunsExactlyTheRunsWithAnInjectedDivergenceAreFound) {
  bool renamed = false;
  workflows_.add("branchy", "", [&](WorkflowContext& ctx) {
    int64_t n = ctx.input().as_int64();
    ctx.step("a", [] { return json::value(1); });
    ctx.step(n % 7 == 0 && renamed ? "seven-v2" : n % 7 == 0 ? "seven" : "other",
             [] { return json::value(2); });
    return json::value(n);
  });
  WorkflowRuntime runtime(store_, workflows_, tasks_, nullptr, options());
  for (int64_t n = 0; n < 1000; ++n) {
    runtime.start("branchy", json::value(n), {.id = "run-" + std::to_string(n)});
  }
  renamed = true;
  std::set<std::string> diverged, expected;
  for (int64_t n = 0; n < 1000; n += 7) expected.insert("run-" + std::to_string(n));
  std::vector<ReplayCheckResult> results = checkReplays(store_, workflows_, tasks_);
  ASSERT_EQ(results.size(), 1000U);
  for (const auto& r : results) {
    ASSERT_NE(r.outcome, "unchecked") << r.executionId << ": " << r.recorded;
    if (r.outcome == "diverged") {
      EXPECT_EQ(r.stepId, "seven") << r.executionId;
      diverged.insert(r.executionId);
    }
  }
  EXPECT_EQ(diverged, expected);
}

}  // namespace
}  // namespace loom::workflow

// `loom upgrade` (upgrade.h): a pinned run moves to the code at hand only when its log replays
// there, by one journaled CODE_UPGRADED; then the new code continues it and the old refuses it.
#include <gtest/gtest.h>

#include "loom/kernel/memory_event_store.h"
#include "loom/util/clock.h"
#include "loom/workflow/code_version.h"
#include "loom/workflow/runtime.h"

namespace loom::workflow {
namespace {

using kernel::EventType;
using kernel::ExecutionStatus;

// Workflow "w": step `first`, a wait for signal "go" (or a timer), step "b".
class UpgradeTest : public ::testing::Test {
 protected:
  void addW(WorkflowRegistry& registry, std::string first, bool timer = false) {
    registry.add("w", "", [this, first, timer](WorkflowContext& ctx) {
      ctx.step(first, [this] { return json::value(++runs_); });
      if (timer) {
        ctx.sleep("nap", std::chrono::minutes(5));
      } else {
        ctx.awaitSignal("go");
      }
      ctx.step("b", [this] { return json::value(++runs_); });
      return json::value("done");
    });
  }
  std::unique_ptr<WorkflowRuntime> runtime(const WorkflowRegistry& registry,
                                           const std::string& version) {
    RuntimeOptions options;
    options.clock = clock_;
    options.workers = 1;
    options.codeVersion = version;
    return std::make_unique<WorkflowRuntime>(store_, registry, tasks_, nullptr, options);
  }
  std::vector<kernel::Event> upgrades(const std::string& id) {
    std::vector<kernel::Event> out;
    for (const auto& e : store_.read(id)) {
      if (e.type == EventType::kCodeUpgraded) out.push_back(e);
    }
    return out;
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  kernel::MemoryEventStore store_{clock_};
  effects::TaskRegistry tasks_;
  WorkflowRegistry v1_, v2_;
  int runs_ = 0;
};

TEST_F(UpgradeTest, AParkedRunMovesToCodeThatReplaysItAndOnlyThatCodeGoesOn) {
  addW(v1_, "a");
  addW(v2_, "a");
  runtime(v1_, "v1")->start("w", json::value(), {.id = "r"});
  EXPECT_THROW(runtime(v2_, "v2")->resume("r"), VersionMismatchError);

  UpgradeResult up = runtime(v2_, "v2")->upgrade("r");
  EXPECT_TRUE(up.upgraded);
  EXPECT_EQ(up.from, "v1");
  EXPECT_EQ(up.to, "v2");
  EXPECT_EQ(up.replayedSteps, 1);
  ASSERT_EQ(upgrades("r").size(), 1U);
  EXPECT_EQ(upgrades("r")[0].data.at("codeVersion"), "v2");
  EXPECT_EQ(upgrades("r")[0].data.at("from"), "v1");
  EXPECT_EQ(store_.info("r")->codeVersion, "v2") << "the metadata row moves with it";
  EXPECT_EQ(store_.info("r")->status, ExecutionStatus::kParked);
  EXPECT_EQ(store_.read("r").back().type, EventType::kExecutionParked)
      << "the log ends in its park again";
  EXPECT_EQ(runs_, 1) << "nothing ran";

  EXPECT_FALSE(runtime(v2_, "v2")->upgrade("r").upgraded) << "a second upgrade writes nothing";
  EXPECT_EQ(upgrades("r").size(), 1U);
  EXPECT_THROW(runtime(v1_, "v1")->signal("r", "go", json::value(1)), VersionMismatchError);
  RunResult done = runtime(v2_, "v2")->resume("r");
  EXPECT_EQ(done.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(runs_, 2) << "a replayed, b ran once";
}

TEST_F(UpgradeTest, CodeThatDoesNotReplayTheLogIsRefusedNamingTheStepAndWritesNothing) {
  addW(v1_, "a");
  addW(v2_, "a-renamed");
  runtime(v1_, "v1")->start("w", json::value(), {.id = "r"});
  const int64_t before = store_.info("r")->nextSeq;
  try {
    runtime(v2_, "v2")->upgrade("r");
    FAIL() << "upgraded to code that does not replay it";
  } catch (const FailedPreconditionError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("'r' was not upgraded to v2"), std::string::npos) << m;
    EXPECT_NE(m.find("at step 'a'"), std::string::npos) << m;
    EXPECT_NE(m.find("stays on v1"), std::string::npos) << m;
    EXPECT_NE(m.find("loom fork r --at"), std::string::npos) << m;
  }
  EXPECT_EQ(store_.info("r")->nextSeq, before);
  EXPECT_EQ(store_.info("r")->codeVersion, "v1");
  auto lease = store_.currentLease("r");
  EXPECT_TRUE(!lease || lease->released) << "the upgrade let the run go";
  EXPECT_EQ(runtime(v1_, "v1")->signal("r", "go", json::value(1)).status,
            ExecutionStatus::kCompleted);
}

TEST_F(UpgradeTest, AnEndedRunAndAnUnknownOneAreRefused) {
  addW(v1_, "a");
  addW(v2_, "a");
  runtime(v1_, "v1")->start("w", json::value(), {.id = "r"});
  runtime(v1_, "v1")->signal("r", "go", json::value(1));
  try {
    runtime(v2_, "v2")->upgrade("r");
    FAIL() << "an ended run was upgraded";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("has ended (completed)"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(upgrades("r").empty());
  EXPECT_THROW(runtime(v2_, "v2")->upgrade("nope"), NotFoundError);
  EXPECT_THROW(runtime(v2_, "")->upgrade("r"), FailedPreconditionError) << "no version declared";
}

TEST_F(UpgradeTest, ARunParkedOnATimerKeepsItsWakeTime) {
  addW(v1_, "a", true);
  addW(v2_, "a", true);
  runtime(v1_, "v1")->start("w", json::value(), {.id = "r"});
  auto wake = kernel::timerWakeAt(store_, *store_.info("r"));
  ASSERT_TRUE(wake);
  clock_->advance(60'000);
  ASSERT_TRUE(runtime(v2_, "v2")->upgrade("r").upgraded);
  EXPECT_EQ(kernel::timerWakeAt(store_, *store_.info("r")), wake)
      << "a worker must still know when to wake it";
  clock_->advance(300'000);
  EXPECT_EQ(runtime(v2_, "v2")->resume("r").status, ExecutionStatus::kCompleted);
  EXPECT_EQ(runs_, 2);
}

TEST_F(UpgradeTest, ARunHeldByAnotherRunnerIsRefusedAsHeld) {
  addW(v1_, "a");
  addW(v2_, "a");
  runtime(v1_, "v1")->start("w", json::value(), {.id = "r"});
  kernel::LeaseOwner other{.id = "other", .host = "elsewhere", .pid = 1};
  store_.acquireLease({.executionId = "r", .owner = other, .ttlMillis = 60'000});
  EXPECT_THROW(runtime(v2_, "v2")->upgrade("r"), kernel::LeaseHeldError);
  EXPECT_TRUE(upgrades("r").empty());
}

TEST_F(UpgradeTest, AForkOfAnUpgradedRunStartsOnTheCodeAtHandOnly) {
  addW(v1_, "a");
  addW(v2_, "a");
  runtime(v1_, "v1")->start("w", json::value(), {.id = "r"});
  runtime(v2_, "v2")->upgrade("r");
  RunResult fork = runtime(v2_, "v2")->fork("r", {.atSeq = store_.info("r")->nextSeq, .id = "f"});
  EXPECT_EQ(fork.status, ExecutionStatus::kParked);
  EXPECT_TRUE(upgrades("f").empty()) << "the source's upgrade is the source's";
  EXPECT_EQ(store_.info("f")->codeVersion, "v2");
}

}  // namespace
}  // namespace loom::workflow

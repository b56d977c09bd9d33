// Durable timers (ctx.sleep / ctx.sleepUntil): the wake time is journaled once, the run parks
// with reason "timer" until then, a resume before it parks again recording nothing, and a
// resume after it continues without waiting again. Time is a ManualClock.
#include <gtest/gtest.h>

#include "loom/kernel/memory_event_store.h"
#include "loom/workflow/runtime.h"

namespace loom::workflow {
namespace {

using kernel::ExecutionStatus;

class TimerTest : public ::testing::Test {
 protected:
  TimerTest() {
    workflows_.add("naps", "", [this](WorkflowContext& ctx) {
      ctx.sleep("nap", std::chrono::milliseconds(5'000));
      ++afterNap_;
      ctx.sleepUntil("until", wakeUntil_);
      return json::value("rested");
    });
  }

  std::unique_ptr<WorkflowRuntime> runtime() {
    RuntimeOptions options;
    options.clock = clock_;
    return std::make_unique<WorkflowRuntime>(store_, workflows_, tasks_, nullptr, options);
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  int64_t wakeUntil_ = clock_->nowMillis() + 60'000;
  kernel::MemoryEventStore store_;
  WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  int afterNap_ = 0;
};

TEST_F(TimerTest, ARunSleepsDurablyAndWakesOnlyOnceItIsDue) {
  auto rt = runtime();
  int64_t t0 = clock_->nowMillis();
  RunResult parked = rt->start("naps", {}, {"t1"});
  ASSERT_EQ(parked.status, ExecutionStatus::kParked);
  EXPECT_EQ(parked.parkReason, "timer");
  EXPECT_EQ(parked.wakeAtMillis, std::optional<int64_t>(t0 + 5'000));
  EXPECT_EQ(kernel::timerWakeAt(store_, *store_.info("t1")), t0 + 5'000);

  clock_->advance(4'000);
  int64_t seqBefore = store_.info("t1")->nextSeq;
  RunResult early = rt->resume("t1");
  EXPECT_EQ(early.status, ExecutionStatus::kParked);
  EXPECT_EQ(early.wakeAtMillis, std::optional<int64_t>(t0 + 5'000)) << "the recorded time holds";
  EXPECT_EQ(store_.info("t1")->nextSeq, seqBefore) << "an early resume recorded something";
  EXPECT_EQ(afterNap_, 0);

  clock_->advance(1'000);
  RunResult second = rt->resume("t1");
  EXPECT_EQ(afterNap_, 1);
  ASSERT_EQ(second.status, ExecutionStatus::kParked);
  EXPECT_EQ(second.wakeAtMillis, std::optional<int64_t>(wakeUntil_));

  clock_->advance(60'000);
  RunResult done = rt->resume("t1");
  EXPECT_EQ(done.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(done.output, json::value("rested"));
  EXPECT_FALSE(kernel::timerWakeAt(store_, *store_.info("t1")));
}

TEST_F(TimerTest, ATimerRecordedWithoutAWakeTimeIsDataLoss) {
  workflows_.add("bad", "", [](WorkflowContext& ctx) {
    ctx.step("nap", [] { return json::value("not a timer"); });
    return json::value(nullptr);
  });
  workflows_.add("bad2", "", [](WorkflowContext& ctx) {
    ctx.sleep("nap", std::chrono::milliseconds(1));
    return json::value(nullptr);
  });
  auto rt = runtime();
  rt->start("bad", {}, {"b1"});
  // The same log read by a workflow that sleeps at that step id: its record is not a timer's.
  auto events = store_.read("b1");
  events.pop_back();  // drop EXECUTION_COMPLETED
  events[0].data["workflow"] = "bad2";
  store_.append("b2", 1, events);
  RunResult r = rt->resume("b2");
  EXPECT_EQ(r.status, ExecutionStatus::kFailed);
  EXPECT_NE(json::toText(r.error).find("not {\\\"wakeAt\\\""), std::string::npos)
      << json::toText(r.error);
}

}  // namespace
}  // namespace loom::workflow

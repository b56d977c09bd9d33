// Durable retries (execution.retry): a retryable failure with attempts left is journaled as a
// retryable STEP_FAILED with its next attempt time and the run parks "retrying"; a resume
// before then parks again recording nothing, `retry` runs the step at once, a resume after it
// runs it; the last attempt, or a failure that is not retryable, fails the step for good; a
// server's Retry-After stretches the wait; a short wait is waited out by the runner itself.
// Time is a ManualClock.
#include <gtest/gtest.h>

#include "loom/effects/errors.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/workflow/errors.h"
#include "loom/workflow/runtime.h"

namespace loom::workflow {
namespace {

using kernel::EventType;
using kernel::ExecutionStatus;

class RetryTest : public ::testing::Test {
 protected:
  RetryTest() {
    retry_.policy = {.maxAttempts = 4,
                     .initialIntervalMillis = 60'000,
                     .maxIntervalMillis = 600'000,
                     .multiplier = 2.0,
                     .jitter = 0.0};
    retry_.waitInlineUpToMillis = 0;  // every wait parks, unless a test says otherwise
    tasks_.add({"backend", "tool"}, [this](const effects::EffectContext& ctx, json::value) {
      attempts_.push_back(ctx.attempt);
      if (static_cast<int>(attempts_.size()) <= failures_) fail_();
      return json::value("answer");
    });
    workflows_.add("asks", "", [](WorkflowContext& ctx) {
      return ctx.effect("ask", "backend", json::value(nullptr));
    });
  }

  std::unique_ptr<WorkflowRuntime> runtime() {
    RuntimeOptions options;
    options.clock = clock_;
    options.retry = retry_;
    options.onWarn = [this](std::string_view m) { warnings_.emplace_back(m); };
    return std::make_unique<WorkflowRuntime>(store_, workflows_, tasks_, nullptr, options);
  }

  std::vector<kernel::Event> failures(const std::string& id) {
    std::vector<kernel::Event> out;
    for (auto& e : store_.read(id)) {
      if (e.type == EventType::kStepFailed) out.push_back(std::move(e));
    }
    return out;
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  DurableRetry retry_;
  kernel::MemoryEventStore store_;
  WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  int failures_ = 0;  // the first this many attempts fail
  std::function<void()> fail_ = [] { throw UnavailableError("backend down (503)"); };
  std::vector<int> attempts_;  // ctx.attempt of each call
  std::vector<std::string> warnings_;
};

TEST_F(RetryTest, ARetryableFailureParksRetryingUntilItsNextAttemptAndThenSucceeds) {
  failures_ = 2;
  auto rt = runtime();
  int64_t t0 = clock_->nowMillis();
  RunResult parked = rt->start("asks", {}, {"r"});
  ASSERT_EQ(parked.status, ExecutionStatus::kParked);
  EXPECT_EQ(parked.parkReason, "retrying");
  EXPECT_EQ(parked.wakeAtMillis, std::optional<int64_t>(t0 + 60'000));
  EXPECT_NE(parked.parkDetail.find("attempt 1 of 'backend' failed (unavailable): backend down"),
            std::string::npos)
      << parked.parkDetail;
  auto failed = failures("r");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_TRUE(failed[0].data.at("retryable").as_bool());
  EXPECT_EQ(failed[0].data.at("attempt"), 1);
  EXPECT_EQ(failed[0].data.at("nextAttemptAt").as_string(), formatTimestamp(t0 + 60'000));
  auto park = kernel::currentPark(store_, *store_.info("r"));
  ASSERT_TRUE(park);
  EXPECT_TRUE(park->awaitsRetry());
  EXPECT_EQ(park->wakeAtMillis, std::optional<int64_t>(t0 + 60'000));

  clock_->advance(59'000);
  int64_t seq = store_.info("r")->nextSeq;
  RunResult early = rt->resume("r");
  EXPECT_EQ(early.status, ExecutionStatus::kParked) << "a resume before the attempt is due";
  EXPECT_EQ(early.parkReason, "retrying");
  EXPECT_EQ(store_.info("r")->nextSeq, seq) << "an early resume recorded something";
  EXPECT_EQ(attempts_.size(), 1u) << "an early resume ran the step";

  clock_->advance(1'000);
  RunResult second = rt->resume("r");
  ASSERT_EQ(second.status, ExecutionStatus::kParked);
  EXPECT_EQ(second.wakeAtMillis, std::optional<int64_t>(clock_->nowMillis() + 120'000))
      << "the second wait doubles";

  clock_->advance(120'000);
  RunResult done = rt->resume("r");
  ASSERT_EQ(done.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(done.output, json::value("answer"));
  EXPECT_EQ(attempts_, (std::vector<int>{1, 2, 3}));
  auto log = store_.read("r");
  const auto& completed = log[log.size() - 2];
  ASSERT_EQ(completed.type, EventType::kStepCompleted);
  EXPECT_EQ(completed.data.at("attempt"), 3);
}

TEST_F(RetryTest, RetryRunsTheStepNowAndRefusesARunThatIsNotRetrying) {
  failures_ = 1;
  auto rt = runtime();
  ASSERT_EQ(rt->start("asks", {}, {"r"}).parkReason, "retrying");
  RunResult now = rt->retry("r");
  EXPECT_EQ(now.status, ExecutionStatus::kCompleted) << "retry does not wait for the due time";
  EXPECT_EQ(attempts_, (std::vector<int>{1, 2}));
  try {
    rt->retry("r");
    FAIL() << "a completed run was retried";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("is completed, not retrying"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(rt->retry("nope"), NotFoundError);
}

TEST_F(RetryTest, TheLastAttemptFailsTheStepForGood) {
  failures_ = 100;
  auto rt = runtime();
  RunResult r = rt->start("asks", {}, {"r"});
  for (int i = 0; i < 10 && r.status == ExecutionStatus::kParked; ++i) r = rt->retry("r");
  ASSERT_EQ(r.status, ExecutionStatus::kFailed);
  EXPECT_EQ(attempts_.size(), 4u) << "maxAttempts = 4";
  auto failed = failures("r");
  ASSERT_EQ(failed.size(), 4u);
  EXPECT_FALSE(failed.back().data.at("retryable").as_bool());
  EXPECT_FALSE(failed.back().data.contains("nextAttemptAt"));
  EXPECT_NE(std::string(failed.back().data.at("error").at("message").as_string())
                .find("(4 attempts, the most execution.retry.maxAttempts allows)"),
            std::string::npos);
  EXPECT_EQ(rt->resume("r").status, ExecutionStatus::kFailed) << "the failure is final";
  EXPECT_EQ(attempts_.size(), 4u);
}

TEST_F(RetryTest, AKillSwitchStopIsNotCountedAsAnAttempt) {
  failures_ = 100;
  fail_ = [this] {
    if (attempts_.size() == 1) throw effects::EffectStopped("backend");
    throw UnavailableError("backend down (503)");
  };
  auto rt = runtime();
  RunResult r = rt->start("asks", {}, {"r"});
  ASSERT_EQ(r.parkReason, "effectStopped");
  for (int i = 0; i < 10 && !kernel::isEnded(r.status); ++i) {
    r = r.parkReason == "effectStopped" ? rt->resume("r") : rt->retry("r");
  }
  EXPECT_EQ(r.status, ExecutionStatus::kFailed);
  EXPECT_EQ(attempts_.size(), 5u) << "the stop, then maxAttempts = 4 attempts";
  auto failed = failures("r");
  ASSERT_EQ(failed.size(), 5u);
  EXPECT_EQ(parseTimestamp(std::string(failed[1].data.at("nextAttemptAt").as_string())) -
                failed[1].atMillis,
            60'000)
      << "the first counted attempt waits initialIntervalMs: the stop does not grow the wait";
}

TEST_F(RetryTest, AFailureThatIsNotRetryableFailsAtOnce) {
  failures_ = 1;
  fail_ = [] { throw InvalidArgumentError("400: bad request"); };
  RunResult r = runtime()->start("asks", {}, {"r"});
  EXPECT_EQ(r.status, ExecutionStatus::kFailed);
  EXPECT_EQ(attempts_.size(), 1u);
  ASSERT_EQ(failures("r").size(), 1u);
  EXPECT_FALSE(failures("r")[0].data.at("retryable").as_bool());
}

TEST_F(RetryTest, AnOverrideForOneEffectReplacesTheDefaults) {
  failures_ = 1;
  retry_.effects["backend"].maxAttempts = 1;
  RunResult r = runtime()->start("asks", {}, {"r"});
  EXPECT_EQ(r.status, ExecutionStatus::kFailed) << "maxAttempts = 1 for backend";
  retry_.effects["backend"] = {.initialIntervalMillis = 5'000};
  failures_ = 2;
  attempts_.clear();
  RunResult s = runtime()->start("asks", {}, {"s"});
  EXPECT_EQ(s.wakeAtMillis, std::optional<int64_t>(clock_->nowMillis() + 5'000));
}

TEST_F(RetryTest, AServersRetryAfterStretchesTheWait) {
  failures_ = 1;
  fail_ = [] { throw RetryAfterError("429: slow down", 900'000); };
  int64_t t0 = clock_->nowMillis();
  RunResult r = runtime()->start("asks", {}, {"r"});
  EXPECT_EQ(r.wakeAtMillis, std::optional<int64_t>(t0 + 900'000));
}

TEST_F(RetryTest, AShortWaitIsWaitedOutByTheRunnerItself) {
  failures_ = 2;
  retry_.waitInlineUpToMillis = 120'000;
  int64_t t0 = clock_->nowMillis();
  RunResult r = runtime()->start("asks", {}, {"r"});
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(attempts_, (std::vector<int>{1, 2, 3}));
  EXPECT_GE(clock_->nowMillis() - t0, 180'000) << "it waited 60 s, then 120 s";
  ASSERT_EQ(warnings_.size(), 2u);
  EXPECT_NE(warnings_[0].find("attempting again at"), std::string::npos) << warnings_[0];
}

TEST_F(RetryTest, AResumeBeforeTheTimeNeverWaitsInline) {
  failures_ = 1;
  ASSERT_EQ(runtime()->start("asks", {}, {"r"}).parkReason, "retrying");  // waits nowhere
  retry_.waitInlineUpToMillis = 120'000;
  int64_t before = clock_->nowMillis();
  RunResult r = runtime()->resume("r");
  EXPECT_EQ(r.status, ExecutionStatus::kParked) << "the resume waited and ran the attempt";
  EXPECT_EQ(clock_->nowMillis(), before);
  EXPECT_EQ(attempts_.size(), 1u);
  RunResult async = runtime()->resumeAsync("r").get();
  EXPECT_EQ(async.status, ExecutionStatus::kParked);
}

TEST_F(RetryTest, AResultTheContentStoreCannotTakeIsTriedAgainAtTheSlowestPaceAndRecordsNothing) {
  failures_ = 2;
  fail_ = [] { throw ContentStoreUnavailableError("the content store is full (ENOSPC)"); };
  auto rt = runtime();
  RunResult first = rt->start("asks", {}, {"r"});
  ASSERT_EQ(first.parkReason, "contentStoreUnavailable");
  EXPECT_EQ(first.wakeAtMillis, std::optional<int64_t>(clock_->nowMillis() + 600'000));
  EXPECT_TRUE(failures("r").empty()) << "not the effect's failure: nothing is recorded";
  clock_->advance(600'000);
  RunResult second = rt->resume("r");  // still full
  ASSERT_EQ(second.parkReason, "contentStoreUnavailable");
  EXPECT_EQ(kernel::timerWakeAt(store_, *store_.info("r")),
            std::optional<int64_t>(clock_->nowMillis() + 600'000))
      << "the new wake time was not recorded: a worker would run it again at every poll";
  RunResult done = rt->retry("r");
  EXPECT_EQ(done.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(attempts_.size(), 3u);
}

TEST_F(RetryTest, AServersRetryAfterIsCappedAtADay) {
  failures_ = 1;
  fail_ = [] { throw RetryAfterError("429", int64_t{1} << 60); };
  int64_t t0 = clock_->nowMillis();
  RunResult r = runtime()->start("asks", {}, {"r"});
  EXPECT_EQ(r.wakeAtMillis, std::optional<int64_t>(t0 + kMaxRetryIntervalMillis));
}

TEST_F(RetryTest, ANextAttemptTimeLoomDidNotWriteIsDataLoss) {
  store_.append("r", 1, {kernel::executionStarted("asks", nullptr, {}, 0)});
  kernel::Event failed =
      kernel::stepFailed("ask", "tool", "backend", "unavailable", "down", true, 0);
  failed.data["nextAttemptAt"] = "tomorrow";
  store_.append("r", 2, {failed});
  EXPECT_THROW(runtime()->resume("r"), DataLossError);
  EXPECT_TRUE(attempts_.empty());
}

TEST_F(RetryTest, ACancelEndsARetryingRunAtOnce) {
  failures_ = 100;
  auto rt = runtime();
  ASSERT_EQ(rt->start("asks", {}, {"r"}).parkReason, "retrying");
  RunResult c = rt->cancel("r", "give up");
  EXPECT_EQ(c.status, ExecutionStatus::kCancelled);
  EXPECT_EQ(store_.info("r")->status, ExecutionStatus::kCancelled);
  EXPECT_EQ(attempts_.size(), 1u);
}

TEST_F(RetryTest, APolicyOutOfRangeIsRefusedNamingTheField) {
  retry_.policy.maxIntervalMillis = 10;  // below initialIntervalMillis
  retry_.effects["x"].jitter = 2.0;
  try {
    runtime();
    FAIL() << "accepted";
  } catch (const InvalidArgumentError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("execution.retry.maxIntervalMs"), std::string::npos) << what;
    EXPECT_NE(what.find("execution.retry.effects.x.jitter"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace loom::workflow

#include "loom/worker/executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "loom/kernel/forwarding_event_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "support/temp_dir.h"

namespace loom::worker {
namespace {

using kernel::ExecutionStatus;
using std::chrono::milliseconds;

// A gate a workflow's step waits at until the test opens it.
class Gate {
 public:
  void open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Counts the listings the executor makes (each look for runnable runs lists the parked ones).
class ListCountingStore : public kernel::ForwardingEventStore {
 public:
  using ForwardingEventStore::ForwardingEventStore;
  std::vector<kernel::ExecutionInfo> list(const kernel::ExecutionFilter& filter) const override {
    ++lists;
    return ForwardingEventStore::list(filter);
  }
  mutable std::atomic<int> lists{0};
};

class ExecutorTest : public ::testing::Test {
 protected:
  ExecutorTest() {
    workflows_.add("steps", "", [](workflow::WorkflowContext& ctx) {
      int sum = 0;
      for (int i = 0; i < 3; ++i) {
        sum += static_cast<int>(
            ctx.step("s" + std::to_string(i), [i] { return json::value(i); }).as_int64());
      }
      return json::value(sum);
    });
    workflows_.add("gated", "", [this](workflow::WorkflowContext& ctx) {
      ctx.step("enter", [this] {
        int now = ++inGate_;
        int seen = maxInGate_.load();
        while (now > seen && !maxInGate_.compare_exchange_weak(seen, now)) {
        }
        gate_.wait();
        --inGate_;
        return json::value(true);
      });
      ctx.step("after", [this] {
        ++afterGate_;
        return json::value(true);
      });
      return json::value("done");
    });
    workflows_.add("throws", "", [](workflow::WorkflowContext&) -> json::value {
      throw std::runtime_error("the workflow's own bug");
    });
    workflows_.add("approval", "", [](workflow::WorkflowContext& ctx) {
      auto decision = ctx.parkUntil("approval", "pay", "approve:pay", "pay:deadline",
                                    milliseconds(300));
      return json::value(decision ? "decided" : "timed out");
    });
    workflows_.add("naps", "", [](workflow::WorkflowContext& ctx) {
      ctx.sleep("nap", milliseconds(300));
      return json::value("rested");
    });
  }

  workflow::WorkflowRuntime& runtime() {
    if (!runtime_) {
      workflow::RuntimeOptions options;
      options.clock = clock_;
      runtime_ = std::make_unique<workflow::WorkflowRuntime>(store_, workflows_, tasks_, nullptr,
                                                             options);
    }
    return *runtime_;
  }

  ExecutorOptions options() {
    ExecutorOptions o;
    o.clock = clock_;
    o.pollMillis = 60'000;  // nothing here may depend on the poll
    o.onRun = [this](const RunReport& r) {
      std::lock_guard lock(reportsMu_);
      reports_.push_back(r);
    };
    return o;
  }

  void submit(const std::string& workflow, const std::string& id) {
    runtime().submit(workflow, json::object{}, {id});
  }

  ExecutionStatus statusOf(const std::string& id) { return store_.info(id)->status; }

  // Waits up to 10 s for `done`.
  template <typename F>
  bool eventually(F done) {
    for (int i = 0; i < 1000; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return done();
  }

  testing::TempDir dir_{"executor"};
  std::shared_ptr<const Clock> clock_ = systemClock();
  kernel::SqliteEventStore store_{{.path = dir_ / "loom.db"}};
  workflow::WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  std::unique_ptr<workflow::WorkflowRuntime> runtime_;
  InProcessLauncher launcher_{[this](const kernel::ExecutionInfo&) -> workflow::WorkflowRuntime& {
    return runtime();
  }};
  Gate gate_;
  std::atomic<int> inGate_{0};
  std::atomic<int> maxInGate_{0};
  std::atomic<int> afterGate_{0};
  std::mutex reportsMu_;
  std::vector<RunReport> reports_;
};

TEST_F(ExecutorTest, ClaimsEverySubmittedRunAndRunsItInThisProcess) {
  for (int i = 0; i < 20; ++i) submit("steps", "r" + std::to_string(i));
  Executor executor(store_, launcher_, options());
  IdleTally tally = executor.runUntilIdle();
  EXPECT_EQ(tally.runs, 20);
  EXPECT_EQ(tally.startFailed, 0);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(statusOf("r" + std::to_string(i)), ExecutionStatus::kCompleted) << i;
  }
  ASSERT_EQ(reports_.size(), 20u);
  for (const auto& r : reports_) EXPECT_EQ(r.outcome, "completed") << r.executionId;
}

TEST_F(ExecutorTest, RunsNoMoreAtOnceThanItsConcurrencyOrAWorkflowsLimit) {
  for (int i = 0; i < 6; ++i) submit("gated", "g" + std::to_string(i));
  for (int i = 0; i < 4; ++i) submit("steps", "s" + std::to_string(i));
  ExecutorOptions o = options();
  o.concurrency = 4;
  o.perWorkflow["gated"] = 2;
  Executor executor(store_, launcher_, o);
  std::thread loop([&] { executor.run(); });
  // The four plain runs end; two gated ones wait at the gate, the others for a slot.
  EXPECT_TRUE(eventually([&] {
    return inGate_.load() == 2 && statusOf("s3") == ExecutionStatus::kCompleted;
  }));
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(maxInGate_.load(), 2) << "the workflow's limit held";
  EXPECT_LE(executor.active(), 4u);
  gate_.open();
  EXPECT_TRUE(eventually([&] {
    for (int i = 0; i < 6; ++i) {
      if (statusOf("g" + std::to_string(i)) != ExecutionStatus::kCompleted) return false;
    }
    return true;
  }));
  EXPECT_EQ(maxInGate_.load(), 2);
  executor.stop(milliseconds(0));
  loop.join();
}

TEST_F(ExecutorTest, AWorkflowThatThrowsFailsOnlyItsOwnRun) {
  submit("throws", "bad");
  submit("steps", "good");
  Executor executor(store_, launcher_, options());
  executor.runUntilIdle();
  EXPECT_EQ(statusOf("bad"), ExecutionStatus::kFailed);
  EXPECT_EQ(statusOf("good"), ExecutionStatus::kCompleted);
}

TEST_F(ExecutorTest, StoppingReleasesTheRunsInFlightWhichRecordNoFurtherStep) {
  submit("gated", "g");
  Executor executor(store_, launcher_, options());
  std::thread loop([&] { executor.run(); });
  ASSERT_TRUE(eventually([&] { return inGate_.load() == 1; }));
  executor.stop(milliseconds(0));  // the drain releases its lease at once
  ASSERT_TRUE(eventually([&] {
    auto lease = store_.currentLease("g");
    return lease && lease->released;
  }));
  gate_.open();  // the step in flight ends; its result is not recorded
  loop.join();
  EXPECT_EQ(afterGate_.load(), 0) << "a step ran after the lease was released";
  EXPECT_EQ(statusOf("g"), ExecutionStatus::kRunning);
  EXPECT_TRUE(kernel::isOrphaned(store_.currentLease("g"), systemClock()->nowMillis()))
      << "resumable at once";
  // The next executor runs it to its end: the step in flight runs again, once.
  Executor next(store_, launcher_, options());
  next.runUntilIdle();
  EXPECT_EQ(statusOf("g"), ExecutionStatus::kCompleted);
  EXPECT_EQ(afterGate_.load(), 1);
}

TEST_F(ExecutorTest, ARunWhoseLeaseIsTakenOverStopsBeforeItsNextStep) {
  submit("gated", "g");
  Executor executor(store_, launcher_, options());
  std::thread loop([&] { executor.run(); });
  ASSERT_TRUE(eventually([&] { return inGate_.load() == 1; }));
  auto held = store_.currentLease("g");
  ASSERT_TRUE(held);
  kernel::LeaseOwner other{"other-runner", "host-b", 2, "boot"};
  store_.acquireLease({"g", other, 60'000, held->token});  // another runner takes it over
  gate_.open();
  ASSERT_TRUE(eventually([&] { return executor.active() == 0; }));
  EXPECT_EQ(afterGate_.load(), 0);
  EXPECT_EQ(statusOf("g"), ExecutionStatus::kRunning);
  {
    std::lock_guard lock(reportsMu_);
    ASSERT_EQ(reports_.size(), 1u);
    EXPECT_NE(reports_[0].outcome.find("taken by another runner"), std::string::npos)
        << reports_[0].outcome;
  }
  executor.stop(milliseconds(0));
  loop.join();
}

TEST_F(ExecutorTest, ADueTimerWakesTheExecutorAtItsTimeNotAtThePoll) {
  runtime().start("naps", json::object{}, {"n"});
  ASSERT_EQ(statusOf("n"), ExecutionStatus::kParked);
  Executor executor(store_, launcher_, options());  // a poll of 60 s
  std::thread loop([&] { executor.run(); });
  EXPECT_TRUE(eventually([&] { return statusOf("n") == ExecutionStatus::kCompleted; }));
  executor.stop(milliseconds(0));
  loop.join();
}

TEST_F(ExecutorTest, AnApprovalPastItsDeadlineIsResumedWithoutAPoll) {
  runtime().start("approval", json::object{}, {"a"});
  ASSERT_EQ(statusOf("a"), ExecutionStatus::kParked);
  Executor executor(store_, launcher_, options());  // a poll of 60 s
  std::thread loop([&] { executor.run(); });
  EXPECT_TRUE(eventually([&] { return statusOf("a") == ExecutionStatus::kCompleted; }));
  executor.stop(milliseconds(0));
  loop.join();
  std::string output;
  store_.scan("a", 1, [&](const kernel::Event& e) {
    if (e.type == kernel::EventType::kExecutionCompleted) output = json::toText(e.data.at("output"));
  });
  EXPECT_EQ(output, "\"timed out\"");
}

// A due run it cannot start now (every slot taken) is not a reason to look again at once: the
// executor waits for a slot, not in a loop that lists the store over and over.
TEST_F(ExecutorTest, ADueRunWaitingForASlotDoesNotMakeTheExecutorSpin) {
  runtime().start("naps", json::object{}, {"n"});
  submit("gated", "g");
  ListCountingStore counting(store_);
  ExecutorOptions o = options();
  o.concurrency = 1;
  Executor executor(counting, launcher_, o);
  std::thread loop([&] { executor.run(); });
  ASSERT_TRUE(eventually([&] { return inGate_.load() == 1; }));  // g holds the only slot
  std::this_thread::sleep_for(milliseconds(400));                 // n falls due meanwhile
  int before = counting.lists.load();
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_LT(counting.lists.load() - before, 20) << "the executor looked again and again";
  gate_.open();  // the slot comes free: n runs
  EXPECT_TRUE(eventually([&] { return statusOf("n") == ExecutionStatus::kCompleted; }));
  executor.stop(milliseconds(0));
  loop.join();
}

TEST_F(ExecutorTest, ASubmissionInThisProcessWakesTheExecutorAtOnce) {
  Executor executor(store_, launcher_, options());  // a poll of 60 s
  std::thread loop([&] { executor.run(); });
  std::this_thread::sleep_for(milliseconds(100));  // it waits for news now
  auto before = std::chrono::steady_clock::now();
  submit("steps", "late");
  EXPECT_TRUE(eventually([&] { return statusOf("late") == ExecutionStatus::kCompleted; }));
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(5));
  executor.stop(milliseconds(0));
  loop.join();
}

TEST_F(ExecutorTest, ARunThatCannotStartStaysAsItWasAndIsCounted) {
  submit("steps", "s");
  InProcessLauncher broken([](const kernel::ExecutionInfo&) -> workflow::WorkflowRuntime& {
    throw ConfigError("the environment variable LOOM_TEST_MISSING is not set");
  });
  Executor executor(store_, broken, options());
  IdleTally tally = executor.runUntilIdle();
  EXPECT_EQ(tally.startFailed, 1);
  EXPECT_EQ(statusOf("s"), ExecutionStatus::kRunning);
  EXPECT_EQ(store_.info("s")->nextSeq, 2) << "nothing was recorded";
  auto lease = store_.currentLease("s");
  ASSERT_TRUE(lease);
  EXPECT_TRUE(lease->released) << "the claim was given back";
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_TRUE(reports_[0].startFailed);
  EXPECT_NE(reports_[0].outcome.find("LOOM_TEST_MISSING"), std::string::npos);
}

// Two versions of the code share a home (a deployment under way, ADR 0029): a worker leaves
// the runs of the other version as they were, says so once and fails nothing; a worker of
// their own version then runs them.
TEST_F(ExecutorTest, AWorkerRunsOnlyTheRunsOfItsOwnCodeVersion) {
  auto runtimeOf = [this](const std::string& version) {
    workflow::RuntimeOptions o;
    o.clock = clock_;
    o.codeVersion = version;
    return std::make_unique<workflow::WorkflowRuntime>(store_, workflows_, tasks_, nullptr, o);
  };
  auto v1 = runtimeOf("v1"), v2 = runtimeOf("v2");
  v1->submit("steps", json::object{}, {"old"});
  v2->submit("steps", json::object{}, {"new"});
  InProcessLauncher onV2([&](const kernel::ExecutionInfo&) -> workflow::WorkflowRuntime& {
    return *v2;
  });
  IdleTally tally = Executor(store_, onV2, options()).runUntilIdle();
  EXPECT_EQ(statusOf("new"), ExecutionStatus::kCompleted);
  EXPECT_EQ(store_.info("old")->nextSeq, 2) << "a step of v1's run ran on v2";
  EXPECT_EQ(tally.startFailed, 0) << "another version's run is no failure";
  ASSERT_EQ(reports_.size(), 2U);
  const RunReport& left = reports_[0].executionId == "old" ? reports_[0] : reports_[1];
  EXPECT_EQ(left.outcome,
            "left for a worker of its code version v1 (this worker runs v2); nothing ran");

  InProcessLauncher onV1([&](const kernel::ExecutionInfo&) -> workflow::WorkflowRuntime& {
    return *v1;
  });
  Executor(store_, onV1, options()).runUntilIdle();
  EXPECT_EQ(statusOf("old"), ExecutionStatus::kCompleted);
}

}  // namespace
}  // namespace loom::worker

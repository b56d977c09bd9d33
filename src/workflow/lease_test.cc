// The runtime under leases (docs/spec/leases.md), two runtimes standing for two processes
// over one store: a second runner is refused before it runs anything; a runner whose lease
// was taken over (it was presumed dead) records nothing more; a heartbeat keeps a long step's
// lease alive; an ended or parked run lets its lease go; a runner that lost its run between two
// calls of one batch (ctx.effects) starts none after.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <latch>

#include "loom/kernel/forwarding_event_store.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/util/error.h"
#include "loom/workflow/runtime.h"
#include "workflow/lease_keeper.h"

namespace loom::workflow {
namespace {

using kernel::ExecutionStatus;

class LeaseTest : public ::testing::Test {
 protected:
  LeaseTest() {
    workflows_.add("held", "", [this](WorkflowContext& ctx) {
      ctx.step("first", [this] {
        ++firstRuns_;
        inFirst_.count_down();
        finishFirst_.wait();
        return json::value(1);
      });
      ctx.step("second", [this] {
        ++secondRuns_;
        return json::value(2);
      });
      return json::value("done");
    });
  }

  std::unique_ptr<WorkflowRuntime> runtime(const std::string& owner, int64_t ttl = 15'000) {
    RuntimeOptions options;
    options.leaseOwner = kernel::LeaseOwner{owner, "host-" + owner, 1, "boot"};
    options.leaseTtlMillis = ttl;
    return std::make_unique<WorkflowRuntime>(store_, workflows_, tasks_, nullptr, options);
  }

  kernel::MemoryEventStore store_;
  WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  std::atomic<int> firstRuns_{0}, secondRuns_{0};
  std::latch inFirst_{1}, finishFirst_{1};
};

TEST_F(LeaseTest, ASecondRunnerIsRefusedBeforeItRunsAnything) {
  auto a = runtime("a");
  auto b = runtime("b");
  auto running = std::async(std::launch::async, [&] { return a->start("held", {}, {"e1"}); });
  inFirst_.wait();
  try {
    b->resume("e1");
    FAIL() << "a second runner resumed a live run";
  } catch (const kernel::LeaseHeldError& e) {
    EXPECT_EQ(e.held().owner.id, "a");
    EXPECT_NE(std::string(e.what()).find("on host 'host-a'"), std::string::npos) << e.what();
  }
  finishFirst_.count_down();
  EXPECT_EQ(running.get().status, ExecutionStatus::kCompleted);
  EXPECT_EQ(firstRuns_.load(), 1);
  EXPECT_EQ(secondRuns_.load(), 1);
  EXPECT_TRUE(store_.currentLease("e1")->released) << "an ended run lets its lease go";

  RunResult again = b->resume("e1");
  EXPECT_EQ(again.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(again.effectsRun, 0);
}

TEST_F(LeaseTest, ARunnerWhoseLeaseWasTakenOverRecordsNothingMore) {
  auto a = runtime("a");
  auto running = std::async(std::launch::async, [&] { return a->start("held", {}, {"e1"}); });
  inFirst_.wait();
  // Presumed dead (say its host stopped answering): another runner breaks its lease.
  kernel::Lease held = *store_.currentLease("e1");
  store_.acquireLease({"e1", {"b", "host-b", 2, "boot"}, 15'000, held.token});
  int64_t before = store_.info("e1")->nextSeq;
  finishFirst_.count_down();
  EXPECT_THROW(running.get(), kernel::LeaseLostError);
  EXPECT_EQ(store_.info("e1")->nextSeq, before) << "the presumed-dead runner recorded its step";
  EXPECT_EQ(store_.info("e1")->status, ExecutionStatus::kRunning);
  EXPECT_EQ(secondRuns_.load(), 0) << "it went on after its step could not be recorded";
}

TEST_F(LeaseTest, AHeartbeatKeepsALongStepsLeaseAlive) {
  auto a = runtime("a", 300);  // renewed every 100 ms
  auto b = runtime("b", 300);
  auto running = std::async(std::launch::async, [&] { return a->start("held", {}, {"e1"}); });
  inFirst_.wait();
  std::this_thread::sleep_for(std::chrono::milliseconds(1'200));  // four lease lifetimes
  EXPECT_THROW(b->resume("e1"), kernel::LeaseHeldError);
  finishFirst_.count_down();
  EXPECT_EQ(running.get().status, ExecutionStatus::kCompleted);
  EXPECT_EQ(firstRuns_.load(), 1);
}

TEST_F(LeaseTest, AParkedRunLetsItsLeaseGo) {
  workflows_.add("waits", "", [](WorkflowContext& ctx) { return ctx.awaitSignal("go"); });
  auto a = runtime("a");
  auto b = runtime("b");
  EXPECT_EQ(a->start("waits", {}, {"w1"}).status, ExecutionStatus::kParked);
  EXPECT_TRUE(store_.currentLease("w1")->released);
  RunResult r = b->signal("w1", "go", json::value(7));
  EXPECT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(r.output, json::value(7));
}

TEST_F(LeaseTest, ANonPositiveTtlIsRefused) { EXPECT_THROW(runtime("a", 0), InvalidArgumentError); }

}  // namespace
}  // namespace loom::workflow

namespace loom::workflow {
namespace {

TEST_F(LeaseTest, ACancelEndsAParkedRunAtOnce) {
  workflows_.add("waits", "", [](WorkflowContext& ctx) { return ctx.awaitSignal("go"); });
  auto a = runtime("a");
  ASSERT_EQ(a->start("waits", {}, {"w1"}).status, ExecutionStatus::kParked);
  RunResult cancelled = a->cancel("w1", "not needed");
  EXPECT_EQ(cancelled.status, ExecutionStatus::kCancelled);
  EXPECT_EQ(store_.info("w1")->status, ExecutionStatus::kCancelled);
  EXPECT_EQ(store_.read("w1").back().type, kernel::EventType::kExecutionCancelled);
  RunResult resumed = runtime("b")->resume("w1");
  EXPECT_EQ(resumed.status, ExecutionStatus::kCancelled);
  EXPECT_EQ(resumed.error.at("message"), json::value("not needed"));
  EXPECT_THROW(a->cancel("w1", "again"), FailedPreconditionError);
  EXPECT_THROW(a->cancel("nope", "x"), NotFoundError);
  EXPECT_THROW(a->signal("w1", "go", json::value(1)), FailedPreconditionError);
}

TEST_F(LeaseTest, ACancelOfALiveRunStopsItAtItsNextStepBoundary) {
  auto a = runtime("a");
  auto b = runtime("b");
  auto running = std::async(std::launch::async, [&] { return a->start("held", {}, {"e1"}); });
  inFirst_.wait();
  RunResult requested = b->cancel("e1", "operator said so");
  EXPECT_EQ(requested.status, ExecutionStatus::kRunning) << "its runner has not stopped yet";
  finishFirst_.count_down();
  RunResult r = running.get();
  EXPECT_EQ(r.status, ExecutionStatus::kCancelled);
  EXPECT_EQ(r.error.at("message"), json::value("operator said so"));
  EXPECT_EQ(firstRuns_.load(), 1);
  EXPECT_EQ(secondRuns_.load(), 0) << "a step started after the cancel";
  auto events = store_.read("e1");
  EXPECT_EQ(events.back().type, kernel::EventType::kExecutionCancelled);
  EXPECT_EQ(store_.info("e1")->steps, 1) << "the step in flight is recorded";
}

TEST_F(LeaseTest, ACancelledSubmittedRunNeverRuns) {
  auto a = runtime("a");
  RunResult submitted = a->submit("held", {}, {"s1"});
  EXPECT_EQ(submitted.status, ExecutionStatus::kRunning);
  EXPECT_EQ(a->cancel("s1", "changed my mind").status, ExecutionStatus::kCancelled);
  EXPECT_EQ(runtime("b")->resume("s1").effectsRun, 0);
  EXPECT_EQ(firstRuns_.load(), 0);
}

// A stall just after a call of a batch was journaled: the runner's lease expires, another
// runner takes the run over and records the next call; then the stalled runner goes on.
class StallAfterFirstCall : public kernel::ForwardingEventStore {
 public:
  StallAfterFirstCall(kernel::EventStore& store, ManualClock& clock)
      : ForwardingEventStore(store), store_(store), clock_(clock) {}
  int64_t appendLeased(const kernel::Lease& lease, int64_t expectedNextSeq,
                       std::vector<kernel::Event> events) override {
    bool first = false;
    for (const auto& e : events) {
      first =
          first || (e.type == kernel::EventType::kStepCompleted && e.data.at("stepId") == "one");
    }
    int64_t next = ForwardingEventStore::appendLeased(lease, expectedNextSeq, std::move(events));
    if (first) {
      clock_.advance(20'000);  // past the lease's ttl
      kernel::Lease taken =
          store_.acquireLease({lease.executionId, {"b", "host-b", 2, "boot"}, 15'000, lease.token});
      kernel::Event two;
      two.type = kernel::EventType::kStepCompleted;
      two.atMillis = clock_.nowMillis();
      two.data = {{"stepId", "two"}, {"taskKind", "tool"}, {"effectId", "t.two"}, {"output", 2}};
      store_.appendLeased(taken, next, {std::move(two)});
    }
    return next;
  }

 private:
  kernel::EventStore& store_;
  ManualClock& clock_;
};

TEST_F(LeaseTest, ARunnerThatLostItsRunBetweenTwoCallsOfABatchStartsNoMore) {
  std::atomic<int> ones{0}, twos{0};
  tasks_.add({.id = "t.one", .kind = "tool"}, [&](const effects::EffectContext&, json::value) {
    ++ones;
    return json::value(1);
  });
  tasks_.add({.id = "t.two", .kind = "tool"}, [&](const effects::EffectContext&, json::value) {
    ++twos;
    return json::value(2);
  });
  workflows_.add("batch", "", [](WorkflowContext& ctx) {
    auto outcomes = ctx.effects({{"one", "t.one", {}}, {"two", "t.two", {}}}, 1);
    return json::value(static_cast<int64_t>(outcomes.size()));
  });
  auto clock = std::make_shared<ManualClock>();
  StallAfterFirstCall stalling(store_, *clock);
  RuntimeOptions options;
  options.leaseOwner = kernel::LeaseOwner{"a", "host-a", 1, "boot"};
  options.clock = clock;
  WorkflowRuntime a(stalling, workflows_, tasks_, nullptr, options);
  EXPECT_THROW(a.start("batch", {}, {"b1"}), ConflictError);
  EXPECT_EQ(ones.load(), 1);
  EXPECT_EQ(twos.load(), 0) << "the stalled runner ran a call the new owner had recorded";
  EXPECT_EQ(store_.info("b1")->steps, 2);
}

}  // namespace
}  // namespace loom::workflow

namespace loom::workflow {
namespace {

// A store may release a lease with the append that ends its run (EventStore::releaseLease),
// before the run drops it: a renewal that finds its very lease released is no news. One that
// finds it taken over is reported.
TEST(LeaseKeeperTest, ALeaseReleasedByItsOwnEndIsNoNewsATakeoverIs) {
  kernel::MemoryEventStore store;
  std::mutex mu;
  std::vector<std::string> warnings;
  LeaseKeeper keeper(store, kernel::LeaseOwner{"a", "host-a", 1, "boot"}, 30,
                     [&](std::string_view w) {
                       std::lock_guard lock(mu);
                       warnings.emplace_back(w);
                     });
  kernel::Lease ended = keeper.take("ended");
  store.releaseLease(ended);  // as an ending append may, before the run drops it
  kernel::Lease taken = keeper.take("taken");
  store.acquireLease({"taken", kernel::LeaseOwner{"b", "host-b", 2, "boot"}, 10'000, taken.token});
  for (int i = 0; i < 200; ++i) {  // beats every 10 ms: until the takeover is reported
    {
      std::lock_guard lock(mu);
      if (!warnings.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a few beats more
  std::lock_guard lock(mu);
  ASSERT_EQ(warnings.size(), 1u) << (warnings.empty() ? "" : warnings[0]);
  EXPECT_NE(warnings[0].find("taken"), std::string::npos) << warnings[0];
}

// Counts the leases taken through it.
class CountingStore : public kernel::ForwardingEventStore {
 public:
  using ForwardingEventStore::ForwardingEventStore;
  kernel::Lease acquireLease(const kernel::LeaseRequest& request) override {
    ++acquired;
    return ForwardingEventStore::acquireLease(request);
  }
  int acquired = 0;
};

// An executor of this process claimed the run as this very owner: that claim is the run's
// lease (no statement, the same token), kept alive by the keeper. A claim of another owner,
// or one shorter than the keeper's ttl, is taken over by a new lease.
TEST(LeaseKeeperTest, AClaimOfItsOwnOwnerIsTheLeaseAndOthersAreTakenOver) {
  kernel::MemoryEventStore memory;
  CountingStore store(memory);
  kernel::LeaseOwner self{"a", "host-a", 1, "boot"};
  LeaseKeeper keeper(store, self, 60, [](std::string_view) {});
  kernel::Lease mine = memory.acquireLease({"mine", self, 60, std::nullopt});
  EXPECT_EQ(keeper.take("mine", mine).token, mine.token);
  EXPECT_EQ(store.acquired, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // past the claim's ttl: renewed
  auto current = memory.currentLease("mine");
  ASSERT_TRUE(current);
  EXPECT_EQ(current->token, mine.token);
  EXPECT_GT(current->expiresAtMillis, mine.expiresAtMillis) << "the adopted claim was not renewed";

  kernel::Lease other = memory.acquireLease({"other", {"b", "host-a", 1, "boot"}, 60, std::nullopt});
  kernel::Lease shortClaim = memory.acquireLease({"short", self, 10, std::nullopt});
  EXPECT_EQ(keeper.take("other", other).token, other.token + 1);
  EXPECT_EQ(keeper.take("short", shortClaim).token, shortClaim.token + 1);
  EXPECT_EQ(store.acquired, 2);
}

}  // namespace
}  // namespace loom::workflow

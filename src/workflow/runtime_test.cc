#include "loom/workflow/runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <thread>

#include "loom/effects/errors.h"
#include "loom/kernel/fold.h"
#include "loom/kernel/forwarding_event_store.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/util/error.h"
#include "loom/workflow/errors.h"
#include "support/sqlite_fault_vfs.h"
#include "support/temp_dir.h"

namespace loom::workflow {
namespace {

using kernel::EventType;
using kernel::ExecutionStatus;

class RuntimeTest : public ::testing::Test {
 protected:
  RuntimeTest() {
    tasks_.add({"echo", "tool", false, "", {}},
               [this](const effects::EffectContext& ctx, json::value in) {
                 ++echoCalls_;
                 lastContext_ = ctx;
                 return json::value{{"echo", in}};
               });
  }

  std::unique_ptr<WorkflowRuntime> runtime(std::shared_ptr<const effects::EffectChain> chain = {}) {
    RuntimeOptions options;
    options.clock = clock_;
    options.workers = 4;
    return std::make_unique<WorkflowRuntime>(store_, workflows_, tasks_, std::move(chain), options);
  }

  std::vector<EventType> types(const std::string& id) {
    std::vector<EventType> out;
    for (const auto& e : store_.read(id)) out.push_back(e.type);
    return out;
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  kernel::MemoryEventStore store_;
  WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  std::atomic<int> echoCalls_{0};
  effects::EffectContext lastContext_;
};

TEST_F(RuntimeTest, RunsStepsAndRecordsEachOutputOnce) {
  int calls = 0;
  workflows_.add("three", "", [&](WorkflowContext& ctx) {
    int64_t sum = 0;
    for (int i = 1; i <= 3; ++i) {
      sum += ctx.step("s" + std::to_string(i),
                      [&] {
                        ++calls;
                        return json::value(i);
                      })
                 .as_int64();
    }
    return json::value(sum);
  });
  auto rt = runtime();
  RunResult r = rt->start("three", json::object{}, {.id = "e1"});
  EXPECT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(r.output.as_int64(), 6);
  EXPECT_EQ(r.effectsRun, 3);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(types("e1"),
            (std::vector<EventType>{EventType::kExecutionStarted, EventType::kStepCompleted,
                                    EventType::kStepCompleted, EventType::kStepCompleted,
                                    EventType::kExecutionCompleted}));
  auto steps = store_.read("e1");
  EXPECT_EQ(steps[1].data.at("taskKind").as_string(), "flow");
  EXPECT_EQ(steps[1].data.at("effectId").as_string(), "s1");
}

TEST_F(RuntimeTest, ResumeReplaysRecordedStepsWithoutCallingThem) {
  std::atomic<int> calls{0};
  workflows_.add("parking", "", [&](WorkflowContext& ctx) {
    ctx.step("a", [&] {
      ++calls;
      return json::value("A");
    });
    ctx.step("b", [&] {
      ++calls;
      return json::value("B");
    });
    json::value go = ctx.awaitSignal("go");
    auto c = ctx.step("c", [&] {
      ++calls;
      return json::value("C");
    });
    return json::value{{"go", go}, {"c", c}};
  });
  auto rt = runtime();
  RunResult parked = rt->start("parking", nullptr, {.id = "p"});
  EXPECT_EQ(parked.status, ExecutionStatus::kParked);
  EXPECT_EQ(parked.waitingFor, "go");
  EXPECT_EQ(calls, 2);

  // Resuming without the signal parks again and appends no second EXECUTION_PARKED.
  auto before = store_.info("p")->nextSeq;
  RunResult again = runtime()->resume("p");
  EXPECT_EQ(again.status, ExecutionStatus::kParked);
  EXPECT_EQ(again.replayedSteps, 2);
  EXPECT_EQ(again.effectsRun, 0);
  EXPECT_EQ(store_.info("p")->nextSeq, before);
  EXPECT_EQ(calls, 2);

  RunResult done = runtime()->signal("p", "go", json::value(42));
  EXPECT_EQ(done.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(done.replayedSteps, 2);
  EXPECT_EQ(done.effectsRun, 1);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(done.output.at("go").as_int64(), 42);

  // An ended execution returns its recorded result and runs nothing.
  RunResult ended = runtime()->resume("p");
  EXPECT_EQ(ended.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(ended.output, done.output);
  EXPECT_EQ(calls, 3);
  EXPECT_THROW(runtime()->signal("p", "go", nullptr), FailedPreconditionError);
}

TEST_F(RuntimeTest, EffectsCarryTaskKindAndInputIsJournaled) {
  workflows_.add("fx", "", [&](WorkflowContext& ctx) {
    return ctx.effect("call-1", "echo", json::value{{"q", 1}});
  });
  RunResult r = runtime()->start("fx", nullptr, {.id = "fx1", .subject = "alice"});
  EXPECT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(lastContext_.taskKind, "tool");
  EXPECT_EQ(lastContext_.stepId, "call-1");
  EXPECT_EQ(lastContext_.effectId, "echo");
  EXPECT_EQ(lastContext_.subject, std::optional<std::string>("alice"));
  EXPECT_FALSE(lastContext_.transient);
  auto events = store_.read("fx1");
  EXPECT_EQ(events[1].data.at("input"), (json::value{{"q", 1}}));
  EXPECT_EQ(store_.info("fx1")->subject, std::optional<std::string>("alice"));
}

TEST_F(RuntimeTest, InvokeTransientRunsTheChainButRecordsNothing) {
  workflows_.add("tr", "",
                 [&](WorkflowContext& ctx) { return ctx.invokeTransient("echo", json::value(7)); });
  RunResult r = runtime()->start("tr", nullptr, {.id = "t1"});
  EXPECT_EQ(r.output.at("echo").as_int64(), 7);
  EXPECT_TRUE(lastContext_.transient);
  EXPECT_TRUE(lastContext_.stepId.empty());
  EXPECT_EQ(types("t1"),
            (std::vector<EventType>{EventType::kExecutionStarted, EventType::kExecutionCompleted}));
}

TEST_F(RuntimeTest, DuplicateStepIdFailsTheRun) {
  workflows_.add("dup", "", [&](WorkflowContext& ctx) {
    ctx.step("x", [] { return json::value(1); });
    ctx.step("x", [] { return json::value(2); });
    return json::value();
  });
  RunResult r = runtime()->start("dup", nullptr, {.id = "d"});
  EXPECT_EQ(r.status, ExecutionStatus::kFailed);
  EXPECT_NE(std::string(r.error.at("message").as_string()).find("used twice"), std::string::npos);
}

TEST_F(RuntimeTest, StepFailureIsRecordedAndReplayedWithoutRerunning) {
  int calls = 0;
  workflows_.add("boom", "", [&](WorkflowContext& ctx) {
    try {
      ctx.step("bad", [&]() -> json::value {
        ++calls;
        throw FailedPreconditionError("upstream refused");
      });
    } catch (const StepFailedError& e) {
      EXPECT_EQ(e.cause(), ErrorCode::kFailedPrecondition);
      return json::value("recovered");
    }
    return json::value("unreachable");
  });
  workflows_.add("uncaught", "", [&](WorkflowContext& ctx) {
    return ctx.step("bad", []() -> json::value { throw std::runtime_error("kaput"); });
  });
  RunResult r = runtime()->start("boom", nullptr, {.id = "b"});
  EXPECT_EQ(r.output.as_string(), "recovered");
  EXPECT_EQ(calls, 1);
  auto failed = store_.read("b")[1];
  EXPECT_EQ(failed.type, EventType::kStepFailed);
  EXPECT_EQ(failed.data.at("error").at("code").as_string(), "failedPrecondition");

  RunResult u = runtime()->start("uncaught", nullptr, {.id = "u"});
  EXPECT_EQ(u.status, ExecutionStatus::kFailed);
  EXPECT_EQ(u.error.at("code").as_string(), "stepFailed");
  EXPECT_EQ(store_.info("u")->status, ExecutionStatus::kFailed);
}

TEST_F(RuntimeTest, StoppedEffectParksAndRunsAgainOnResume) {
  bool stopped = true;
  int calls = 0;
  workflows_.add("stoppable", "", [&](WorkflowContext& ctx) {
    return ctx.step("s", [&]() -> json::value {
      if (stopped) throw effects::EffectStopped("s");
      ++calls;
      return json::value("ran");
    });
  });
  RunResult r = runtime()->start("stoppable", nullptr, {.id = "k"});
  EXPECT_EQ(r.status, ExecutionStatus::kParked);
  EXPECT_EQ(r.parkReason, "effectStopped");
  stopped = false;
  RunResult done = runtime()->resume("k");
  EXPECT_EQ(done.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(calls, 1);
  auto events = store_.read("k");
  EXPECT_EQ(events[1].type, EventType::kStepFailed);
  EXPECT_TRUE(events[1].data.at("retryable").as_bool());
  EXPECT_EQ(events[3].type, EventType::kStepCompleted);
  EXPECT_EQ(events[3].data.at("attempt").as_int64(), 2);
}

TEST_F(RuntimeTest, AnUnreadableKillSwitchParksWithAWakeTimeForAWorker) {
  bool unreadable = true;
  workflows_.add("guarded", "", [&](WorkflowContext& ctx) {
    return ctx.step("s", [&]() -> json::value {
      if (unreadable) throw effects::KillSwitchUnreadable("s", "the database is starting up");
      return json::value("ran");
    });
  });
  RunResult r = runtime()->start("guarded", nullptr, {.id = "ks"});
  EXPECT_EQ(r.status, ExecutionStatus::kParked);
  EXPECT_EQ(r.parkReason, "effectStopped");
  ASSERT_TRUE(r.wakeAtMillis.has_value()) << "not an operator's stop: due again later";
  auto park = store_.read("ks").back();
  EXPECT_EQ(park.type, EventType::kExecutionParked);
  EXPECT_TRUE(park.data.contains("wakeAt"));
  unreadable = false;
  EXPECT_EQ(runtime()->resume("ks").status, ExecutionStatus::kCompleted);
}

TEST_F(RuntimeTest, AnUnreachableStoreIsNotTheRunsFailureAndTheRunStaysResumable) {
  bool down = true;
  workflows_.add("flaky", "", [&](WorkflowContext& ctx) {
    json::value first = ctx.step("a", [] { return json::value(1); });
    if (down) throw UnavailableError("cannot connect to the database: it is starting up");
    return ctx.step("b", [] { return json::value(2); });
  });
  EXPECT_THROW(runtime()->start("flaky", nullptr, {.id = "f"}), UnavailableError);
  EXPECT_EQ(store_.info("f")->status, ExecutionStatus::kRunning) << "no EXECUTION_FAILED";
  down = false;
  RunResult r = runtime()->resume("f");
  EXPECT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(r.output, json::value(2));
}

TEST_F(RuntimeTest, StartingAnExistingIdIsRefused) {
  workflows_.add("one", "", [](WorkflowContext&) { return json::value(1); });
  runtime()->start("one", nullptr, {.id = "same"});
  try {
    runtime()->start("one", nullptr, {.id = "same"});
    FAIL() << "expected AlreadyExistsError";
  } catch (const AlreadyExistsError& e) {
    EXPECT_NE(std::string(e.what()).find("loom resume same"), std::string::npos);
  }
  EXPECT_THROW(runtime()->start("nope", nullptr), NotFoundError);
  EXPECT_THROW(runtime()->resume("missing"), NotFoundError);
}

TEST_F(RuntimeTest, ASignalAppendedWhileRunningIsAbsorbed) {
  // The signal lands between two steps (as from another process); the runner's next append
  // conflicts, absorbs the signal and goes on.
  workflows_.add("sig", "", [&](WorkflowContext& ctx) {
    ctx.step("one", [&] {
      auto info = store_.info(ctx.executionId());
      store_.append(ctx.executionId(), info->nextSeq,
                    {kernel::signalReceived("hello", json::value("world"), 0)});
      return json::value(1);
    });
    return ctx.awaitSignal("hello");
  });
  auto rt = runtime();
  RunResult r = rt->start("sig", nullptr, {.id = "s"});
  EXPECT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(r.output.as_string(), "world");
}

// A store whose leases cannot be written for now (a full disk after the signal's append).
class LeasesUnavailable : public kernel::ForwardingEventStore {
 public:
  using ForwardingEventStore::ForwardingEventStore;
  kernel::Lease acquireLease(const kernel::LeaseRequest& request) override {
    if (full) throw UnavailableError("the disk holding it is full: free disk space, then retry");
    return ForwardingEventStore::acquireLease(request);
  }
  bool full = false;
};

// A signal whose run cannot be continued at once is still recorded: the error says so (so it is
// not sent twice) and names the command that continues the run.
TEST_F(RuntimeTest, ASignalRecordedButNotFollowedSaysItIsRecordedAndHowToGoOn) {
  workflows_.add("sig", "", [](WorkflowContext& ctx) { return ctx.awaitSignal("go"); });
  LeasesUnavailable store(store_);
  RuntimeOptions options;
  options.clock = clock_;
  WorkflowRuntime rt(store, workflows_, tasks_, nullptr, options);
  ASSERT_EQ(rt.start("sig", nullptr, {.id = "s"}).status, ExecutionStatus::kParked);
  store.full = true;
  try {
    rt.signal("s", "go", json::value(1));
    FAIL() << "the run went on without a lease";
  } catch (const UnavailableError& e) {
    FAIL() << "a recorded signal reported as retryable (a retry sends it twice): " << e.what();
  } catch (const FailedPreconditionError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("signal 'go' is recorded in execution 's' (do not send it again)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("`loom resume s`"), std::string::npos) << what;
    EXPECT_NE(what.find("free disk space"), std::string::npos) << what;
  }
  auto kinds = types("s");
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), EventType::kSignalReceived), 1);
  store.full = false;
  RunResult r = rt.resume("s");
  EXPECT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(r.output, json::value(1));
}

// A disk that fails a write under the log (EIO, once) does not fail the run: the step's append
// is not committed and nothing else is recorded (a failure append would have fitted), and a
// resume finishes the run, running again only the step that was in flight.
TEST_F(RuntimeTest, ADiskErrorUnderTheLogStopsTheRunResumably) {
  loom::testing::SqliteFaultVfs vfs;  // before the store: its files go through it
  loom::testing::TempDir dir;
  kernel::SqliteEventStore log({(dir.path() / "loom.db").string(), kernel::Durability::kFull});
  std::array<int, 3> runs{};
  workflows_.add("three", "", [&](WorkflowContext& ctx) {
    for (int i = 0; i < 3; ++i) {
      ctx.step("s" + std::to_string(i), [&, i] {
        if (++runs[i] == 1 && i == 1) {  // the disk fails this step's append, once
          vfs.fail(loom::testing::SqliteFaultVfs::Call::kWrite, "loom.db-wal", SQLITE_IOERR_WRITE,
                   1);
        }
        return json::value(i);
      });
    }
    return json::value("done");
  });
  RuntimeOptions options;
  options.clock = clock_;
  WorkflowRuntime rt(log, workflows_, tasks_, nullptr, options);
  try {
    rt.start("three", nullptr, {.id = "e"});
    FAIL() << "the run went on past a write the disk refused";
  } catch (const UnavailableError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("the disk reported an I/O error"), std::string::npos) << what;
    EXPECT_NE(what.find("`loom resume e`"), std::string::npos) << what;
  }
  EXPECT_EQ(1, vfs.failed());
  EXPECT_EQ(ExecutionStatus::kRunning, log.info("e")->status) << "not failed: resumable";
  EXPECT_EQ(2u, log.read("e").size()) << "started and s0: nothing of s1, no failure";
  RunResult r = rt.resume("e");
  EXPECT_EQ(ExecutionStatus::kCompleted, r.status);
  EXPECT_EQ((std::array<int, 3>{1, 2, 1}), runs) << "only the step in flight ran again";
}

TEST_F(RuntimeTest, ManyExecutionsRunConcurrentlyOnThePool) {
  workflows_.add("count", "", [](WorkflowContext& ctx) {
    int64_t n = ctx.input().at("n").as_int64();
    for (int64_t i = 0; i < n; ++i) {
      ctx.step("s" + std::to_string(i), [i] { return json::value(i); });
    }
    return json::value(n);
  });
  auto rt = runtime();
  std::vector<std::future<RunResult>> futures;
  for (int i = 0; i < 32; ++i) {
    futures.push_back(
        rt->startAsync("count", json::value{{"n", 20}}, {.id = "c" + std::to_string(i)}));
  }
  for (auto& f : futures) EXPECT_EQ(f.get().status, ExecutionStatus::kCompleted);
  for (int i = 0; i < 32; ++i) {
    auto info = store_.info("c" + std::to_string(i));
    EXPECT_EQ(info->steps, 20);
    EXPECT_EQ(info->stateBytes,
              static_cast<int64_t>(json::textBytes(kernel::foldEvents(store_.read(info->id)))));
  }
}

TEST_F(RuntimeTest, FreshIdsAreUniqueAndSortable) {
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) ids.insert(newExecutionId(*clock_));
  EXPECT_EQ(ids.size(), 1000u);
  std::string a = newExecutionId(*clock_);
  clock_->advance(10);
  std::string b = newExecutionId(*clock_);
  EXPECT_LT(a.substr(0, 10), b.substr(0, 10));
}

}  // namespace
}  // namespace loom::workflow

namespace loom::workflow {
namespace {

TEST(ReplayEndTest, FiresOnceWhenTheRunLeavesTheRecordedPart) {
  kernel::MemoryEventStore store;
  WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  std::vector<std::string> events;
  workflows.add("two", "", [&](WorkflowContext& ctx) {
    ctx.step("a", [&] {
      events.push_back("run a");
      return json::value(1);
    });
    json::value go = ctx.awaitSignal("go");
    ctx.step("b", [&] {
      events.push_back("run b");
      return json::value(2);
    });
    return go;
  });
  RuntimeOptions o;
  o.onReplayEnd = [&](const std::string& id) { events.push_back("replay end " + id); };
  WorkflowRuntime rt(store, workflows, tasks, nullptr, o);
  rt.start("two", nullptr, {.id = "x"});
  EXPECT_EQ(events, (std::vector<std::string>{"replay end x", "run a"}));
  events.clear();
  rt.resume("x");  // replays a, parks again
  EXPECT_EQ(events, (std::vector<std::string>{"replay end x"}));
  events.clear();
  rt.signal("x", "go", json::value(7));
  EXPECT_EQ(events, (std::vector<std::string>{"replay end x", "run b"}));
}

}  // namespace
}  // namespace loom::workflow

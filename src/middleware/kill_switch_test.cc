#include "loom/middleware/kill_switch.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "loom/effects/errors.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/workflow/runtime.h"
#include "support/recording_middleware.h"

namespace loom::middleware {
namespace {

using loom::testing::Recorder;
using loom::testing::TempDir;
using loom::testing::Trace;

KillSwitchOptions optionsAt(const TempDir& dir, std::shared_ptr<const Clock> clock) {
  KillSwitchOptions o;
  o.path = (dir.path() / "loom.db").string();
  o.clock = std::move(clock);
  return o;
}

TEST(KillSwitchStore, KillUnkillAndList) {
  TempDir dir;
  auto clock = std::make_shared<ManualClock>(1000);
  KillSwitchStore store(optionsAt(dir, clock));
  EXPECT_FALSE(store.isStopped("fetch"));
  store.kill("fetch");
  clock->advance(5);
  store.kill("fetch");  // a second kill keeps the first `at`
  store.kill("search");
  EXPECT_TRUE(store.isStopped("fetch"));
  EXPECT_FALSE(store.isStopped("other"));
  auto entries = store.list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].effectId, "fetch");
  EXPECT_EQ(entries[0].atMillis, 1000);
  EXPECT_TRUE(store.unkill("fetch"));
  EXPECT_FALSE(store.unkill("fetch"));
  EXPECT_FALSE(store.isStopped("fetch"));

  store.killAll();
  EXPECT_TRUE(store.isStopped("anything"));
  EXPECT_FALSE(store.unkill("anything"));  // unkill of a name does not lift killAll
  EXPECT_TRUE(store.isStopped("anything"));
  EXPECT_EQ(store.list().front().effectId, "*");
  EXPECT_EQ(store.unkillAll(), 2);  // "*" and "search"
  EXPECT_FALSE(store.isStopped("anything"));
  EXPECT_FALSE(store.isStopped("search"));
  EXPECT_TRUE(store.list().empty());

  EXPECT_THROW(store.kill(""), InvalidArgumentError);
  EXPECT_THROW(store.kill("*"), InvalidArgumentError);
  EXPECT_THROW(store.unkill("*"), InvalidArgumentError);
}

TEST(KillSwitchStore, StopsPersistAcrossReopen) {
  TempDir dir;
  auto clock = std::make_shared<ManualClock>();
  { KillSwitchStore(optionsAt(dir, clock)).kill("fetch"); }
  KillSwitchStore reopened(optionsAt(dir, clock));
  EXPECT_TRUE(reopened.isStopped("fetch"));
}

// Two stores on one database stand for two processes sharing a home.
TEST(KillSwitchStore, AnotherProcessSeesAKillWithinTheRefreshWindow) {
  TempDir dir;
  auto clock = std::make_shared<ManualClock>();
  KillSwitchStore worker(optionsAt(dir, clock));
  KillSwitchStore operatorCli(optionsAt(dir, clock));
  EXPECT_FALSE(worker.isStopped("fetch"));  // loads the (empty) set at t0

  operatorCli.kill("fetch");
  clock->advance(kKillSwitchRefreshMillis - 1);
  EXPECT_FALSE(worker.isStopped("fetch"));  // still the cached copy: SQLite not re-read
  clock->advance(1);
  EXPECT_TRUE(worker.isStopped("fetch"));  // seen 250 ms after the kill, well within 1 s

  operatorCli.unkillAll();
  clock->advance(kKillSwitchRefreshMillis);
  EXPECT_FALSE(worker.isStopped("fetch"));
}

TEST(KillSwitchStore, AnUnreadableSwitchFailsClosed) {
  TempDir dir;
  auto clock = std::make_shared<ManualClock>();
  KillSwitchStore store(optionsAt(dir, clock));
  EXPECT_FALSE(store.isStopped("fetch"));
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open((dir.path() / "loom.db").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "DROP TABLE kill_switch", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  clock->advance(kKillSwitchRefreshMillis);
  try {
    store.isStopped("fetch");
    FAIL() << "expected KillSwitchUnreadable";
  } catch (const KillSwitchUnreadable& e) {
    EXPECT_EQ(e.code(), ErrorCode::kStopped);
    EXPECT_NE(std::string(e.what()).find("fetch"), std::string::npos);
  }
}

TEST(KillSwitchStore, AMissingHomeFolderIsAClearError) {
  KillSwitchOptions o;
  o.path = "/nonexistent-loom-home/loom.db";
  EXPECT_THROW(KillSwitchStore{o}, FailedPreconditionError);
}

TEST(KillSwitchMiddleware, AStoppedEffectNeverReachesInnerLayers) {
  auto store = std::make_shared<KillSwitchStore>(KillSwitchOptions{":memory:"});
  auto trace = std::make_shared<Trace>();
  auto inner = std::make_shared<Recorder>("inner", trace);
  effects::EffectChain chain({std::make_shared<KillSwitchMiddleware>(store), inner});
  int effectRuns = 0;
  auto effect = [&](const effects::EffectContext&, json::value in) {
    ++effectRuns;
    return in;
  };
  effects::EffectContext ctx{"e1", "s1", "fetch", "tool", std::nullopt, 1, false};
  EXPECT_EQ(chain.invoke(ctx, json::value(1), effect), json::value(1));
  store->kill("fetch");
  try {
    chain.invoke(ctx, json::value(2), effect);
    FAIL() << "expected EffectStopped";
  } catch (const effects::EffectStopped& e) {
    EXPECT_EQ(e.effectId(), "fetch");
    EXPECT_EQ(e.code(), ErrorCode::kStopped);
  }
  ctx.transient = true;  // transient calls are stopped as well
  EXPECT_THROW(chain.invoke(ctx, json::value(3), effect), effects::EffectStopped);
  EXPECT_EQ(inner->calls, 1);
  EXPECT_EQ(effectRuns, 1);
  ctx.effectId = "search";  // other effects still run
  EXPECT_EQ(chain.invoke(ctx, json::value(4), effect), json::value(4));
}

TEST(KillSwitchMiddleware, TheRunParksAndResumeAfterUnkillCompletesIt) {
  auto store = std::make_shared<KillSwitchStore>(KillSwitchOptions{":memory:"});
  auto trace = std::make_shared<Trace>();
  auto inner = std::make_shared<Recorder>("inner", trace);
  auto chain = std::make_shared<const effects::EffectChain>(
      std::vector<std::shared_ptr<effects::Middleware>>{
          std::make_shared<KillSwitchMiddleware>(store), inner});
  effects::TaskRegistry tasks;
  int fetches = 0;
  tasks.add({"fetch", "tool"}, [&](const effects::EffectContext&, json::value in) {
    ++fetches;
    return json::value(json::object{{"got", in}});
  });
  workflow::WorkflowRegistry workflows;
  workflows.add("wf", "", [](workflow::WorkflowContext& ctx) {
    json::value a = ctx.step("prepare", [] { return json::value("ready"); });
    json::value b = ctx.effect("fetch-1", "fetch", json::value(7));
    return json::value(json::array{a, b});
  });
  kernel::MemoryEventStore events;
  workflow::WorkflowRuntime runtime(events, workflows, tasks, chain);

  store->kill("fetch");
  auto parked = runtime.start("wf", json::value(nullptr), {.id = "run-1"});
  EXPECT_EQ(parked.status, kernel::ExecutionStatus::kParked);
  EXPECT_EQ(parked.parkReason, "effectStopped");
  EXPECT_EQ(fetches, 0);
  EXPECT_EQ(inner->calls, 1);  // only the "prepare" step reached the inner layer
  bool sawRetryableFailure = false;
  for (const auto& e : events.read("run-1")) {
    if (e.type == kernel::EventType::kStepFailed) {
      EXPECT_EQ(e.data.at("stepId"), "fetch-1");
      EXPECT_EQ(e.data.at("retryable"), true);
      EXPECT_EQ(e.data.at("error").at("code"), "stopped");
      sawRetryableFailure = true;
    }
  }
  EXPECT_TRUE(sawRetryableFailure);

  // Still stopped: resume parks again and runs nothing.
  EXPECT_EQ(runtime.resume("run-1").status, kernel::ExecutionStatus::kParked);
  EXPECT_EQ(fetches, 0);

  store->unkill("fetch");
  auto done = runtime.resume("run-1");
  ASSERT_EQ(done.status, kernel::ExecutionStatus::kCompleted) << json::toText(done.error);
  EXPECT_EQ(fetches, 1);
  EXPECT_EQ(done.output.at(1).at("got"), json::value(7));
  EXPECT_EQ(done.replayedSteps, 1);  // "prepare" came from the log
}

TEST(KillSwitchMiddleware, AStoppedTransientCallParksTheRunToo) {
  auto store = std::make_shared<KillSwitchStore>(KillSwitchOptions{":memory:"});
  auto chain = std::make_shared<const effects::EffectChain>(
      std::vector<std::shared_ptr<effects::Middleware>>{
          std::make_shared<KillSwitchMiddleware>(store)});
  effects::TaskRegistry tasks;
  int lookups = 0;
  tasks.add({"lookup", "tool"}, [&](const effects::EffectContext&, json::value in) {
    ++lookups;
    return in;
  });
  workflow::WorkflowRegistry workflows;
  workflows.add("wf", "", [](workflow::WorkflowContext& ctx) {
    return ctx.invokeTransient("lookup", json::value(5));
  });
  kernel::MemoryEventStore events;
  workflow::WorkflowRuntime runtime(events, workflows, tasks, chain);
  store->kill("lookup");
  auto parked = runtime.start("wf", json::value(nullptr), {.id = "t-1"});
  EXPECT_EQ(parked.status, kernel::ExecutionStatus::kParked);
  EXPECT_EQ(parked.parkReason, "effectStopped");
  EXPECT_EQ(lookups, 0);
  store->unkill("lookup");
  auto done = runtime.resume("t-1");
  EXPECT_EQ(done.status, kernel::ExecutionStatus::kCompleted);
  EXPECT_EQ(done.output, 5);
}

}  // namespace
}  // namespace loom::middleware

#include "loom/middleware/kill_switch.h"

#include <gtest/gtest.h>

#include "loom/effects/errors.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/workflow/runtime.h"
#include "support/recording_middleware.h"

namespace loom::middleware {
namespace {

using loom::testing::Recorder;
using loom::testing::TempDir;
using loom::testing::Trace;

// The store's behaviour over every backend: tests/conformance/kill_switch_conformance.cc.

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

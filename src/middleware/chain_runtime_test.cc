// The middleware chain inside the workflow runtime: what a throwing middleware does to a run,
// that transient calls go through the chain without being journaled, and the order in which
// layers see input and result.
#include <gtest/gtest.h>

#include "loom/kernel/memory_event_store.h"
#include "loom/workflow/errors.h"
#include "loom/workflow/runtime.h"
#include "support/recording_middleware.h"

namespace loom::middleware {
namespace {

using loom::testing::Recorder;
using loom::testing::Trace;

class Throwing : public effects::Middleware {
 public:
  std::string_view name() const override { return "throwing"; }
  json::value invoke(const effects::EffectContext& ctx, json::value input,
                     const effects::Next& next) override {
    if (ctx.effectId == "explode") throw std::runtime_error("middleware blew up");
    if (ctx.effectId == "refuse") throw InvalidArgumentError("refused by policy");
    return next(ctx, std::move(input));
  }
};

struct World {
  explicit World(std::vector<std::shared_ptr<effects::Middleware>> layers)
      : chain(std::make_shared<const effects::EffectChain>(std::move(layers))) {
    for (std::string id : {"explode", "refuse", "fine"}) {
      tasks.add({id, "tool"}, [](const effects::EffectContext&, json::value in) { return in; });
    }
  }
  effects::TaskRegistry tasks;
  workflow::WorkflowRegistry workflows;
  kernel::MemoryEventStore events;
  std::shared_ptr<const effects::EffectChain> chain;
};

TEST(ChainInRuntime, AThrowingMiddlewareFailsTheStepNotTheRuntime) {
  World w({std::make_shared<Throwing>()});
  w.workflows.add("wf", "", [](workflow::WorkflowContext& ctx) {
    return ctx.effect("s1", ctx.input().as_string().c_str(), json::value(1));
  });
  workflow::WorkflowRuntime runtime(w.events, w.workflows, w.tasks, w.chain);
  for (std::string effect : {"explode", "refuse"}) {
    auto r = runtime.start("wf", json::value(effect), {.id = effect});
    EXPECT_EQ(r.status, kernel::ExecutionStatus::kFailed);
    auto log = w.events.read(effect);
    bool recorded = false;
    for (const auto& e : log) {
      if (e.type != kernel::EventType::kStepFailed) continue;
      recorded = true;
      EXPECT_EQ(e.data.at("retryable"), false);
      std::string code(e.data.at("error").at("code").as_string());
      std::string message(e.data.at("error").at("message").as_string());
      EXPECT_EQ(code, effect == "explode" ? "internal" : "invalidArgument");
      EXPECT_NE(message.find(effect == "explode" ? "blew up" : "refused"), std::string::npos);
    }
    EXPECT_TRUE(recorded) << effect;
  }
  // The runtime is fine: the next run completes.
  auto ok = runtime.start("wf", json::value("fine"));
  EXPECT_EQ(ok.status, kernel::ExecutionStatus::kCompleted);
  EXPECT_EQ(ok.output, 1);
}

TEST(ChainInRuntime, InvokeTransientRunsTheChainButWritesNoEvent) {
  auto trace = std::make_shared<Trace>();
  auto recorder = std::make_shared<Recorder>("rec", trace);
  World w({recorder});
  w.workflows.add("wf", "", [](workflow::WorkflowContext& ctx) {
    return ctx.invokeTransient("fine", json::value(json::object{{"x", 1}}));
  });
  workflow::WorkflowRuntime runtime(w.events, w.workflows, w.tasks, w.chain);
  auto r = runtime.start("wf", json::value(nullptr), {.id = "t1"});
  ASSERT_EQ(r.status, kernel::ExecutionStatus::kCompleted);
  EXPECT_EQ(r.output.at("x"), 1);
  EXPECT_EQ(recorder->calls, 1);
  EXPECT_NE(trace->snapshot().at(0).find("transient"), std::string::npos);
  auto log = w.events.read("t1");
  ASSERT_EQ(log.size(), 2u);  // EXECUTION_STARTED, EXECUTION_COMPLETED: no step event
  EXPECT_EQ(log[0].type, kernel::EventType::kExecutionStarted);
  EXPECT_EQ(log[1].type, kernel::EventType::kExecutionCompleted);
  EXPECT_EQ(r.effectsRun, 0);
}

TEST(ChainInRuntime, LayersSeeInputInwardAndResultOutwardInOrder) {
  auto trace = std::make_shared<Trace>();
  World w({std::make_shared<Recorder>("a", trace), std::make_shared<Recorder>("b", trace),
           std::make_shared<Recorder>("c", trace)});
  json::value effectSaw;
  w.tasks.add({"echo", "tool"}, [&](const effects::EffectContext&, json::value in) {
    effectSaw = in;
    return json::value(json::object{{"result", true}});
  });
  w.workflows.add("wf", "", [](workflow::WorkflowContext& ctx) {
    return ctx.effect("s1", "echo", json::value(json::object{}));
  });
  workflow::WorkflowRuntime runtime(w.events, w.workflows, w.tasks, w.chain);
  auto r = runtime.start("wf", json::value(nullptr));
  ASSERT_EQ(r.status, kernel::ExecutionStatus::kCompleted);
  EXPECT_EQ(json::toText(effectSaw), R"({"path":["+a","+b","+c"]})");
  EXPECT_EQ(json::toText(r.output), R"({"result":true,"seenBy":["c","b","a"]})");
  EXPECT_EQ(trace->snapshot(),
            (std::vector<std::string>{R"(a in {})", R"(b in {"path":["+a"]})",
                                      R"(c in {"path":["+a","+b"]})", R"(c out {"result":true})",
                                      R"(b out {"result":true,"seenBy":["c"]})",
                                      R"(a out {"result":true,"seenBy":["c","b"]})"}));
}

}  // namespace
}  // namespace loom::middleware

#include "loom/middleware/timeout.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "loom/effects/task.h"

namespace loom::middleware {
namespace {

effects::EffectContext ctxOfKind(std::string kind) {
  return {"e1", "s1", "slow", std::move(kind), std::nullopt, 1, false};
}

TEST(Timeout, AFastEffectReturnsItsResultAndErrors) {
  auto timeout = std::make_shared<TimeoutMiddleware>(TimeoutConfig{.ms = 5000});
  effects::EffectChain chain({timeout});
  auto echo = [](const effects::EffectContext& c, json::value in) {
    return json::value(json::object{{"in", in}, {"effect", c.effectId}});
  };
  json::value out = chain.invoke(ctxOfKind("tool"), json::value(3), echo);
  EXPECT_EQ(out.at("in"), 3);
  EXPECT_EQ(out.at("effect"), "slow");
  auto failing = [](const effects::EffectContext&, json::value) -> json::value {
    throw ConflictError("raced");
  };
  EXPECT_THROW(chain.invoke(ctxOfKind("tool"), json::value(), failing), ConflictError);
}

TEST(Timeout, ASlowEffectIsAbandonedWithDeadlineExceededAndKeepsRunning) {
  // Shared with the helper thread, which may still be inside set_value when the test ends.
  auto late = std::make_shared<std::promise<std::string>>();
  auto lateWarning = late->get_future();
  auto timeout = std::make_shared<TimeoutMiddleware>(
      TimeoutConfig{.ms = 30}, [late](std::string_view w) { late->set_value(std::string(w)); });
  effects::EffectChain chain({timeout});
  auto release = std::make_shared<std::promise<void>>();
  std::shared_future<void> released = release->get_future().share();
  auto slow = [released](const effects::EffectContext&, json::value) {
    released.wait();
    return json::value("late");
  };
  auto started = std::chrono::steady_clock::now();
  try {
    chain.invoke(ctxOfKind("tool"), json::value(), slow);
    FAIL() << "expected DeadlineExceededError";
  } catch (const DeadlineExceededError& e) {
    EXPECT_NE(std::string(e.what()).find("'slow'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("30 ms"), std::string::npos);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  release->set_value();  // the abandoned call finishes in the background and is reported
  ASSERT_EQ(lateWarning.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_NE(lateWarning.get().find("finished after its 30 ms timeout"), std::string::npos);
}

TEST(Timeout, FlowStepsRunInlineWithoutATimeout) {
  auto timeout = std::make_shared<TimeoutMiddleware>(TimeoutConfig{.ms = 1});
  effects::EffectChain chain({timeout});
  auto caller = std::this_thread::get_id();
  auto step = [&](const effects::EffectContext&, json::value) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return json::value(std::this_thread::get_id() == caller);
  };
  EXPECT_EQ(chain.invoke(ctxOfKind(std::string(effects::kKindFlow)), json::value(), step), true);
}

TEST(Timeout, InvalidConfigIsAConfigError) {
  EXPECT_EQ(validateTimeoutConfig({.ms = 0}, "t").at(0).path, "t.ms");
  EXPECT_TRUE(validateTimeoutConfig({.ms = kTimeoutMaxMillis}, "t").empty());
  EXPECT_THROW(TimeoutMiddleware(TimeoutConfig{.ms = kTimeoutMaxMillis + 1}), ConfigError);
}

}  // namespace
}  // namespace loom::middleware

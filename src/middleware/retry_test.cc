#include "loom/middleware/retry.h"

#include <gtest/gtest.h>

namespace loom::middleware {
namespace {

effects::EffectContext toolCtx() { return {"e1", "s1", "flaky", "tool", std::nullopt, 1, false}; }

struct Harness {
  explicit Harness(RetryConfig config) : clock(std::make_shared<ManualClock>(0)) {
    config.clock = clock;
    retry = std::make_shared<RetryMiddleware>(std::move(config));
    chain = std::make_unique<effects::EffectChain>(
        std::vector<std::shared_ptr<effects::Middleware>>{retry});
  }
  std::shared_ptr<ManualClock> clock;
  std::shared_ptr<RetryMiddleware> retry;
  std::unique_ptr<effects::EffectChain> chain;
};

TEST(Retry, FailsTwiceThenSucceedsWithBoundedJitteredBackoff) {
  Harness h(RetryConfig{.attempts = 3,
                        .initialDelayMs = 100,
                        .multiplier = 2.0,
                        .maxDelayMs = 1000,
                        .jitter = 0.5,
                        .seed = 42});
  std::vector<int64_t> callTimes;
  std::vector<json::value> inputs;
  auto effect = [&](const effects::EffectContext&, json::value in) -> json::value {
    callTimes.push_back(h.clock->nowMillis());
    inputs.push_back(in);
    if (callTimes.size() < 3) throw UnavailableError("try again");
    return json::value("ok");
  };
  EXPECT_EQ(h.chain->invoke(toolCtx(), json::value("in"), effect), "ok");
  ASSERT_EQ(callTimes.size(), 3u);
  for (const auto& in : inputs) EXPECT_EQ(in, "in");  // every try gets the original input
  int64_t first = callTimes[1] - callTimes[0];
  int64_t second = callTimes[2] - callTimes[1];
  EXPECT_GE(first, 50);  // nominal 100, jitter 0.5: [50, 100]
  EXPECT_LE(first, 100);
  EXPECT_GE(second, 100);  // nominal 200: [100, 200]
  EXPECT_LE(second, 200);
}

TEST(Retry, DelaysGrowExponentiallyUpToTheCap) {
  RetryConfig c{.initialDelayMs = 100, .multiplier = 3.0, .maxDelayMs = 1000};
  EXPECT_EQ(retryNominalDelayMillis(c, 1), 100);
  EXPECT_EQ(retryNominalDelayMillis(c, 2), 300);
  EXPECT_EQ(retryNominalDelayMillis(c, 3), 900);
  EXPECT_EQ(retryNominalDelayMillis(c, 4), 1000);
  EXPECT_EQ(retryNominalDelayMillis(c, 60), 1000);
  Harness h(RetryConfig{
      .attempts = 5, .initialDelayMs = 100, .multiplier = 3.0, .maxDelayMs = 1000, .jitter = 0.0});
  int calls = 0;
  auto effect = [&](const effects::EffectContext&, json::value) -> json::value {
    ++calls;
    throw DeadlineExceededError("slow");
  };
  EXPECT_THROW(h.chain->invoke(toolCtx(), json::value(), effect), DeadlineExceededError);
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(h.clock->nowMillis(), 100 + 300 + 900 + 1000);  // no sleep after the last try
}

TEST(Retry, ANonRetryableErrorIsRethrownAtOnce) {
  Harness h(RetryConfig{.attempts = 5});
  int calls = 0;
  auto invalid = [&](const effects::EffectContext&, json::value) -> json::value {
    ++calls;
    throw InvalidArgumentError("bad input");
  };
  EXPECT_THROW(h.chain->invoke(toolCtx(), json::value(), invalid), InvalidArgumentError);
  EXPECT_EQ(calls, 1);
  auto foreign = [&](const effects::EffectContext&, json::value) -> json::value {
    ++calls;
    throw std::runtime_error("not a loom error");
  };
  EXPECT_THROW(h.chain->invoke(toolCtx(), json::value(), foreign), std::runtime_error);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(h.clock->nowMillis(), 0);
}

TEST(Retry, RetryOnChoosesTheCodes) {
  Harness h(RetryConfig{.attempts = 2, .jitter = 0, .retryOn = {ErrorCode::kConflict}});
  int calls = 0;
  auto effect = [&](const effects::EffectContext&, json::value) -> json::value {
    if (++calls == 1) throw ConflictError("raced");
    throw UnavailableError("down");
  };
  EXPECT_THROW(h.chain->invoke(toolCtx(), json::value(), effect), UnavailableError);
  EXPECT_EQ(calls, 2);
}

TEST(Retry, InvalidConfigNamesEveryField) {
  RetryConfig bad{.attempts = 0,
                  .initialDelayMs = 500,
                  .multiplier = 0.5,
                  .maxDelayMs = 100,
                  .jitter = 2,
                  .retryOn = {}};
  ConfigIssues issues = validateRetryConfig(bad, "execution.effectMiddleware[0]");
  std::vector<std::string> paths;
  for (const auto& i : issues) paths.push_back(i.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"execution.effectMiddleware[0].attempts",
                                             "execution.effectMiddleware[0].maxDelayMs",
                                             "execution.effectMiddleware[0].multiplier",
                                             "execution.effectMiddleware[0].jitter",
                                             "execution.effectMiddleware[0].retryOn"}));
  EXPECT_THROW(RetryMiddleware{bad}, ConfigError);
}

}  // namespace
}  // namespace loom::middleware

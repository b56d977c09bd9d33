// Model usage (usage.h): what a step may record, what it costs at a price, and the fixed text
// a sealed step binds.
#include "loom/kernel/usage.h"

#include <gtest/gtest.h>

#include "loom/util/error.h"

namespace loom::kernel {
namespace {

TEST(UsageTest, ACostIsTheTokensAtTheirPricesCachedInputAtItsOwn) {
  ModelPrice price{.input = 2.5, .output = 10, .cachedInput = 1.25};
  TokenUsage u{.inputTokens = 1'000'000, .outputTokens = 100'000, .cachedInputTokens = 400'000};
  // 600k uncached in at $2.5/M, 400k cached at $1.25/M, 100k out at $10/M.
  EXPECT_EQ(costNanoUsd(price, u), nanoUsdOf(1.5 + 0.5 + 1.0));
  price.cachedInput.reset();
  EXPECT_EQ(costNanoUsd(price, u), nanoUsdOf(2.5 + 1.0)) << "cached input at the input price";
  EXPECT_EQ(costNanoUsd(ModelPrice{}, u), 0);
  EXPECT_EQ(costNanoUsd(ModelPrice{.input = 3, .output = 15}, TokenUsage{.inputTokens = 1}),
            3'000) << "one token at $3/M is 3000 nano-USD";
}

TEST(UsageTest, AStepRecordsWholeNumbersInRangeAndNothingElse) {
  auto usage = [](json::object u) { return json::object{{"usage", std::move(u)}}; };
  auto ok = stepUsage(usage({{"model", "m"}, {"inputTokens", 7}, {"outputTokens", 3},
                             {"cachedInputTokens", 2}, {"costUsd", 0.25}}));
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, (TokenUsage{7, 3, 2, 250'000'000, 1}));
  EXPECT_FALSE(stepUsage(json::object{{"output", 1}}));
  for (const json::object& bad :
       {json::object{{"model", "m"}, {"inputTokens", 1.5}, {"outputTokens", 0}},
        json::object{{"model", "m"}, {"inputTokens", "1"}, {"outputTokens", 0}},
        json::object{{"model", "m"}, {"inputTokens", kMaxStepTokens + 1}, {"outputTokens", 0}},
        json::object{{"model", "m"}, {"inputTokens", 1}, {"outputTokens", 0}, {"costUsd", -1}},
        json::object{{"model", "m"}, {"inputTokens", 1}, {"outputTokens", 0}, {"extra", 1}},
        json::object{{"model", 5}, {"inputTokens", 1}, {"outputTokens", 0}}}) {
    EXPECT_THROW(stepUsage(usage(bad)), InvalidArgumentError) << json::toText(bad);
  }
  EXPECT_THROW(validateStepUsage(json::value(3)), InvalidArgumentError);
}

TEST(UsageTest, TheBoundTextNamesEveryFieldInAFixedOrder) {
  json::object u{{"outputTokens", 3}, {"model", "m"}, {"inputTokens", 7}, {"costUsd", 0.5}};
  EXPECT_EQ(stepUsageText(u), "m,7,3,-,500000000");
  u["inputTokens"] = 8;
  EXPECT_EQ(stepUsageText(u), "m,8,3,-,500000000");
}

}  // namespace
}  // namespace loom::kernel

#include "loom/plugins/sentinel/sentinel.h"

#include <gtest/gtest.h>

#include "content/claim_check_envelope.h"
#include "loom/content/memory_content_store.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/sweep/sweep.h"
#include "loom/util/error.h"
#include "loom/workflow/runtime.h"

namespace loom::plugins {
namespace {

TEST(SentinelTest, ClassicEnvelopesWithoutRetainAreReclaimedAfterTheTtl) {
  auto clock = std::make_shared<ManualClock>();
  auto store = std::make_shared<content::MemoryContentStore>(clock);
  auto sentinel = sentinelMiddleware({store, {"probe"}});
  kernel::MemoryEventStore logs;
  workflow::WorkflowRegistry workflows;
  effects::TaskRegistry tasks;
  tasks.add({"probe", "tool", false, "", nullptr}, [](const effects::EffectContext&, json::value) {
    return json::value(std::string(20'000, 't'));  // over the 16 KiB cap
  });
  tasks.add({"small", "tool", false, "", nullptr}, [](const effects::EffectContext&, json::value) {
    return json::value(std::string(20'000, 's'));  // not named: stays inline
  });
  workflows.add("watch", "", [](workflow::WorkflowContext& ctx) {
    return json::value{{"a", ctx.effect("a", "probe", nullptr)},
                       {"b", ctx.effect("b", "small", nullptr)}};
  });
  workflow::RuntimeOptions o;
  o.clock = clock;
  auto chain = std::make_shared<const effects::EffectChain>(
      std::vector<std::shared_ptr<effects::Middleware>>{sentinel});
  workflow::WorkflowRuntime rt(logs, workflows, tasks, chain, o);
  auto r = rt.start("watch", nullptr, {.id = "w"});
  auto envelope = content::parseEnvelope(r.output.at("a"));
  ASSERT_TRUE(envelope);
  EXPECT_FALSE(envelope->retain);
  EXPECT_FALSE(content::looksLikeEnvelope(r.output.at("b")));
  sweep::SweepOptions so;
  so.clock = clock;
  so.ttlMillis = 24LL * 3600 * 1000;
  clock->advance(2 * so.ttlMillis);
  auto report = sweep::sweepUnpinnedContent(*store, sweep::SweepSources{&logs, {}}, so);
  EXPECT_EQ(report.deleted, 1);
  EXPECT_FALSE(store->has(envelope->address));
}

TEST(SentinelTest, NeedsAStoreAndEffectIds) {
  auto store = std::make_shared<content::MemoryContentStore>(std::make_shared<ManualClock>());
  EXPECT_THROW(sentinelMiddleware({nullptr, {"x"}}), ConfigError);
  EXPECT_THROW(sentinelMiddleware({store, {}}), ConfigError);
}

}  // namespace
}  // namespace loom::plugins

// ADR 0140 "Second consumer" (ADR 0083): the sentinel preset, configured as docs/claim-check.md
// says (into execution.effectMiddleware), through defineConfig and through a TOML agent app.
#include <fstream>

#include "loom/agent_app/agent_app.h"
#include "loom/plugins/sentinel/sentinel.h"
#include "opt_in_fixture.h"

namespace loom::testing {
namespace {

using kernel::ExecutionStatus;

std::shared_ptr<middleware::ClaimCheckMiddleware> sentinelFor(
    std::shared_ptr<content::ContentStore> store, std::string effectId) {
  return plugins::sentinelMiddleware({std::move(store), {std::move(effectId)}, 1024});
}

TEST_F(OptInFixture, SecondConsumer_TheSentinelPresetGoesIntoEffectMiddleware) {
  registerAgent(turns({call("fetch_report", {{"page", 2}})}));
  auto c = baseConfig();
  c.execution.effectMiddleware.push_back(sentinelFor(counting_, "fetch_report"));
  auto a = boot(c);  // defineConfig, then boot
  EXPECT_EQ(a->chain().layerNames(), (std::vector<std::string>{"killSwitch", "sentinel"}));
  EXPECT_EQ(a->chain().find("claimCheck"), nullptr) << "execution.claimCheck is unset";
  ASSERT_EQ(a->runtime().start("research", json::value("go"), {.id = "s"}).status,
            ExecutionStatus::kCompleted);
  auto env = content::parseEnvelope(output(*a, "s", "research#turn:1:tool:0"));
  ASSERT_TRUE(env) << "the telemetry envelope is recorded";
  EXPECT_FALSE(env->retain) << "telemetry: TTL-reclaimable";
  // Both at once: the agent opt-in and the sentinel keep their own names.
  c.execution.claimCheck = claimCheck({"fetch_report"});
  EXPECT_NO_THROW(app::defineConfig(c));
}

TEST_F(OptInFixture, SecondConsumer_TheSentinelPresetInATomlAgentApp) {
  std::filesystem::create_directories(home_);
  std::ofstream(home_ / "script.json")
      << R"({"turns": [{"toolCalls": [{"name": "fetch_report", "arguments": {"page": 3}}]},
                       {"answer": "done"}]})";
  std::ofstream(home_ / "app.toml")
      << "[agent]\nname = \"watch\"\nprompt = \"go\"\n[model]\nscript = \"script.json\"\n"
         "[[tools]]\nname = \"fetch_report\"\ncommand = [\""
      << LOOM_SOURCE_DIR << "/examples/agents/tools/fetch_report\"]\n"
      << "[storage]\nhome = \"" << (home_ / "data").string() << "\"\n"
      << "[storage.eventStore]\ndurability = \"normal\"\n";
  agent_app::AgentApp loaded = agent_app::loadAgentApp(home_ / "app.toml");
  app::Config c = *loaded.config;
  c.storage.contentStore.instance = counting_;  // the store the sweep is handed
  c.execution.effectMiddleware.push_back(sentinelFor(counting_, "fetch_report"));
  std::shared_ptr<const app::Config> config = app::defineConfig(std::move(c));
  agent_app::registerAgentApp(loaded, workflows_, tasks_);
  auto a = app::boot(config, workflows_, tasks_, {.clock = clock_});
  EXPECT_EQ(a->chain().layerNames(), (std::vector<std::string>{"killSwitch", "sentinel"}));
  auto r =
      a->runtime().start("watch", agent_app::agentAppInput(loaded, json::value("go")), {.id = "t"});
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted) << json::toText(r.error);
  auto env = content::parseEnvelope(output(*a, "t", "watch#turn:1:tool:0"));
  ASSERT_TRUE(env) << "fetch_report's 1.5-4 kB page is over the sentinel's 1 KiB cap";
  EXPECT_FALSE(env->retain);
  EXPECT_TRUE(inner_.has(env->address));
}

}  // namespace
}  // namespace loom::testing

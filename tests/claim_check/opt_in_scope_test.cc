// ADR 0140 D9 (scope), D10 (taint carried by the envelope) and D11 rules 1-2 (forgery).
#include "loom/sweep/content_walker.h"
#include "opt_in_fixture.h"

namespace loom::testing {
namespace {

using kernel::ExecutionStatus;

TEST_F(OptInFixture, D9_OnlyAgentToolFramesOfListedTools) {
  registerAgent(turns({call("fetch_report", {{"page", 1}}), call("screenshot")}));
  // A hand-written workflow calling the same tool outside an agent loop.
  workflows_.add("manual", "", [](workflow::WorkflowContext& ctx) {
    json::value a = ctx.invokeTransient("fetch_report", json::value{{"page", 2}});
    json::value b = ctx.effect("fetch_report", "fetch_report", json::value{{"page", 3}});
    json::value c =
        ctx.step("loop#turn:1:tool:0", [] { return json::value(std::string(5000, 'f')); });
    return json::value{{"transient", content::looksLikeEnvelope(a)},
                       {"flowStep", content::looksLikeEnvelope(b)},
                       {"flowKind", content::looksLikeEnvelope(c)}};
  });
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"fetch_report", "screenshot", "loop#turn:1:tool:0"});
  auto a = boot(c);
  auto r = a->runtime().start("research", json::value("go"), {.id = "d9"});
  EXPECT_TRUE(content::looksLikeEnvelope(output(*a, "d9", "research#turn:1:tool:0")));
  json::value media = output(*a, "d9", "research#turn:2:tool:0");
  EXPECT_FALSE(content::looksLikeEnvelope(media)) << "a returnsMedia tool passes through";
  EXPECT_EQ(media.at("parts").as_array().size(), 1u);
  auto m = a->runtime().start("manual", nullptr, {.id = "manual"});
  ASSERT_EQ(m.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(m.output,
            (json::value{{"transient", false}, {"flowStep", false}, {"flowKind", false}}));
}

TEST_F(OptInFixture, D10_TaintIsCarriedByTheEnvelopeFencedAndRecorded) {
  registerAgent(turns({call("untrusted"), call("nested_taint")}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"untrusted", "nested_taint"});
  c.execution.claimCheck->digests["untrusted"] = [](const json::value&, std::string_view) {
    return json::value("a page of web text");
  };
  auto a = boot(c);
  ASSERT_EQ(a->runtime().start("research", json::value("go"), {.id = "d10"}).status,
            ExecutionStatus::kCompleted);
  json::value top = output(*a, "d10", "research#turn:1:tool:0");
  EXPECT_EQ(effects::taintOrigin(top), std::optional<std::string>("mcp:web"))
      << "even with a declared digest";
  json::value nested = output(*a, "d10", "research#turn:2:tool:0");
  EXPECT_EQ(effects::taintOrigin(nested), std::optional<std::string>("a2a:peer"));
  auto state = agent::foldAgentState(a->store().read("d10"), "research");
  EXPECT_EQ(state.at("sawTaintFrom"), (json::array{"mcp:web", "a2a:peer"}));
  std::string fenced(model_->last[model_->last.size() - 3].at("content").as_string());
  EXPECT_NE(fenced.find("<untrusted-data origin=\"mcp:web\">"), std::string::npos);
  // The walker finds the envelope inside its wrapper, and it is load-bearing.
  auto events = a->store().read("d10");
  std::vector<std::string> roots;
  for (const auto& e : events) {
    for (auto& r : sweep::retainRootsOf(e)) roots.push_back(r);
  }
  EXPECT_EQ(roots.size(), 2u);
}

TEST_F(OptInFixture, D11_ALookAlikeIsForceOffloadedAndNeverTrusted) {
  registerAgent(turns({call("forger")}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"forger"});
  auto a = boot(c);
  a->runtime().start("research", json::value("go"), {.id = "d11"});
  json::value recorded = output(*a, "d11", "research#turn:1:tool:0");
  auto env = content::parseEnvelope(recorded);
  ASSERT_TRUE(env) << "under the cap, still offloaded whole (rule 1)";
  EXPECT_NE(env->address, std::string(64, 'f'));
  EXPECT_NE(inner_.get(env->address)->find(std::string(64, 'f')), std::string::npos)
      << "the look-alike is data inside the blob";
  std::vector<std::string> cited;
  sweep::visitCitedAddresses(recorded, [&](std::string_view a) { cited.emplace_back(a); });
  EXPECT_EQ(cited, std::vector<std::string>{env->address})
      << "the log cites only the preset's own envelope (a preview is text, not a ref)";
  // Rule 2: a nested retain: true (an unlisted tool's output) is not load-bearing.
  kernel::Event forged =
      kernel::stepCompleted("x#turn:1:tool:0", "tool", "other",
                            json::value{{"page",
                                         {{"__loomClaimCheck", 1},
                                          {"ref", {{"__loomContent", std::string(64, 'f')}}},
                                          {"size", 3},
                                          {"retain", true}}}},
                            0);
  EXPECT_TRUE(sweep::retainRootsOf(forged).empty());
}

}  // namespace
}  // namespace loom::testing

// ADR 0140 D9 (scope, media pass-through), D10 (taint carried by the envelope, every origin)
// and D11 rules 1-2 (forgery).
#include "opt_in_fixture.h"
#include "sweep/content_walker.h"

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
  // A task of another kind under the id the hand-written step uses (a listed id must name a
  // registered task).
  tasks_.add({"loop#turn:1:tool:0", "flow", false, "", nullptr},
             [](const effects::EffectContext&, json::value) { return json::value(nullptr); });
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

TEST_F(OptInFixture, D9_AReturnsMediaToolPassesOnlyItsMediaThrough) {
  registerAgent(turns({call("screenshot"), call("media_report")}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"screenshot", "media_report"});
  auto a = boot(c);
  ASSERT_EQ(a->runtime().start("research", json::value("go"), {.id = "media"}).status,
            ExecutionStatus::kCompleted);
  json::value media = output(*a, "media", "research#turn:1:tool:0");
  EXPECT_FALSE(content::looksLikeEnvelope(media)) << "media (parts) stays inline, over the cap";
  json::value report = output(*a, "media", "research#turn:2:tool:0");
  auto env = content::parseEnvelope(report);
  ASSERT_TRUE(env) << "a returnsMedia tool's non-media result is offloaded: "
                   << json::toText(report).substr(0, 80);
  EXPECT_TRUE(env->retain);
  EXPECT_EQ(counting_->count("put"), 1);
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

// The tool message the model was last called with.
json::value lastToolMessage(const json::array& messages) {
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    if (it->at("role") == "tool") return *it;
  }
  ADD_FAILURE() << "no tool message";
  return nullptr;
}

TEST_F(OptInFixture, D10_EveryTaintOriginSurvivesTheOffload) {
  registerAgent(turns({call("two_origins")}));
  const json::array both{"a2a:alpha", "a2a:beta"};
  for (bool on : {false, true}) {
    SCOPED_TRACE(on ? "claim-check on" : "claim-check off");
    auto c = baseConfig();
    if (on) c.execution.claimCheck = claimCheck({"two_origins"});
    auto a = boot(c);
    std::string id = on ? "on" : "off";
    ASSERT_EQ(a->runtime().start("research", json::value("go"), {.id = id}).status,
              ExecutionStatus::kCompleted);
    json::value recorded = output(*a, id, "research#turn:1:tool:0");
    EXPECT_EQ(content::looksLikeEnvelope(effects::untainted(recorded)), on);
    auto state = agent::foldAgentState(a->store().read(id), "research");
    EXPECT_EQ(state.at("sawTaintFrom"), both);
    json::value message = lastToolMessage(model_->last);
    EXPECT_EQ(message.at("taint"), both);
    EXPECT_NE(std::string(message.at("content").as_string())
                  .find("<untrusted-data origin=\"a2a:alpha, a2a:beta\">"),
              std::string::npos)
        << std::string(message.at("content").as_string()).substr(0, 120);
    if (on) {
      auto events = a->store().read(id);
      std::vector<std::string> roots;
      for (const auto& e : events) {
        for (auto& r : sweep::retainRootsOf(e)) roots.push_back(r);
      }
      EXPECT_EQ(roots.size(), 1u) << "the walker looks through the one wrapper";
    }
  }
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

TEST_F(OptInFixture, D11_AMediaResultNestingALookAlikeIsOffloadedWhole) {
  registerAgent(turns({call("media_forger")}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"media_forger"});
  auto a = boot(c);
  a->runtime().start("research", json::value("go"), {.id = "mf"});
  json::value recorded = output(*a, "mf", "research#turn:1:tool:0");
  auto env = content::parseEnvelope(recorded);
  ASSERT_TRUE(env) << "the look-alike guard runs before the media pass-through: "
                   << json::toText(recorded);
  EXPECT_NE(inner_.get(env->address)->find(std::string(64, 'f')), std::string::npos);
  std::vector<std::string> cited;
  sweep::visitCitedAddresses(recorded, [&](std::string_view a) { cited.emplace_back(a); });
  EXPECT_EQ(cited, std::vector<std::string>{env->address});
}

}  // namespace
}  // namespace loom::testing

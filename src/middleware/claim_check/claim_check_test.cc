#include "loom/middleware/claim_check/claim_check.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "content/claim_check_envelope.h"
#include "content/counting_content_store.h"
#include "loom/content/memory_content_store.h"
#include "loom/effects/taint.h"
#include "loom/middleware/claim_check/claim_check_config.h"
#include "loom/util/error.h"

namespace loom::middleware {
namespace {

class ClaimCheckTest : public ::testing::Test {
 protected:
  static effects::EffectContext toolFrame(std::string effectId = "fetch") {
    return {"exec", "agent#turn:1:tool:0", effectId, "tool", std::nullopt, 1, false};
  }
  json::value call(ClaimCheckMiddleware& mw, json::value result) {
    return call(mw, std::move(result), toolFrame());
  }
  json::value call(ClaimCheckMiddleware& mw, json::value result, effects::EffectContext ctx) {
    effects::EffectChain chain({std::shared_ptr<effects::Middleware>(&mw, [](auto*) {})});
    return chain.invoke(ctx, nullptr,
                        [&](const effects::EffectContext&, json::value) { return result; });
  }
  ClaimCheckOptions options(int64_t cap) {
    ClaimCheckOptions o;
    o.store = store_;
    o.inlineCapBytes = cap;
    return o;
  }
  // A JSON string value whose text is exactly `bytes` long ("..." with ASCII inside).
  static json::value ofTextBytes(int64_t bytes) {
    return json::value(std::string(static_cast<std::size_t>(bytes - 2), 'x'));
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::shared_ptr<content::MemoryContentStore> store_ =
      std::make_shared<content::MemoryContentStore>(clock_);
};

TEST_F(ClaimCheckTest, CapBoundariesOnUtf8TextLength) {
  auto mw = claimCheckMiddleware(options(1024));
  EXPECT_EQ(call(*mw, ofTextBytes(1023)), ofTextBytes(1023));
  EXPECT_EQ(call(*mw, ofTextBytes(1024)), ofTextBytes(1024)) << "exactly the cap stays inline";
  auto env = content::parseEnvelope(call(*mw, ofTextBytes(1025)));
  ASSERT_TRUE(env);
  EXPECT_EQ(env->size, 1025);
  // Multi-byte: 511 two-byte characters + quotes = 1024 bytes inline; one more is over.
  std::string e2;
  for (int i = 0; i < 511; ++i) e2 += "é";
  EXPECT_FALSE(content::looksLikeEnvelope(call(*mw, json::value(e2))));
  EXPECT_TRUE(content::looksLikeEnvelope(call(*mw, json::value(e2 + "é"))));
}

TEST_F(ClaimCheckTest, OffloadStoresTheJsonTextAndResolvesBack) {
  auto mw = claimCheckMiddleware(options(10));
  json::value result{{"rows", json::array{1, 2, 3}}, {"name", "ünïcode"}};
  json::value recorded = call(*mw, result);
  auto env = content::parseEnvelope(recorded);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->address, content::sha256Hex(json::toText(result)));
  EXPECT_FALSE(env->retain);
  EXPECT_FALSE(env->digest);
  EXPECT_EQ(resolveClaimCheck(*store_, recorded), std::optional<json::value>(result));
  store_->remove(env->address);
  EXPECT_EQ(resolveClaimCheck(*store_, recorded), std::nullopt) << "gone blob resolves to null";
  EXPECT_THROW(resolveClaimCheck(*store_, json::value{{"no", 1}}), InvalidArgumentError);
}

// The offloaded result goes into the step's journaled result, so the middleware lets the store
// write it with the append that records the step (ADR 0019): putDeferred, never put.
TEST_F(ClaimCheckTest, OffloadsThroughADeferredPut) {
  class DeferringStore : public content::MemoryContentStore {
   public:
    using MemoryContentStore::MemoryContentStore;
    std::string put(std::string_view bytes, const std::optional<std::string>& subject) override {
      ++puts;
      return MemoryContentStore::put(bytes, subject);
    }
    std::string putDeferred(std::string_view bytes,
                            const std::optional<std::string>& subject) override {
      ++deferred;
      return MemoryContentStore::put(bytes, subject);
    }
    int puts = 0;
    int deferred = 0;
  };
  auto store = std::make_shared<DeferringStore>(clock_);
  auto o = options(10);
  o.store = store;
  auto mw = claimCheckMiddleware(std::move(o));
  auto env = content::parseEnvelope(call(*mw, ofTextBytes(100)));
  ASSERT_TRUE(env);
  EXPECT_EQ(1, store->deferred);
  EXPECT_EQ(0, store->puts);
  EXPECT_EQ(ofTextBytes(100), resolveClaimCheck(*store, content::toJson(*env)));
}

TEST_F(ClaimCheckTest, DeclaredDigestWinsOverDefaultAndRetainIsRecorded) {
  auto o = options(10);
  o.defaultDigest = previewDigest(8);
  o.digests["count"] = [](const json::value& r, std::string_view) {
    return json::value{{"rows", r.at("rows").as_array().size()}};
  };
  o.retain = true;
  auto mw = claimCheckMiddleware(o);
  json::value result{{"rows", json::array{1, 2, 3, 4, 5, 6, 7}}};
  auto declared = content::parseEnvelope(call(*mw, result, toolFrame("count")));
  EXPECT_EQ(*declared->digest, (json::value{{"rows", 7}}));
  EXPECT_TRUE(declared->retain);
  auto preview = content::parseEnvelope(call(*mw, result));
  EXPECT_EQ(*preview->digest, (json::value{{"preview", "{\"rows\":"}, {"truncated", true}}));
}

TEST_F(ClaimCheckTest, PreviewCountsCharactersAndNeverSplitsOne) {
  EXPECT_EQ(previewOf("\"ab\"", 10), (json::value{{"preview", "\"ab\""}}));
  EXPECT_EQ(previewOf("\"ab\"", 4), (json::value{{"preview", "\"ab\""}})) << "whole: no truncated";
  EXPECT_EQ(previewOf("\"éé€😀\"", 4), (json::value{{"preview", "\"éé€"}, {"truncated", true}}));
  EXPECT_EQ(previewOf("😀😀", 1), (json::value{{"preview", "😀"}, {"truncated", true}}));
  auto parsed = PreviewDigest::from(previewOf("\"abcdef\"", 3));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->preview, "\"ab");
  EXPECT_TRUE(parsed->truncated);
  EXPECT_FALSE(PreviewDigest::from(json::value{{"pick", 1}}));
}

TEST_F(ClaimCheckTest, TaintIsCarriedByTheEnvelopeAndNeverPreviewed) {
  auto o = options(10);
  o.defaultDigest = previewDigest(16);
  o.digests["declared"] = [](const json::value&, std::string_view) { return json::value("d"); };
  auto mw = claimCheckMiddleware(o);
  json::value top = effects::tainted(json::value(std::string(50, 'x')), "mcp:files");
  json::value recorded = call(*mw, top);
  ASSERT_EQ(effects::taintOrigin(recorded), std::optional<std::string>("mcp:files"));
  auto env = content::parseEnvelope(effects::untainted(recorded));
  ASSERT_TRUE(env);
  EXPECT_FALSE(env->digest) << "a tainted result is never previewed";
  json::value nested{
      {"items", json::array{effects::tainted(json::value("hi there, long"), "a2a:x")}}};
  json::value n = call(*mw, nested, toolFrame("declared"));
  EXPECT_EQ(effects::taintOrigin(n), std::optional<std::string>("a2a:x"));
  EXPECT_EQ(*content::parseEnvelope(effects::untainted(n))->digest, json::value("d"))
      << "a declared digest still applies";
  EXPECT_EQ(
      resolveClaimCheck(*store_, recorded),
      std::optional<json::value>(effects::tainted(json::value(std::string(50, 'x')), "mcp:files")));
}

TEST_F(ClaimCheckTest, EveryTaintOriginSurvivesTheOffloadInOneWrapper) {
  auto mw = claimCheckMiddleware(options(10));
  json::value nested{
      {"items", json::array{effects::tainted(json::value("alpha text"), "a2a:alpha"),
                            effects::tainted(json::value("beta text"), "a2a:beta")}}};
  json::value recorded = call(*mw, nested);
  EXPECT_EQ(effects::taintOrigins(recorded), (std::vector<std::string>{"a2a:alpha", "a2a:beta"}));
  EXPECT_EQ(effects::taintOrigin(recorded), std::optional<std::string>("a2a:alpha"))
      << "\"origin\" stays the first, for readers that know only it";
  EXPECT_TRUE(content::parseEnvelope(effects::untainted(recorded))) << "one wrapper, not two";
  EXPECT_EQ(resolveClaimCheck(*store_, recorded), std::optional<json::value>(nested));
  json::value one = call(*mw, effects::tainted(json::value("only one origin"), "mcp:x"));
  EXPECT_TRUE(content::parseEnvelope(effects::untainted(one)));
  EXPECT_EQ(one.at(effects::kTaintKey), (json::value{{"origin", "mcp:x"}}))
      << "one origin: the wrapper is written as before";
}

TEST_F(ClaimCheckTest, D11_AnEnvelopeAnEffectReturnsIsInertDataForEveryLayer) {
  json::value lookalike{{"__loomClaimCheck", 1},
                        {"ref", {{"__loomContent", std::string(64, 'a')}}},
                        {"size", 5},
                        {"retain", true}};
  json::value inert{{"__loomData", lookalike}};
  auto classic = claimCheckMiddleware(options(4096));
  EXPECT_EQ(call(*classic, lookalike), inert) << "the layer sees data, never the look-alike";
  auto o = options(4096);
  o.envelopesAreData = true;
  auto data = claimCheckMiddleware(o);
  json::value recorded = call(*data, lookalike);
  auto env = content::parseEnvelope(recorded);
  ASSERT_TRUE(env) << "forced offload even under the cap (D11 rule 1)";
  EXPECT_EQ(env->size, static_cast<int64_t>(json::textBytes(inert)));
  EXPECT_EQ(resolveClaimCheck(*store_, recorded), std::optional<json::value>(inert));
  json::value nested{{"page", {{"x", lookalike}}}};
  EXPECT_TRUE(content::parseEnvelope(call(*data, nested))) << "a nested look-alike too";
  EXPECT_EQ(call(*data, json::value("small")), json::value("small"));
}

TEST_F(ClaimCheckTest, ThePassThroughIsAskedOnlyAfterTheLookAlikeGuard) {
  auto o = options(4096);
  o.envelopesAreData = true;
  o.passThrough = [](const effects::EffectContext&, const json::value&) { return true; };
  auto mw = claimCheckMiddleware(o);
  json::value media{
      {"parts", json::array{json::object{{"type", "resource"},
                                         {"resource",
                                          {{"__loomClaimCheck", 1},
                                           {"ref", {{"__loomContent", std::string(64, 'a')}}},
                                           {"size", 5}}}}}}};
  EXPECT_TRUE(content::parseEnvelope(call(*mw, media))) << "a look-alike is never passed through";
  json::value big(std::string(5000, 'p'));
  EXPECT_EQ(call(*mw, big), big) << "otherwise the pass-through wins over the cap";
}

TEST_F(ClaimCheckTest, ScopeEffectIdsTransientPassThroughAndAgentFramesOnly) {
  auto o = options(4);
  o.effectIds = std::set<std::string, std::less<>>{"fetch"};
  o.agentToolFramesOnly = true;
  o.passThrough = [](const effects::EffectContext& ctx, const json::value&) {
    return ctx.effectId == "media";
  };
  auto mw = claimCheckMiddleware(o);
  json::value big(std::string(100, 'y'));
  EXPECT_TRUE(content::looksLikeEnvelope(call(*mw, big)));
  EXPECT_EQ(call(*mw, big, toolFrame("other")), big) << "unlisted effect";
  auto transient = toolFrame();
  transient.transient = true;
  transient.stepId.clear();
  EXPECT_EQ(call(*mw, big, transient), big) << "invokeTransient is never offloaded";
  auto flow = toolFrame();
  flow.stepId = "fetch";
  flow.taskKind = "flow";
  EXPECT_EQ(call(*mw, big, flow), big) << "a hand-written flow step sharing the id";
  auto otherKind = toolFrame();
  otherKind.taskKind = "llm";
  EXPECT_EQ(call(*mw, big, otherKind), big) << "a task of another kind";
  auto o2 = options(4);
  o2.passThrough = o.passThrough;
  auto mw2 = claimCheckMiddleware(o2);
  EXPECT_EQ(call(*mw2, big, toolFrame("media")), big) << "passThrough leaves it inline";
}

TEST_F(ClaimCheckTest, OnOffloadThrowIsReportedNotFailed) {
  std::vector<std::string> warnings;
  auto o = options(4);
  o.onOffload = [](const OffloadInfo&) { throw std::runtime_error("hook bug"); };
  o.onWarn = [&](std::string_view w) { warnings.emplace_back(w); };
  auto mw = claimCheckMiddleware(o);
  EXPECT_TRUE(content::looksLikeEnvelope(call(*mw, json::value(std::string(20, 'z')))));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("hook bug"), std::string::npos);
}

TEST_F(ClaimCheckTest, BadOptionsAreConfigErrors) {
  ClaimCheckOptions none;
  EXPECT_THROW(claimCheckMiddleware(none), ConfigError);
  EXPECT_THROW(claimCheckMiddleware(options(-1)), ConfigError);
  EXPECT_THROW(previewDigest(-1), ConfigError);
}

// The config's problems as "path: message" lines.
std::string issuesText(const ClaimCheckConfig& c, const KnownTasks& tasks) {
  std::string out;
  for (const auto& i : validateClaimCheckConfig(c, tasks)) out += i.path + ": " + i.message + "\n";
  return out;
}

TEST(ClaimCheckConfigTest, WithARegistryEveryToolIdMustNameARegisteredTaskThatIsNoModel) {
  effects::TaskRegistry tasks;
  auto none = [](const effects::EffectContext&, json::value) { return json::value(nullptr); };
  tasks.add({"fetch_report", "tool", false, "", nullptr}, none);
  tasks.add({"search", "tool", false, "", nullptr}, none);
  tasks.add({"scripted", "llm", false, "", nullptr}, none);
  ClaimCheckConfig c;
  c.toolIds = std::vector<std::string>{"fetch_report", "fetch_reprot", "scripted"};
  EXPECT_EQ(issuesText(c, {}), "") << "without a registry nothing is checked against tasks";
  std::string text = issuesText(c, {&tasks});
  EXPECT_NE(text.find("execution.claimCheck.toolIds: 'fetch_reprot' is no tool of this app, so "
                      "nothing would be offloaded for it: the app's tools are fetch_report, "
                      "search; check the spelling\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("execution.claimCheck.toolIds: 'scripted' is a model"), std::string::npos)
      << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  text = issuesText(c, {&tasks, /*moreToolsAtRun=*/true});
  EXPECT_EQ(text.find("fetch_reprot"), std::string::npos) << "it may be a tool started at run";
  EXPECT_NE(text.find("'scripted' is a model"), std::string::npos) << text;
  EXPECT_EQ(unregisteredToolIds(c, tasks), std::vector<std::string>{"fetch_reprot"});
  effects::TaskRegistry empty;
  c.toolIds = std::vector<std::string>{"x"};
  EXPECT_NE(issuesText(c, {&empty}).find("the app has no tools; register the tool before boot"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::middleware

// ADR 0140 D1-D5, D7 and L through a real boot of an agent app.
#include "loom/app/config_file.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/util/error.h"
#include "loom/workflow/code_version.h"
#include "opt_in_fixture.h"

namespace loom::testing {
namespace {

using kernel::ExecutionStatus;

std::vector<std::string> logTexts(app::App& a, const std::string& id) {
  std::vector<std::string> out;
  for (const auto& e : a.store().read(id)) out.push_back(kernel::toText(e));
  return out;
}

TEST_F(OptInFixture, D1_UnsetAddsNoMiddlewareAndChangesNothing) {
  registerAgent(turns({call("fetch_report", {{"page", 3}})}));
  std::vector<std::string> without, withNothing;
  {
    auto a = boot(baseConfig());
    EXPECT_EQ(a->chain().find("claimCheck"), nullptr);
    EXPECT_EQ(a->chain().layerNames(), (std::vector<std::string>{"killSwitch"}));
    a->runtime().start("research", json::value("go"), {.id = "same"});
    without = logTexts(*a, "same");
  }
  // The same run with no app at all: a bare runtime, no middleware, a fresh log.
  clock_ = std::make_shared<ManualClock>();
  {
    kernel::SqliteEventStore bare({(home_ / "bare.db").string(), kernel::Durability::kNormal});
    workflow::RuntimeOptions o;
    o.clock = clock_;
    o.codeVersion = workflow::programCodeVersion();  // the same program as the app's
    workflow::WorkflowRuntime rt(bare, workflows_, tasks_, nullptr, o);
    rt.start("research", json::value("go"), {.id = "same"});
    for (const auto& e : bare.read("same")) withNothing.push_back(kernel::toText(e));
  }
  EXPECT_EQ(without, withNothing) << "unset: the log is byte-identical to a run without it";
  EXPECT_EQ(counting_->total(), 0);
}

TEST_F(OptInFixture, D1_GroupedOptionBuildsTheMiddlewareAndTheFlatSpellingIsRefused) {
  registerAgent(turns({}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"fetch_report"});
  auto a = boot(c);
  EXPECT_EQ(a->chain().layerNames(), (std::vector<std::string>{"killSwitch", "claimCheck"}));
  try {
    app::parseConfigToml("claimCheck = { toolIds = [\"fetch_report\"] }\n", "flat.toml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("execution.claimCheck"), std::string::npos) << e.what();
  }
  auto parsed = app::parseConfigToml(
      "[execution.claimCheck]\ntoolIds = [\"fetch_report\"]\npreview = false\ninlineCapBytes = 10\n"
      "digests.search = { pick = [\"/total\"], length = \"/hits\" }\n",
      "ok.toml");
  ASSERT_TRUE(parsed->execution.claimCheck);
  EXPECT_EQ(parsed->execution.claimCheck->inlineCapBytes, 10);
  EXPECT_FALSE(parsed->execution.claimCheck->preview);
  EXPECT_EQ(parsed->execution.claimCheck->digests.count("search"), 1u);
}

void expectToolIdsError(const std::function<void()>& f) {
  try {
    f();
    FAIL() << "expected a ConfigError naming execution.claimCheck.toolIds";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("execution.claimCheck.toolIds"), std::string::npos)
        << e.what();
  }
}

TEST_F(OptInFixture, D2_ToolIdsIsRequiredNonEmptyStringsAndNeverAModel) {
  registerAgent(turns({}));
  expectToolIdsError([&] {
    auto c = baseConfig();
    c.execution.claimCheck.emplace();
    boot(c);
  });
  expectToolIdsError([&] {
    auto c = baseConfig();
    c.execution.claimCheck = claimCheck({});
    boot(c);
  });
  expectToolIdsError(
      [] { app::parseConfigToml("[execution.claimCheck]\nstore = \"default\"\n", "m.toml"); });
  expectToolIdsError(
      [] { app::parseConfigToml("[execution.claimCheck]\ntoolIds = []\n", "e.toml"); });
  expectToolIdsError(
      [] { app::parseConfigToml("[execution.claimCheck]\ntoolIds = [1, 2]\n", "n.toml"); });
  expectToolIdsError([&] {
    auto c = baseConfig();
    c.execution.claimCheck = claimCheck({"fetch_report", "scripted"});  // the model: an llm task
    boot(c);
  });
  EXPECT_FALSE(std::filesystem::exists(home_)) << "a refused boot creates nothing";
}

TEST_F(OptInFixture, D2_AToolIdNoRegisteredTaskHasIsRefusedAtBootNamingTheTools) {
  registerAgent(turns({}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"fetch_reprot"});
  EXPECT_NO_THROW(app::defineConfig(c)) << "defineConfig knows no tasks";
  try {
    boot(c);
    FAIL() << "a typo would offload nothing, silently";
  } catch (const app::ConfigValidationError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    EXPECT_EQ(e.issues()[0].path, "execution.claimCheck.toolIds");
    EXPECT_NE(e.issues()[0].message.find("'fetch_reprot' is no tool of this app"),
              std::string::npos)
        << e.what();
    EXPECT_NE(e.issues()[0].message.find("exact, fetch_report, forger"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.issues()[0].message.find("scripted"), std::string::npos) << "tools, not models";
  }
  EXPECT_FALSE(std::filesystem::exists(home_)) << "a refused boot creates nothing";
}

TEST_F(OptInFixture, D3_TheModelSeesTheEnvelopeWithItsDigest) {
  registerAgent(turns({call("fetch_report", {{"page", 1}}), call("untrusted")}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"fetch_report", "untrusted"});
  auto a = boot(c);
  auto r = a->runtime().start("research", json::value("go"), {.id = "d3"});
  ASSERT_EQ(r.status, ExecutionStatus::kCompleted);
  json::value recorded = output(*a, "d3", "research#turn:1:tool:0");
  auto env = content::parseEnvelope(recorded);
  ASSERT_TRUE(env);
  EXPECT_TRUE(env->retain);
  const auto& digest = env->digest->as_object();
  EXPECT_EQ(digest.at("preview").as_string().size(), 256u);
  EXPECT_TRUE(digest.at("truncated").as_bool());
  // The model read the envelope, never the resolved bytes.
  const auto& seen = model_->last;
  EXPECT_EQ(seen[seen.size() - 3].at("content"), recorded);
  EXPECT_EQ(json::toText(seen).find(std::string(1000, 'b')), std::string::npos);
  // A tainted result is never previewed.
  auto tainted =
      content::parseEnvelope(effects::untainted(output(*a, "d3", "research#turn:2:tool:0")));
  ASSERT_TRUE(tainted);
  EXPECT_FALSE(tainted->digest);
}

TEST_F(OptInFixture, D3_DeclaredDigestReplacesThePreviewAndPreviewFalseRecordsRefAndSize) {
  registerAgent(turns({call("fetch_report", {{"page", 2}}), call("untrusted")}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"fetch_report", "untrusted"});
  c.execution.claimCheck->digests["fetch_report"] = [](const json::value& r, std::string_view) {
    return json::value{{"id", r.at("id")}};
  };
  c.execution.claimCheck->preview = std::nullopt;
  auto a = boot(c);
  a->runtime().start("research", json::value("go"), {.id = "d3b"});
  auto declared = content::parseEnvelope(output(*a, "d3b", "research#turn:1:tool:0"));
  EXPECT_EQ(*declared->digest, (json::value{{"id", "r-2"}}));
  json::value bare = effects::untainted(output(*a, "d3b", "research#turn:2:tool:0"));
  EXPECT_EQ(bare.as_object().size(), 4u) << json::toText(bare);  // marker, ref, size, retain
  EXPECT_FALSE(bare.as_object().contains("digest"));
}

TEST_F(OptInFixture, D4_DefaultCapIsOneKibibyteAndExactly1024StaysInline) {
  EXPECT_EQ(middleware::DEFAULT_CLAIM_CHECK_CAP_BYTES, 1024);
  EXPECT_EQ(middleware::DEFAULT_CLAIM_CHECK_PREVIEW_CHARS, 256);
  registerAgent(turns({call("exact", {{"bytes", 1024}}), call("exact", {{"bytes", 1025}})}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"exact"});
  auto a = boot(c);
  a->runtime().start("research", json::value("go"), {.id = "d4"});
  EXPECT_FALSE(content::looksLikeEnvelope(output(*a, "d4", "research#turn:1:tool:0")));
  EXPECT_TRUE(content::looksLikeEnvelope(output(*a, "d4", "research#turn:2:tool:0")));
}

// Records what the layer inside claim-check sees.
class Spy : public effects::Middleware {
 public:
  std::string_view name() const override { return "spy"; }
  json::value invoke(const effects::EffectContext& ctx, json::value in,
                     const effects::Next& next) override {
    json::value out = next(ctx, std::move(in));
    if (ctx.effectId == "secret") seen = out;
    return out;
  }
  json::value seen;
};

TEST_F(OptInFixture, D5_StoredBlobIsRedactedUserMiddlewareSeesTheRealResult) {
  registerAgent(turns({call("secret")}));
  auto spy = std::make_shared<Spy>();
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"secret"});
  c.security.redact.push_back({"token", "hunter2-hunter2", "", ""});
  c.execution.effectMiddleware.push_back(spy);
  auto a = boot(c);
  EXPECT_EQ(a->chain().layerNames(),
            (std::vector<std::string>{"killSwitch", "claimCheck", "redaction", "spy"}));
  a->runtime().start("research", json::value("go"), {.id = "d5"});
  EXPECT_NE(json::toText(spy->seen).find("hunter2-hunter2"), std::string::npos)
      << "a user middleware sees the real result, not an envelope";
  auto env = content::parseEnvelope(output(*a, "d5", "research#turn:1:tool:0"));
  ASSERT_TRUE(env);
  std::string blob = *inner_.get(env->address);
  EXPECT_EQ(blob.find("hunter2-hunter2"), std::string::npos);
  EXPECT_NE(blob.find("[REDACTED:token]"), std::string::npos);
}

TEST_F(OptInFixture, D5_AStoppedEffectNeverReachesClaimCheck) {
  registerAgent(turns({call("fetch_report", {{"page", 1}})}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"fetch_report"});
  auto a = boot(c);
  a->killSwitch().kill("fetch_report");
  auto r = a->runtime().start("research", json::value("go"), {.id = "d5k"});
  EXPECT_EQ(r.status, ExecutionStatus::kParked);
  EXPECT_EQ(calls_["fetch_report"], 0);
  EXPECT_EQ(counting_->count("put"), 0);
  a->killSwitch().unkill("fetch_report");
  EXPECT_EQ(a->runtime().resume("d5k").status, ExecutionStatus::kCompleted);
  EXPECT_EQ(counting_->count("put"), 1);
}

TEST_F(OptInFixture, D7_TheWarningNamesClaimCheckAndStillFiresWhenItIsOn) {
  options_.warnTranscriptBytes = 2000;
  registerAgent(turns({call("fetch_report", {{"page", 1}}), call("fetch_report", {{"page", 2}}),
                       call("fetch_report", {{"page", 3}}), call("fetch_report", {{"page", 4}}),
                       call("fetch_report", {{"page", 5}}), call("fetch_report", {{"page", 6}})}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"fetch_report"});
  auto a = boot(c);
  auto r = a->runtime().start("research", json::value("go"), {.id = "d7"});
  EXPECT_EQ(r.status, ExecutionStatus::kCompleted) << "report-only: the run goes on";
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("execution.claimCheck"), std::string::npos);
}

TEST_F(OptInFixture, L_OnOffloadThrowIsReportedAndTheToolCallStands) {
  registerAgent(turns({call("fetch_report", {{"page", 1}})}));
  auto c = baseConfig();
  c.execution.claimCheck = claimCheck({"fetch_report"});
  c.execution.claimCheck->onOffload = [](const middleware::OffloadInfo&) {
    throw std::runtime_error("audit sink down");
  };
  auto a = boot(c);
  auto r = a->runtime().start("research", json::value("go"), {.id = "l"});
  EXPECT_EQ(r.status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(content::looksLikeEnvelope(output(*a, "l", "research#turn:1:tool:0")));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("audit sink down"), std::string::npos);
  EXPECT_EQ(calls_["fetch_report"], 1);
}

}  // namespace
}  // namespace loom::testing

// defineConfig: the C++ spelling of the configuration and its validation.
#include "loom/app/config.h"

#include <gtest/gtest.h>

#include "loom/app/config_file.h"
#include "loom/middleware/retry.h"
#include "loom/middleware/timeout.h"
#include "support/recording_middleware.h"

namespace loom::app {
namespace {

// A grouped option written flat does not compile in C++: Config has no such member. (Each
// concept must be false; written as a template so the check itself compiles.)
template <typename T>
concept FlatClaimCheck = requires(T t) {
  t.claimCheck;
};
template <typename T>
concept FlatEffectMiddleware = requires(T t) {
  t.effectMiddleware;
};
template <typename T>
concept FlatJournal = requires(T t) {
  t.journal;
};
template <typename T>
concept FlatRedact = requires(T t) {
  t.redact;
};
template <typename T>
concept FlatHome = requires(T t) {
  t.home;
};
template <typename T>
concept FlatEventStore = requires(T t) {
  t.eventStore;
};
template <typename T>
concept FlatDurability = requires(T t) {
  t.durability;
};
template <typename T>
concept FlatOnWarn = requires(T t) {
  t.onWarn;
};
static_assert(!FlatClaimCheck<Config> && !FlatEffectMiddleware<Config> && !FlatJournal<Config> &&
              !FlatRedact<Config> && !FlatHome<Config> && !FlatEventStore<Config> &&
              !FlatDurability<Config> && !FlatOnWarn<Config>);
// ...while the grouped spellings do.
static_assert(FlatEffectMiddleware<ExecutionConfig> && FlatRedact<SecurityConfig> &&
              FlatDurability<EventStoreConfig> && FlatClaimCheck<ExecutionConfig>);

std::vector<std::string> pathsOf(const ConfigIssues& issues) {
  std::vector<std::string> out;
  for (const auto& i : issues) out.push_back(i.path);
  return out;
}

ConfigIssues issuesOf(Config config) {
  try {
    defineConfig(std::move(config));
  } catch (const ConfigValidationError& e) {
    return e.issues();
  }
  return {};
}

TEST(DefineConfig, DefaultsAreValid) {
  auto config = defineConfig({});
  EXPECT_EQ(config->storage.home, ".loom");
  EXPECT_EQ(config->storage.eventStore.kind, "sqlite");
  EXPECT_EQ(config->storage.eventStore.durability, "full");
  EXPECT_EQ(config->execution.journal.modelInput, "delta");
  EXPECT_TRUE(config->execution.effectMiddleware.empty());
  EXPECT_EQ(chainLayerNames(*config), std::vector<std::string>{"killSwitch"});
}

TEST(DefineConfig, EachOutOfRangeValueNamesItsPath) {
  struct Case {
    std::function<void(Config&)> set;
    std::string path;
    std::string expected;
  };
  std::vector<Case> cases = {
      {[](Config& c) { c.storage.eventStore.durability = "fast"; }, "storage.eventStore.durability",
       R"(expected one of "full", "normal"; got "fast")"},
      {[](Config& c) { c.storage.eventStore.kind = "postgres"; }, "storage.eventStore.kind",
       R"(expected one of "sqlite", "memory"; got "postgres")"},
      {[](Config& c) { c.storage.home = ""; }, "storage.home", "expected a non-empty string"},
      {[](Config& c) { c.execution.journal.modelInput = "half"; }, "execution.journal.modelInput",
       R"(expected one of "delta", "full"; got "half")"},
      {[](Config& c) { c.execution.effectMiddleware.push_back(nullptr); },
       "execution.effectMiddleware[0]", "expected a middleware, got a null pointer"},
      {[](Config& c) { c.security.redact.push_back({.name = "x", .value = "ab"}); },
       "security.redact[0].value", "expected a secret of at least 4 characters"},
  };
  for (const auto& c : cases) {
    Config config;
    c.set(config);
    ConfigIssues issues = issuesOf(std::move(config));
    ASSERT_EQ(issues.size(), 1u) << c.path;
    EXPECT_EQ(issues[0].path, c.path);
    EXPECT_NE(issues[0].message.find(c.expected), std::string::npos) << issues[0].message;
  }
}

TEST(DefineConfig, MiddlewareRules) {
  auto trace = std::make_shared<loom::testing::Trace>();
  Config config;
  config.execution.effectMiddleware = {
      std::make_shared<middleware::TimeoutMiddleware>(middleware::TimeoutConfig{}),
      std::make_shared<loom::testing::Recorder>("killSwitch", trace),
      std::make_shared<loom::testing::Recorder>("audit", trace)};
  ConfigIssues issues = issuesOf(config);
  ASSERT_EQ(pathsOf(issues), (std::vector<std::string>{"execution.effectMiddleware[0]",
                                                       "execution.effectMiddleware[1]"}));
  EXPECT_NE(issues[0].message.find("timeout must be the last"), std::string::npos);
  EXPECT_NE(issues[1].message.find("built-in layer"), std::string::npos);

  // A retry outside a timeout (each try bounded) is the supported shape.
  Config ok;
  ok.execution.effectMiddleware = {
      std::make_shared<middleware::RetryMiddleware>(middleware::RetryConfig{}),
      std::make_shared<middleware::TimeoutMiddleware>(middleware::TimeoutConfig{})};
  EXPECT_EQ(chainLayerNames(*defineConfig(ok)),
            (std::vector<std::string>{"killSwitch", "retry", "timeout"}));
  // A ready-made middleware with a bad config fails where it is built, naming the field.
  EXPECT_THROW(middleware::RetryMiddleware(middleware::RetryConfig{.attempts = 0}), ConfigError);
}

TEST(DefineConfig, EveryProblemIsReportedAtOnce) {
  Config config;
  config.storage.eventStore.durability = "fast";
  config.storage.eventStore.kind = "postgres";
  config.security.redact = {{.name = "a b", .pattern = "("}};
  try {
    defineConfig(config);
    FAIL() << "expected ConfigValidationError";
  } catch (const ConfigError& e) {  // catchable as the plain ConfigError
    const auto& v = dynamic_cast<const ConfigValidationError&>(e);
    EXPECT_EQ(pathsOf(v.issues()),
              (std::vector<std::string>{"storage.eventStore.kind", "storage.eventStore.durability",
                                        "security.redact[0].name", "security.redact[0].pattern"}));
    std::string what = e.what();
    EXPECT_NE(what.find("4 problems"), std::string::npos) << what;
    for (const auto& issue : v.issues()) {
      EXPECT_NE(what.find("\n  " + issue.path + ": " + issue.message), std::string::npos);
    }
  }
}

TEST(DefineConfig, DescribeHidesLiteralSecrets) {
  Config config;
  config.security.redact = {{.name = "db", .value = "hunter22"},
                            {.name = "api", .env = "OPENAI_API_KEY"}};
  std::string text = describeConfig(*defineConfig(config));
  EXPECT_EQ(text.find("hunter22"), std::string::npos);
  EXPECT_NE(text.find("value = <hidden, 8 characters>"), std::string::npos);
  EXPECT_NE(text.find("env = \"OPENAI_API_KEY\""), std::string::npos);
  EXPECT_NE(text.find("chain, outermost first: killSwitch -> redaction -> effect"),
            std::string::npos);
}

// Only the filesystem store in the home packs small blobs (ADR 0014): the option anywhere else
// is refused, not ignored.
TEST(DefineConfig, PackBelowBytesIsRefusedWhereNothingPacks) {
  Config config;
  config.storage.contentStore.packBelowBytes = 0;
  EXPECT_NO_THROW(defineConfig(config));
  config.storage.contentStore.kind = "sqlite";
  try {
    defineConfig(config);
    FAIL() << "expected ConfigValidationError";
  } catch (const ConfigValidationError& e) {
    EXPECT_EQ(pathsOf(e.issues()),
              (std::vector<std::string>{"storage.contentStore.packBelowBytes"}));
  }
  config.storage.contentStore = {};
  config.storage.url = "postgresql://loom@127.0.0.1:5432/db";
  config.storage.contentStore.packBelowBytes = 4096;
  EXPECT_THROW(defineConfig(config), ConfigValidationError);
}

TEST(DefineConfig, AStorageUrlLibpqWouldReadOtherwiseIsRefusedWithoutItsPassword) {
  for (const char* url : {"postgresql://loom:p%ssw0rd-SECRET@127.0.0.1:5432/db",
                          "postgresql://loom:half@SECRET2@127.0.0.1:5432/db"}) {
    SCOPED_TRACE(url);
    Config config;
    config.storage.url = url;
    try {
      defineConfig(config);
      FAIL() << "expected ConfigValidationError";
    } catch (const ConfigValidationError& e) {
      EXPECT_EQ(pathsOf(e.issues()), (std::vector<std::string>{"storage.url"}));
      std::string what = e.what();
      EXPECT_EQ(what.find("SECRET"), std::string::npos) << what;
      EXPECT_NE(what.find("percent-encode"), std::string::npos) << what;
    }
  }
}

TEST(DefineConfig, StorageUrlMovesEveryStoreAndRefusesOneKeptElsewhere) {
  Config config;
  config.storage.url = "postgresql://loom:hunter22@127.0.0.1:5432/db";
  std::string text = describeConfig(*defineConfig(config));  // the defaults all move
  EXPECT_EQ(text.find("hunter22"), std::string::npos) << text;
  EXPECT_NE(text.find("postgresql://loom:***@127.0.0.1:5432/db"), std::string::npos) << text;

  config.storage.schema = "Not-An-Identifier";
  config.storage.eventStore.kind = "memory";
  config.storage.contentStore.kind = "sqlite";
  try {
    defineConfig(config);
    FAIL() << "expected ConfigValidationError";
  } catch (const ConfigValidationError& e) {
    EXPECT_EQ(pathsOf(e.issues()),
              (std::vector<std::string>{"storage.schema", "storage.eventStore.kind",
                                        "storage.contentStore"}));
    EXPECT_EQ(std::string(e.what()).find("hunter22"), std::string::npos);
  }
  config.storage.schema = "loom";
  config.storage.eventStore.kind = "sqlite";
  config.storage.contentStore.kind = "filesystem";
  config.storage.contentStore.path = "/var/blobs";  // one machine's folder: refused too
  EXPECT_THROW(defineConfig(config), ConfigValidationError);
  config.storage.contentStore.path.clear();
  config.storage.retention.emplace();  // archive = true: the segments go to the server too
  EXPECT_NO_THROW(defineConfig(config));
  config.storage.url.clear();  // the embedded home ignores storage.schema
  config.storage.schema = "Not-An-Identifier";
  EXPECT_NO_THROW(defineConfig(config));
}

}  // namespace
}  // namespace loom::app

// loom.toml: the same validated configuration as defineConfig, and every error path.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "app/options.h"
#include "loom/app/config_file.h"
#include "loom/middleware/retry.h"
#include "loom/middleware/timeout.h"
#include "support/recording_middleware.h"

namespace loom::app {
namespace {

ConfigIssues issuesOf(std::string_view toml) {
  try {
    parseConfigToml(toml, "loom.toml");
  } catch (const ConfigValidationError& e) {
    EXPECT_EQ(e.origin(), "loom.toml");
    return e.issues();
  }
  return {};
}

// The single problem of `toml`; fails the test when there is not exactly one.
ConfigIssue onlyIssue(std::string_view toml) {
  ConfigIssues issues = issuesOf(toml);
  EXPECT_EQ(issues.size(), 1u) << toml << "\n" << middleware::formatIssues(issues);
  return issues.empty() ? ConfigIssue{} : issues.front();
}

void expectIssue(std::string_view toml, std::string_view path, std::string_view text) {
  ConfigIssue issue = onlyIssue(toml);
  EXPECT_EQ(issue.path, path) << toml;
  EXPECT_NE(issue.message.find(text), std::string::npos) << toml << "\n" << issue.message;
}

TEST(ConfigToml, ProducesTheSameConfigAsDefineConfig) {
  auto fromToml = parseConfigToml(R"(
[execution]
journal.modelInput = "full"

[[execution.effectMiddleware]]
kind = "retry"
attempts = 4
initialDelayMs = 50
multiplier = 3
maxDelayMs = 2000
jitter = 0.1
retryOn = ["unavailable", "conflict"]

[[execution.effectMiddleware]]
kind = "timeout"
ms = 1500

[[security.redact]]
name = "db"
value = "hunter22"

[[security.redact]]
name = "card"
pattern = '\d{4}-\d{4}'

[compliance]

[storage]
home = "/tmp/somewhere"
eventStore = { kind = "memory", durability = "normal" }
)",
                                  "loom.toml");

  Config config;
  config.execution.journal.modelInput = "full";
  config.execution.effectMiddleware = {
      std::make_shared<middleware::RetryMiddleware>(
          middleware::RetryConfig{.attempts = 4,
                                  .initialDelayMs = 50,
                                  .multiplier = 3,
                                  .maxDelayMs = 2000,
                                  .jitter = 0.1,
                                  .retryOn = {ErrorCode::kUnavailable, ErrorCode::kConflict}}),
      std::make_shared<middleware::TimeoutMiddleware>(middleware::TimeoutConfig{.ms = 1500})};
  config.security.redact = {{.name = "db", .value = "hunter22"},
                            {.name = "card", .pattern = "\\d{4}-\\d{4}"}};
  config.storage.home = "/tmp/somewhere";
  config.storage.eventStore = {.kind = "memory", .durability = "normal"};
  auto fromCpp = defineConfig(config);

  EXPECT_EQ(describeConfig(*fromToml), describeConfig(*fromCpp));
  EXPECT_EQ(chainLayerNames(*fromToml),
            (std::vector<std::string>{"killSwitch", "redaction", "retry", "timeout"}));
  EXPECT_EQ(fromToml->security.redact[1].pattern, "\\d{4}-\\d{4}");
  EXPECT_EQ(describeConfig(*parseConfigToml("", "empty")), describeConfig(*defineConfig({})));
}

TEST(ConfigToml, GroupedOptionsWrittenFlatNameTheirGroupedSpelling) {
  const std::vector<std::pair<std::string, std::string>> flat = {
      {"claimCheck = { store = \"default\" }", "execution.claimCheck"},
      {"[[effectMiddleware]]\nkind = \"retry\"", "execution.effectMiddleware"},
      {"journal = { modelInput = \"full\" }", "execution.journal"},
      {"modelInput = \"full\"", "execution.journal.modelInput"},
      {"[[redact]]\nname = \"x\"\nvalue = \"hunter22\"", "security.redact"},
      {"crypto = {}", "security.crypto"},
      {"keys = {}", "security.keys"},
      {"erase = {}", "compliance.erase"},
      {"home = \".loom\"", "storage.home"},
      {"url = \"postgresql://h/db\"", "storage.url"},
      {"schema = \"loom\"", "storage.schema"},
      {"eventStore = { kind = \"sqlite\" }", "storage.eventStore"},
      {"kind = \"memory\"", "storage.eventStore.kind"},
      {"durability = \"normal\"", "storage.eventStore.durability"},
      {"contentStore = {}", "storage.contentStore"},
      {"retention = {}", "storage.retention"},
      {"store = \"default\"", "execution.claimCheck.store"},
      {"toolIds = [\"a\"]", "execution.claimCheck.toolIds"},
      {"inlineCapBytes = 10", "execution.claimCheck.inlineCapBytes"},
      {"preview = false", "execution.claimCheck.preview"},
      {"digests = {}", "execution.claimCheck.digests"},
      {"onOffload = \"x\"", "execution.claimCheck.onOffload"},
      {"reclaimable = true", "execution.claimCheck.reclaimable"},
      {"path = \"x\"", "storage.contentStore.path"},
      {"kind = \"filesystem\"", "storage.contentStore.kind"},
      {"sealed = true", "storage.contentStore.sealed"},
      {"shared = true", "storage.contentStore.shared"},
      {"packBelowBytes = 0", "storage.contentStore.packBelowBytes"},
      {"file = \"k\"", "security.keys.file"},
      {"env = \"K\"", "security.keys.env"},
      {"enabled = true", "security.crypto.enabled"},
      {"enabled = true", "compliance.erase.enabled"},
      {"afterDays = 3", "storage.retention.afterDays"},
      {"archive = true", "storage.retention.archive"},
      {"onWarn = \"x\"", "observability.onWarn"},
      {"retry = { maxAttempts = 3 }", "execution.retry"},
      {"maxAttempts = 3", "execution.retry.maxAttempts"},
      {"initialIntervalMs = 10", "execution.retry.initialIntervalMs"},
      {"maxIntervalMs = 10", "execution.retry.maxIntervalMs"},
      {"multiplier = 3", "execution.retry.multiplier"},
      {"jitter = 0.5", "execution.retry.jitter"},
      {"effects = {}", "execution.retry.effects"},
      {"waitInlineUpToMs = 0", "execution.retry.waitInlineUpToMs"},
      {"leaseTtlMs = 5000", "execution.leaseTtlMs"},
      {"snapshotEveryEvents = 10", "execution.snapshotEveryEvents"},
      {"codeVersion = \"v2\"", "execution.codeVersion"},
      {"versioning = \"latest\"", "execution.versioning"},
      {"prices = {}", "observability.prices"},
  };
  for (const auto& [toml, grouped] : flat) {
    ConfigIssue issue = onlyIssue(toml);
    EXPECT_NE(issue.message.find("cannot be written at the top level"), std::string::npos) << toml;
    EXPECT_NE(issue.message.find("write it as "), std::string::npos) << toml;
    EXPECT_NE(issue.message.find(grouped), std::string::npos) << toml << "\n" << issue.message;
  }
  // Every grouped option of the table is covered above.
  for (const OptionRow& row : optionTable()) {
    auto dots = std::count(row.path.begin(), row.path.end(), '.');
    if (dots == 0 || row.path.find("[]") != std::string::npos) continue;
    // Agent app sections are not groups (agent_app_options_test.cc covers their flat keys).
    const OptionRow* top = findOption(row.path.substr(0, row.path.find('.')));
    if (top->type != OptionType::kGroup) continue;
    bool covered = false;
    for (const auto& [toml, grouped] : flat) covered = covered || grouped == row.path;
    EXPECT_TRUE(covered) << row.path << " has no flat-spelling case";
  }
  // A key in the wrong group is pointed at its group too.
  expectIssue("[storage]\ndurability = \"full\"", "storage.durability",
              "did you mean storage.eventStore.durability?");
  expectIssue("[security]\neffectMiddleware = []", "security.effectMiddleware",
              "did you mean execution.effectMiddleware?");
}

TEST(ConfigToml, UnknownKeys) {
  expectIssue("colour = \"blue\"", "colour", "unknown top-level key; expected one of the groups");
  expectIssue("[storage]\ncolour = 1", "storage.colour",
              "unknown option; storage accepts home, url, schema, eventStore, contentStore, retention");
  expectIssue("[storage.eventStore]\npath = \"x\"", "storage.eventStore.path",
              "did you mean storage.contentStore.path?");
  expectIssue("[execution.claimCheck]\ntoolIds = [\"a\"]\ncap = 3", "execution.claimCheck.cap",
              "execution.claimCheck accepts store, toolIds, inlineCapBytes, preview, digests");
  expectIssue("[execution.claimCheck]\ntoolIds = [\"a\"]\ndigests.a = { pick = [\"x\"] }",
              "execution.claimCheck.digests.a.pick", "is not a JSON pointer");
  expectIssue("[execution.claimCheck]\ntoolIds = [\"a\"]\npreview = \"long\"",
              "execution.claimCheck.preview", "expected false or an integer");
  expectIssue("[[security.redact]]\nname = \"x\"\nvalue = \"hunter22\"\nregex = \"y\"",
              "security.redact[0].regex", "expected one of name, value, env, pattern");
  expectIssue("[[execution.effectMiddleware]]\nkind = \"timeout\"\nattempts = 3",
              "execution.effectMiddleware[0].attempts",
              "applies only to kind = \"retry\", not to \"timeout\"");
}

TEST(ConfigToml, WrongTypes) {
  expectIssue("[storage]\nhome = 3", "storage.home", "expected a string, got the integer 3");
  expectIssue("storage = \"x\"", "storage", "expected a table ([storage]), got the string \"x\"");
  expectIssue("[storage]\neventStore = \"sqlite\"", "storage.eventStore",
              "expected a table ([storage.eventStore])");
  expectIssue("[execution]\neffectMiddleware = { kind = \"retry\" }", "execution.effectMiddleware",
              "expected an array of tables");
  expectIssue("[[execution.effectMiddleware]]\nkind = \"retry\"\nattempts = \"3\"",
              "execution.effectMiddleware[0].attempts", "expected an integer, got the string");
  expectIssue("[[execution.effectMiddleware]]\nkind = \"retry\"\nretryOn = [\"conflict\", 2]",
              "execution.effectMiddleware[0].retryOn", "expected an array of strings");
  expectIssue("[[execution.effectMiddleware]]\nkind = \"retry\"\njitter = true",
              "execution.effectMiddleware[0].jitter", "expected a number, got true");
  expectIssue("[execution]\neffectMiddleware = [1]", "execution.effectMiddleware[0]",
              "expected a table, got the integer 1");
  expectIssue("[[security.redact]]\nname = 7\nvalue = \"hunter22\"", "security.redact[0].name",
              "expected a string, got the integer 7");
}

TEST(ConfigToml, OutOfRangeValues) {
  expectIssue("[storage.eventStore]\ndurability = \"fast\"", "storage.eventStore.durability",
              R"(expected one of "full", "normal"; got "fast")");
  expectIssue("[[execution.effectMiddleware]]\nkind = \"retry\"\nattempts = 0",
              "execution.effectMiddleware[0].attempts", "expected an integer from 1 to 100; got 0");
  expectIssue("[[execution.effectMiddleware]]\nkind = \"timeout\"\nms = 0",
              "execution.effectMiddleware[0].ms", "from 1 to 86400000");
  expectIssue("[[execution.effectMiddleware]]\nkind = \"retry\"\nretryOn = [\"sometimes\"]",
              "execution.effectMiddleware[0].retryOn", "got \"sometimes\"");
  expectIssue(
      "[[execution.effectMiddleware]]\nkind = \"retry\"\ninitialDelayMs = 500\n"
      "maxDelayMs = 100",
      "execution.effectMiddleware[0].maxDelayMs", "expected at least initialDelayMs");
  expectIssue("[[execution.effectMiddleware]]\nkind = \"cache\"",
              "execution.effectMiddleware[0].kind", R"(expected one of "retry", "timeout")");
  expectIssue("[[execution.effectMiddleware]]\nms = 5", "execution.effectMiddleware[0].kind",
              "missing; expected kind = retry or timeout");
  expectIssue("[[security.redact]]\nname = \"x\"\npattern = \"(\"", "security.redact[0].pattern",
              "not a valid regular expression");
  expectIssue(
      "[[execution.effectMiddleware]]\nkind = \"timeout\"\n"
      "[[execution.effectMiddleware]]\nkind = \"retry\"",
      "execution.effectMiddleware[0]", "timeout must be the last");
}

TEST(ConfigToml, OptionsOfLaterVersionsAndCppOnlyOptionsAreRefused) {
  expectIssue("[observability]\nonWarn = \"stderr\"", "observability.onWarn",
              "can only be set from C++");
}

TEST(ConfigToml, EveryProblemIsReportedAtOnce) {
  ConfigIssues issues = issuesOf(R"(
claimCheck = { store = "default" }
[storage]
home = 3
eventStore.durability = "fast"
[[execution.effectMiddleware]]
kind = "retry"
attempts = 0
[[execution.effectMiddleware]]
kind = "timeout"
ms = 10
[[security.redact]]
name = "x"
)");
  std::vector<std::string> paths;
  for (const auto& i : issues) paths.push_back(i.path);
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(paths, (std::vector<std::string>{"claimCheck", "execution.effectMiddleware[0].attempts",
                                             "security.redact[0]", "storage.eventStore.durability",
                                             "storage.home"}));
  try {
    parseConfigToml("durability = 1\nonWarn = 2", "app.toml");
    FAIL();
  } catch (const ConfigError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("invalid configuration (app.toml): 2 problems"), std::string::npos);
    EXPECT_NE(what.find("\n  durability: "), std::string::npos) << what;
    EXPECT_NE(what.find("\n  onWarn: "), std::string::npos) << what;
  }
}

TEST(ConfigToml, SyntaxErrorsNameTheLine) {
  expectIssue("[storage]\nhome = \n", "", "not valid TOML at line 2");
}

TEST(ConfigFile, LoadAndCheck) {
  loom::testing::TempDir dir;
  auto good = dir.path() / "loom.toml";
  std::ofstream(good) << "[storage.eventStore]\ndurability = \"normal\"\n";
  EXPECT_EQ(loadConfigFile(good)->storage.eventStore.durability, "normal");
  ConfigCheck ok = checkConfigFile(good);
  EXPECT_TRUE(ok.ok);
  EXPECT_NE(ok.text.find("storage.eventStore.durability = \"normal\""), std::string::npos);
  EXPECT_NE(ok.text.find("chain, outermost first: killSwitch -> effect"), std::string::npos);

  auto bad = dir.path() / "bad.toml";
  std::ofstream(bad) << "durability = \"normal\"\n[storage]\nhome = 1\n";
  ConfigCheck failed = checkConfigFile(bad);
  EXPECT_FALSE(failed.ok);
  EXPECT_NE(failed.text.find("2 problems"), std::string::npos) << failed.text;
  EXPECT_NE(failed.text.find("write it as storage.eventStore.durability"), std::string::npos);
  EXPECT_NE(failed.text.find("storage.home: expected a string"), std::string::npos);

  ConfigCheck missing = checkConfigFile(dir.path() / "nope.toml");
  EXPECT_FALSE(missing.ok);
  EXPECT_NE(missing.text.find("no such file"), std::string::npos);
}

}  // namespace
}  // namespace loom::app

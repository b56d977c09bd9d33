#include "loom/middleware/redaction.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "loom/util/error.h"
#include "support/recording_middleware.h"

namespace loom::middleware {
namespace {

using Rules = std::vector<RedactionRule>;

effects::EffectContext toolCtx() { return {"e1", "s1", "fetch", "tool", std::nullopt, 1, false}; }

TEST(Redaction, LiteralEnvAndPatternSecretsAreReplacedEverywhere) {
  ::setenv("LOOM_TEST_API_KEY", "sk-env-0123456789", 1);
  RedactionMiddleware redaction(
      Rules{{.name = "db", .value = "hunter22"},
            {.name = "api", .env = "LOOM_TEST_API_KEY"},
            {.name = "card", .pattern = "\\b\\d{4}-\\d{4}-\\d{4}-\\d{4}\\b"}});
  EXPECT_EQ(redaction.ruleCount(), 3u);
  json::value v = json::parse(R"({
    "text": "password hunter22 and key sk-env-0123456789",
    "nested": {"list": ["4111-1111-1111-1111", 42, true, null, "hunter22hunter22"]},
    "hunter22": "as a key"
  })",
                              "test");
  json::value out = redaction.redact(v);
  EXPECT_EQ(out.at("text"), "password [REDACTED:db] and key [REDACTED:api]");
  EXPECT_EQ(out.at("nested").at("list").at(0), "[REDACTED:card]");
  EXPECT_EQ(out.at("nested").at("list").at(1), 42);
  EXPECT_EQ(out.at("nested").at("list").at(4), "[REDACTED:db][REDACTED:db]");
  EXPECT_EQ(out.as_object().count("hunter22"), 0u);
  EXPECT_EQ(out.at("[REDACTED:db]"), "as a key");
  EXPECT_EQ(json::toText(out).find("hunter22"), std::string::npos);
  ::unsetenv("LOOM_TEST_API_KEY");
}

TEST(Redaction, TheLongerLiteralWinsAndCollidingKeysAreKept) {
  RedactionMiddleware redaction(
      Rules{{.name = "short", .value = "abcd"}, {.name = "long", .value = "abcdefgh"}});
  EXPECT_EQ(redaction.redact(json::value("xabcdefghx abcd")), "x[REDACTED:long]x [REDACTED:short]");
  json::value keys = json::parse(R"({"abcd": 1, "[REDACTED:short]": 2})", "test");
  json::value out = redaction.redact(keys);
  EXPECT_EQ(out.as_object().size(), 2u);
}

TEST(Redaction, TheMiddlewareScrubsResultsAndErrorsButPassesInputThrough) {
  RedactionMiddleware redaction(Rules{{.name = "db", .value = "hunter22"}});
  effects::EffectChain chain(
      {std::shared_ptr<effects::Middleware>(&redaction, [](effects::Middleware*) {})});
  json::value seenInput;
  auto effect = [&](const effects::EffectContext&, json::value in) {
    seenInput = in;
    return json::value(json::object{{"echo", in}});
  };
  json::value out = chain.invoke(toolCtx(), json::value("pw hunter22"), effect);
  EXPECT_EQ(seenInput, "pw hunter22");  // the effect may need the secret
  EXPECT_EQ(out.at("echo"), "pw [REDACTED:db]");

  auto failing = [](const effects::EffectContext&, json::value) -> json::value {
    throw UnavailableError("login with hunter22 refused");
  };
  try {
    chain.invoke(toolCtx(), json::value(), failing);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
    EXPECT_EQ(std::string(e.what()), "login with [REDACTED:db] refused");
  }
  auto plain = [](const effects::EffectContext&, json::value) -> json::value {
    throw std::runtime_error("no secret here");
  };
  EXPECT_THROW(chain.invoke(toolCtx(), json::value(), plain), std::runtime_error);
}

TEST(Redaction, AnUnsetEnvironmentVariableIsReportedNotFatal) {
  ::unsetenv("LOOM_TEST_UNSET_SECRET");
  std::vector<std::string> warnings;
  RedactionMiddleware redaction(Rules{{.name = "x", .env = "LOOM_TEST_UNSET_SECRET"}},
                                [&](std::string_view w) { warnings.emplace_back(w); });
  EXPECT_EQ(redaction.ruleCount(), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("security.redact[0].env"), std::string::npos);
  EXPECT_NE(warnings[0].find("LOOM_TEST_UNSET_SECRET"), std::string::npos);
}

TEST(Redaction, AShortEnvironmentSecretIsAConfigError) {
  ::setenv("LOOM_TEST_SHORT_SECRET", "ab", 1);
  try {
    RedactionMiddleware redaction(Rules{{.name = "x", .env = "LOOM_TEST_SHORT_SECRET"}});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("security.redact[0].env"), std::string::npos);
  }
  ::unsetenv("LOOM_TEST_SHORT_SECRET");
}

TEST(Redaction, ValidationReportsEveryBadRuleWithItsPath) {
  ConfigIssues issues = validateRedactionRules(
      {
          {.name = "", .value = "hunter22"},                  // 0: no name
          {.name = "ok", .value = "abc"},                     // 1: too short
          {.name = "ok", .pattern = "("},                     // 2: duplicate, bad regex
          {.name = "both", .value = "hunter22", .env = "X"},  // 3: two kinds
          {.name = "none"},                                   // 4: no kind
          {.name = "empty", .pattern = "a*"},                 // 5: matches ""
          {.name = "bad env", .env = "1X"},                   // 6: bad name, bad env
      },
      "security.redact");
  std::vector<std::string> paths;
  for (const auto& i : issues) paths.push_back(i.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"security.redact[0].name", "security.redact[1].value",
                                             "security.redact[2].name",
                                             "security.redact[2].pattern", "security.redact[3]",
                                             "security.redact[4]", "security.redact[5].pattern",
                                             "security.redact[6].name", "security.redact[6].env"}));
  EXPECT_THROW(RedactionMiddleware(Rules{{.name = "x", .pattern = "("}}), ConfigError);
}

TEST(Redaction, AHugeMatchIsReplacedInLinearTimeWithoutRecursing) {
  RedactionMiddleware redaction(Rules{{.name = "key", .pattern = "sk-[A-Za-z0-9]+"}});
  std::string secret = "sk-" + std::string(100'000, 'A');
  json::value out = redaction.redact(json::value{{"log", "before " + secret + " after"}});
  EXPECT_EQ(out.at("log"), "before [REDACTED:key] after");
}

TEST(Redaction, ASecretWrittenAsANumberIsRedactedToo) {
  RedactionMiddleware redaction(Rules{{.name = "pin", .value = "31415926535"}});
  json::value out = redaction.redact(json::value{{"n", 31415926535LL}, {"x", 2.5}, {"k", 7}});
  EXPECT_EQ(out.at("n"), "[REDACTED:pin]");
  EXPECT_EQ(out.at("x"), 2.5) << "other numbers stay numbers";
  EXPECT_EQ(out.at("k"), 7);
}

TEST(Redaction, APatternRe2CannotCompileIsAConfigErrorNamingTheOption) {
  ConfigIssues issues =
      validateRedactionRules({{.name = "lookbehind", .pattern = "(?<=a)b"}}, "security.redact");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "security.redact[0].pattern");
  EXPECT_NE(issues[0].message.find("RE2 syntax"), std::string::npos) << issues[0].message;
}

}  // namespace
}  // namespace loom::middleware

#include "loom/json/json.h"

#include <gtest/gtest.h>

#include "loom/util/error.h"

namespace loom::json {
namespace {

std::string parseError(std::string_view text) {
  try {
    parse(text, "--input");
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonParse, AKeySpelledTwiceInOneObjectIsRefusedNamingIt) {
  EXPECT_EQ(parseError(R"({"steps": 1, "steps": 3})"),
            "--input: the key \"steps\" appears twice in one object; give each key once");
  EXPECT_NE(parseError(R"({"a": [{"x": 1}, {"b": {"k": 1, "k": 2}}]})").find("\"k\" appears"),
            std::string::npos);
  // Escapes spell the same key: "\u0061" is "a".
  EXPECT_NE(parseError(R"({"a": 1, "\u0061": 2})").find("\"a\" appears"), std::string::npos);
}

TEST(JsonParse, EqualKeysInDifferentObjectsAndColonsInStringsAreFine) {
  value v = parse(R"({"a": {"a": 1}, "b": [{"a": "x:y"}, {"a": "\":\""}], "c:d": 2})", "t");
  EXPECT_EQ(v.at("a").at("a").as_int64(), 1);
  EXPECT_EQ(v.at("c:d").as_int64(), 2);
  EXPECT_EQ(parseError(R"({"q": "\\", "r": ":"})"), "");
}

TEST(JsonParse, MalformedAndTooDeepTextNameWhatWasParsed) {
  EXPECT_NE(parseError("{\"a\":").find("--input: not valid JSON"), std::string::npos);
  std::string deep(kMaxStoredDepth + 1, '[');
  deep += std::string(kMaxStoredDepth + 1, ']');
  EXPECT_NE(parseError(deep).find("--input: not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace loom::json

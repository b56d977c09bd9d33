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

// Text from outside must be UTF-8; a row Loom stored before it checked reads as its bytes.
TEST(JsonParse, OnlyAStoredTextMayHoldBytesThatAreNotUtf8) {
  std::string text = "{\"subject\":\"zz\xff\"}";
  EXPECT_THROW(parse(text, "input"), InvalidArgumentError);
  value v = parseStored(text, "row");
  EXPECT_EQ(std::string(v.at("subject").as_string()), "zz\xff");
  EXPECT_EQ(toText(v), text) << "written back as it was read";
  EXPECT_THROW(parseStored("{\"a\":1,\"a\":2}", "row"), InvalidArgumentError);
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

TEST(JsonParse, ANumberNoDoubleHoldsIsRefusedNotStoredAsInfinity) {
  for (std::string_view text : {"1e400", "-1e400", R"({"x": [1, 1E999]})"}) {
    EXPECT_NE(parseError(text).find("--input: a number is out of the range of a double"),
              std::string::npos)
        << text << ": " << parseError(text);
  }
  EXPECT_EQ(parseError("1e-400"), "") << "an underflow reads as zero, which writes and reads back";
}

TEST(JsonParse, EveryNumberSurvivesAWriteAndARead) {
  // Boost.JSON 1.81 alone reads each of these one step away from the nearest double, so their
  // text changed on every write and read (the event row fuzzer found it in a stored row).
  for (std::string_view text :
       {"5519745491182103487846791525846115967955159242080382005865361636",
        "383319203881039222979092558249330276759535716630675896323521670427300319601681179",
        "4051837777952848625."
        "30058474340821620178025357922353981336192359844292913164562801991388679",
        "[1.5, -2.25e-300, 0.1, 123456789012345678901234567890]"}) {
    std::string once = toText(parse(text, "t"));
    EXPECT_EQ(toText(parse(once, "t")), once) << text;
  }
  // The nearest double, as Python's float() reads it: 5.5197454911821036e+63.
  EXPECT_EQ(toText(parse("5519745491182103487846791525846115967955159242080382005865361636", "t")),
            "5.5197454911821036E63");
  EXPECT_EQ(parse(R"({"a": [1, 2.5, {"b": 1e2}], "c": -0.125})", "t").at("c").as_double(), -0.125);
}

}  // namespace
}  // namespace loom::json

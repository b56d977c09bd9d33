#include "util/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loom/util/error.h"

namespace loom {
namespace {

TEST(Utf8, AcceptsWellFormedTextAndRefusesEveryIllFormedSequence) {
  for (const std::string& ok :
       std::vector<std::string>{"", "plain", "ünïcode ✓", "\xF0\x9F\x98\x80", "\xEF\xBF\xBF",
                                "\xF4\x8F\xBF\xBF", std::string("nul\0inside", 10)}) {
    EXPECT_TRUE(isValidUtf8(ok)) << ok;
  }
  for (const std::string& bad : std::vector<std::string>{
           "\xff", "id\xff", "\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
           "\xF5\x80\x80\x80", "\xC3", "\xE2\x82", "\x80"}) {
    EXPECT_FALSE(isValidUtf8(bad)) << testing::PrintToString(bad);
  }
  try {
    requireUtf8("ab\xfe", "the data subject");
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(std::string(e.what()),
              "the data subject is not valid UTF-8 (byte 2): use a name in UTF-8");
  }
}

TEST(Utf8, EscapingShowsEachStrayByteAndKeepsEveryWellFormedSequence) {
  EXPECT_EQ(escapeInvalidUtf8("alice"), "alice");
  EXPECT_EQ(escapeInvalidUtf8("zz\xff"), "zz\\xff");
  EXPECT_EQ(escapeInvalidUtf8("\xC3\xA9t\xE9"), "\xC3\xA9t\\xe9");  // é kept, Latin-1 é shown
  EXPECT_EQ(escapeInvalidUtf8("\xE2\x82"), "\\xe2\\x82");              // a sequence cut short
  EXPECT_TRUE(isValidUtf8(escapeInvalidUtf8("\xff\xfe\x80")));
}

}  // namespace
}  // namespace loom

// The helpers of content_store.h (hashing, address checks, references) and the touch clock
// every store shares.
#include "loom/content/content_store.h"

#include <gtest/gtest.h>

#include "loom/util/error.h"
#include "store_support.h"

namespace loom::content {
namespace {

TEST(Sha256Hex, KnownVectors) {
  EXPECT_EQ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", sha256Hex(""));
  EXPECT_EQ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", sha256Hex("abc"));
  EXPECT_EQ("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"));
}

TEST(IsValidAddress, AcceptsOnly64LowerCaseHexDigits) {
  EXPECT_TRUE(isValidAddress(sha256Hex("x")));
  EXPECT_FALSE(isValidAddress(""));
  EXPECT_FALSE(isValidAddress(std::string(63, 'a')));
  EXPECT_FALSE(isValidAddress(std::string(65, 'a')));
  EXPECT_FALSE(isValidAddress(std::string(64, 'A')));
  EXPECT_FALSE(isValidAddress(std::string(64, 'g')));
  EXPECT_FALSE(isValidAddress("../" + std::string(61, 'a')));
}

TEST(ContentRef, RoundTripsAndRefusesLookAlikes) {
  std::string h = sha256Hex("abc");
  EXPECT_EQ(h, refAddress(contentRef(h)));
  EXPECT_FALSE(refAddress(json::object{{"__loomContent", "abc"}}));
  EXPECT_FALSE(refAddress(json::object{{"__loomContent", h}, {"extra", 1}}));
  EXPECT_FALSE(refAddress(json::value(h)));
}

TEST(RequireAddress, NamesTheStoreAndShortensLongInput) {
  try {
    detail::requireAddress(std::string(500, 'z'), "test store");
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    std::string what = e.what();
    EXPECT_NE(std::string::npos, what.find("test store")) << what;
    EXPECT_NE(std::string::npos, what.find("500 characters")) << what;
    EXPECT_LT(what.size(), 300u) << what;
  }
}

TEST(VerifyBytes, MismatchIsDataLossNamingAddressAndPlace) {
  std::string h = sha256Hex("abc");
  EXPECT_NO_THROW(detail::verifyBytes("abc", h, "here"));
  try {
    detail::verifyBytes("abd", h, "/blobs/x");
    FAIL() << "no error";
  } catch (const DataLossError& e) {
    std::string what = e.what();
    EXPECT_NE(std::string::npos, what.find(h)) << what;
    EXPECT_NE(std::string::npos, what.find("/blobs/x")) << what;
  }
}

TEST(TouchClock, FollowsTheClockAndNeverGoesBack) {
  auto clock = std::make_shared<ManualClock>(1000);
  detail::TouchClock touch(clock, "test");
  EXPECT_EQ(1000, touch.now());
  clock->advance(5);
  EXPECT_EQ(1005, touch.now());
  clock->advance(-100);
  EXPECT_EQ(1005, touch.now());
  clock->advance(200);
  EXPECT_EQ(1105, touch.now());
  EXPECT_THROW(detail::TouchClock(nullptr, "test"), InvalidArgumentError);
}

}  // namespace
}  // namespace loom::content

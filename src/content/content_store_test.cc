// The helpers of content_store.h (hashing, address checks, references) and the touch clock
// every store shares.
#include "loom/content/content_store.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <random>

#include "loom/util/error.h"
#include "sha256.h"
#include "store_support.h"

namespace loom::content {
namespace {

TEST(Sha256Hex, KnownVectors) {
  EXPECT_EQ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", sha256Hex(""));
  EXPECT_EQ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", sha256Hex("abc"));
  EXPECT_EQ("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"));
}

TEST(Sha256Hex, OneMillionAs) {
  EXPECT_EQ("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
            sha256Hex(std::string(1'000'000, 'a')));
}

// The digest this CPU computes (on its SHA extensions where it has them) is libsodium's, for
// every length around the block and padding boundaries and for input fed in any pieces.
TEST(Sha256, MatchesLibsodiumAtEveryLengthAndSplit) {
  ASSERT_GE(sodium_init(), 0);
  if (!detail::Sha256::usesShaExtensions()) {
    GTEST_SKIP() << "this CPU has no SHA extensions (or valgrind hides them): Sha256 is "
                    "libsodium's own code here";
  }
  std::mt19937 random(20261204);
  std::string bytes(5000, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  auto sodium = [](std::string_view b) {
    detail::Sha256::Digest d{};
    crypto_hash_sha256(d.data(), reinterpret_cast<const unsigned char*>(b.data()), b.size());
    return d;
  };
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n <= 200; ++n) lengths.push_back(n);
  for (std::size_t n : {255u, 256u, 257u, 1000u, 4095u, 4096u, 4097u, 5000u}) lengths.push_back(n);
  for (std::size_t n : lengths) {
    std::string_view b(bytes.data(), n);
    ASSERT_EQ(sodium(b), detail::sha256(b)) << n << " bytes";
    detail::Sha256 pieces;
    for (std::size_t at = 0; at < n;) {
      std::size_t take = std::min<std::size_t>(n - at, 1 + random() % 70);
      pieces.update(b.substr(at, take));
      pieces.update(std::string_view());  // an empty piece changes nothing
      at += take;
    }
    ASSERT_EQ(sodium(b), pieces.finish()) << n << " bytes in pieces";
  }
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

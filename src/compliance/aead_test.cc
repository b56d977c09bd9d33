// The crypto helpers: base64 (RFC 4648 vectors, canonical decoding only), associated data
// that cannot collide, sealing and opening.
#include "aead.h"

#include <gtest/gtest.h>

#include <random>

namespace loom::compliance::detail {
namespace {

TEST(Aead, Base64MatchesTheRfc4648Vectors) {
  const std::pair<std::string, std::string> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(encoded, toBase64(plain));
    EXPECT_EQ(plain, fromBase64(encoded));
  }
}

TEST(Aead, Base64RoundTripsEveryByteValueAndLength) {
  std::mt19937 random(3);
  for (std::size_t n = 0; n < 300; ++n) {
    std::string bytes(n, '\0');
    for (auto& c : bytes) c = static_cast<char>(random() & 0xff);
    EXPECT_EQ(bytes, fromBase64(toBase64(bytes))) << n;
  }
}

TEST(Aead, Base64DecodingIsStrict) {
  for (std::string bad :
       {"Zg=", "Zg", "Zh==", "Zm9=", "Z===", "====", "Zm9v!A==", "Zm 9v", "Zg==Zg==", "-_8="}) {
    EXPECT_EQ(std::nullopt, fromBase64(bad)) << bad;
  }
}

TEST(Aead, AssociatedDataOfDifferentPartsNeverCollides) {
  EXPECT_NE(associatedData("d", {"ab", "c"}), associatedData("d", {"a", "bc"}));
  EXPECT_NE(associatedData("d", {"a"}), associatedData("da", {}));
}

TEST(Aead, SealedTextOpensOnlyUnderTheSameKeyNonceAndAd) {
  Key key = randomKey();
  Nonce nonce = randomNonce();
  std::string sealed = seal(key, nonce, "plain", "ad");
  EXPECT_EQ(5u + kTagBytes, sealed.size());
  EXPECT_EQ("plain", open(key, nonce, sealed, "ad"));
  EXPECT_EQ(std::nullopt, open(key, nonce, sealed, "other ad"));
  EXPECT_EQ(std::nullopt, open(randomKey(), nonce, sealed, "ad"));
  EXPECT_EQ(std::nullopt, open(key, randomNonce(), sealed, "ad"));
  sealed[0] ^= 1;
  EXPECT_EQ(std::nullopt, open(key, nonce, sealed, "ad"));
  EXPECT_EQ(std::nullopt, open(key, nonce, "short", "ad"));
}

TEST(Aead, DerivedKeysDifferByIdAndContext) {
  Key key = randomKey();
  EXPECT_NE(deriveKey(key, 1, "loomaddr"), deriveKey(key, 2, "loomaddr"));
  EXPECT_NE(deriveKey(key, 1, "loomaddr"), deriveKey(key, 1, "loomblob"));
  EXPECT_EQ(deriveKey(key, 1, "loomaddr"), deriveKey(key, 1, "loomaddr"));
}

}  // namespace
}  // namespace loom::compliance::detail

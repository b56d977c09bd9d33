// The one envelope reader (claim_check_envelope.h): what is an envelope and what is a
// look-alike, read in place.
#include "content/claim_check_envelope.h"

#include <gtest/gtest.h>

#include "loom/content/content_store.h"

namespace loom::content {
namespace {

const std::string kA = sha256Hex("a");

json::object envelope() { return {{kClaimCheckKey, 1}, {"ref", contentRef(kA)}, {"size", 12}}; }

TEST(ReadEnvelope, AWellFormedEnvelopeIsReadInPlace) {
  json::value v = envelope();
  v.as_object()["digest"] = "twelve bytes";
  v.as_object()["retain"] = true;
  auto e = readEnvelope(v);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->address, kA);
  EXPECT_EQ(e->size, 12);
  ASSERT_NE(e->digest, nullptr);
  EXPECT_EQ(*e->digest, "twelve bytes");
  EXPECT_TRUE(e->retain);
  // A view: it points into v.
  EXPECT_EQ(e->address.data(),
            v.as_object().at("ref").as_object().at(kContentRefKey).as_string().data());
  auto copy = parseEnvelope(v);
  ASSERT_TRUE(copy);
  EXPECT_EQ(toJson(*copy), v);
}

TEST(ReadEnvelope, ALookAlikeIsNotAnEnvelope) {
  auto with = [](std::string_view key, json::value value) {
    json::value v = envelope();
    v.as_object()[key] = std::move(value);
    return v;
  };
  EXPECT_FALSE(readEnvelope(with(kClaimCheckKey, 2)));
  EXPECT_FALSE(readEnvelope(with(kClaimCheckKey, "1")));
  EXPECT_FALSE(readEnvelope(with("size", -1)));
  EXPECT_FALSE(readEnvelope(with("size", 1.5)));
  EXPECT_FALSE(readEnvelope(with("ref", json::object{{kContentRefKey, "not-an-address"}})));
  EXPECT_FALSE(readEnvelope(with("ref", json::value(kA)))) << "a bare address is not a ref";
  EXPECT_FALSE(readEnvelope(with("retain", "yes")));
  EXPECT_FALSE(readEnvelope(with("extra", 1)));
  json::value noSize = envelope();
  noSize.as_object().erase("size");
  EXPECT_FALSE(readEnvelope(noSize));
  EXPECT_FALSE(readEnvelope(json::value(json::array{envelope()})));
  EXPECT_FALSE(readEnvelope(json::value{{"__loomData", envelope()}})) << "inert data";
}

}  // namespace
}  // namespace loom::content

// EncryptingContentStore's own promises (the shared ContentStore conformance suite runs on it
// too, tests/conformance/content_store_implementations.cc): addresses are keyed per subject,
// the inner store holds no plaintext, a shred makes a subject's blobs unreadable, a blob is
// read only under its own subject.
#include "compliance/encrypting_content_store.h"

#include <gtest/gtest.h>

#include "loom/compliance/memory_key_store.h"
#include "loom/compliance/sqlite_key_store.h"
#include "loom/content/filesystem_content_store.h"
#include "loom/content/memory_content_store.h"
#include "loom/util/error.h"
#include "sealing_test_util.h"

namespace loom::compliance {
namespace {

using namespace sealing_test;

class EncryptingContentStoreTest : public ::testing::Test {
 protected:
  ScratchHome home_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kT0);
  MemoryKeyStore keys_;
  content::FilesystemContentStore inner_{home_.path() / "content", clock_};
  EncryptingContentStore store_{inner_, keys_};
};

const std::optional<std::string> kAlice = std::string("alice");
const std::optional<std::string> kBob = std::string("bob");

TEST_F(EncryptingContentStoreTest, DeclaresSealsContentAndTheInnerCapabilities) {
  content::ContentCapabilities caps = store_.capabilities();
  EXPECT_TRUE(caps.sealsContent);
  EXPECT_TRUE(caps.remove);
  EXPECT_TRUE(caps.deleteIfUntouchedSince);
  EXPECT_TRUE(caps.touchClock);
  EXPECT_TRUE(caps.enumerate);
}

TEST_F(EncryptingContentStoreTest, EqualBytesOfTwoSubjectsGetTwoAddressesAndOfOneSubjectOne) {
  const std::string bytes = R"({"report":"quarterly numbers"})";
  std::string a1 = store_.put(bytes, kAlice);
  std::string a2 = store_.put(bytes, kAlice);
  std::string b1 = store_.put(bytes, kBob);
  EXPECT_EQ(a1, a2) << "idempotent within a subject (dedup, touch)";
  EXPECT_NE(a1, b1) << "no equality leak across subjects";
  EXPECT_NE(content::sha256Hex(bytes), a1) << "the address is not the plain hash";
  EXPECT_TRUE(content::isValidAddress(a1));
  EXPECT_EQ(bytes, store_.get(a1, kAlice));
  EXPECT_EQ(bytes, store_.get(b1, kBob));
  EXPECT_EQ(2u, [&] {
    std::size_t n = 0;
    store_.forEachBlob([&](const content::BlobInfo&) { ++n; });
    return n;
  }());
}

TEST_F(EncryptingContentStoreTest, ABlobIsReadOnlyUnderItsOwnSubject) {
  std::string address = store_.put("alice's blob", kAlice);
  store_.put("bob's blob", kBob);
  EXPECT_EQ(std::nullopt, store_.get(address, kBob));
  EXPECT_EQ(std::nullopt, store_.get(address));  // the system subject
  EXPECT_EQ("alice's blob", store_.get(address, kAlice));
}

TEST_F(EncryptingContentStoreTest, TheInnerStoreHoldsNoPlaintext) {
  const std::string secret = "ALICE-BLOB-SECRET-0123456789";
  std::string big;
  for (int i = 0; i < 2000; ++i) big += secret;
  store_.put(secret, kAlice);
  store_.put(big, kAlice);
  store_.put(secret, std::nullopt);  // security.crypto: subjectless blobs sealed as well
  ASSERT_GE(fileCount(home_.path() / "content"), 3u);
  EXPECT_TRUE(filesContaining(home_.path(), secret).empty());
  EXPECT_TRUE(filesContaining(home_.path(), "ALICE-BLOB").empty());
  EXPECT_TRUE(filesContaining(home_.path(), content::sha256Hex(secret)).empty());
}

TEST_F(EncryptingContentStoreTest, AfterAShredTheSubjectsBlobsAreUnreadable) {
  std::string alice = store_.put("alice data", kAlice);
  std::string bob = store_.put("bob data", kBob);
  ASSERT_TRUE(keys_.shred("alice"));
  EXPECT_EQ(std::nullopt, store_.get(alice, kAlice)) << "erased reads as gone, never garbage";
  EXPECT_TRUE(store_.has(alice)) << "the ciphertext stays until erasure deletes it";
  EXPECT_EQ("bob data", store_.get(bob, kBob));
  // New data of the subject gets a new key and a new address.
  std::string again = store_.put("alice data", kAlice);
  EXPECT_NE(alice, again);
  EXPECT_EQ("alice data", store_.get(again, kAlice));
  EXPECT_EQ(std::nullopt, store_.get(alice, kAlice));
  EXPECT_TRUE(store_.remove(alice));
}

TEST_F(EncryptingContentStoreTest, ABlobNotSealedByTheWrapperIsDataLoss) {
  std::string address = inner_.put("a plaintext blob put past the wrapper");
  EXPECT_THROW(store_.get(address, kAlice), DataLossError);
}

TEST_F(EncryptingContentStoreTest, DeletesAndTouchesAreForwarded) {
  std::string address = store_.put("touched", kAlice);
  EXPECT_EQ(kT0, store_.stat(address)->lastTouchedMillis);
  clock_->advance(1000);
  EXPECT_EQ(address, store_.put("touched", kAlice));
  EXPECT_EQ(kT0 + 1000, store_.stat(address)->lastTouchedMillis);
  EXPECT_EQ(kT0 + 1000, store_.touchClock());
  EXPECT_FALSE(store_.deleteIfUntouchedSince(address, kT0 + 500));
  EXPECT_TRUE(store_.deleteIfUntouchedSince(address, kT0 + 1001));
  EXPECT_FALSE(store_.has(address));
}

TEST(EncryptingContentStoreSqliteKeys, BlobsSurviveReopeningTheKeyStore) {
  ScratchHome home;
  auto clock = std::make_shared<ManualClock>(kT0);
  content::MemoryContentStore inner(clock);
  std::string address;
  SqliteKeyStoreOptions options{(home.path() / "keys.db").string(), testMasterKey(), "test"};
  {
    SqliteKeyStore keys(options);
    EncryptingContentStore store(inner, keys);
    address = store.put("durable", kAlice);
  }
  SqliteKeyStore keys(options);
  EncryptingContentStore store(inner, keys);
  EXPECT_EQ("durable", store.get(address, kAlice));
  EXPECT_EQ(address, store.put("durable", kAlice));
}

}  // namespace
}  // namespace loom::compliance

// The ContentStore conformance suite, part 1: helpers; addresses, round trips, touches,
// deletes, capabilities, enumeration, copying and reopening. Concurrency is in
// content_store_conformance_concurrency.cc.
#include "content_store_conformance.h"

#include <unistd.h>

#include <atomic>
#include <random>

#include "loom/util/error.h"

namespace loom::content::conformance {

std::string factoryName(const ::testing::TestParamInfo<ContentStoreFactory>& info) {
  return info.param.name;
}

std::string randomBytes(std::size_t n, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>(random() & 0xff);
  return out;
}

std::map<std::string, BlobInfo> allBlobs(const ContentStore& store) {
  std::map<std::string, BlobInfo> blobs;
  store.forEachBlob([&](const BlobInfo& info) {
    EXPECT_TRUE(blobs.emplace(info.address, info).second) << "visited twice: " << info.address;
  });
  return blobs;
}

namespace {

constexpr std::string_view kAbcSha256 =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

TEST_P(ContentStoreConformance, AddressIsTheSha256OfTheBytes) {
  if (store().capabilities().sealsContent) GTEST_SKIP() << "a sealing store's addresses are keyed";
  EXPECT_EQ(kAbcSha256, store().put("abc"));
  EXPECT_EQ(kEmptySha256, store().put(""));
  std::string bytes = randomBytes(1000, 1);
  EXPECT_EQ(sha256Hex(bytes), store().put(bytes));
}

TEST_P(ContentStoreConformance, PutGetHasRoundTrip) {
  std::string binary;
  for (int i = 0; i < 512; ++i) binary.push_back(static_cast<char>(i & 0xff));  // NULs too
  std::vector<std::string> blobs{"",
                                 "abc",
                                 binary,
                                 std::string(3, '\0'),
                                 randomBytes(1 << 20, 2),
                                 R"({"id":"r-3","title":"é"})"};
  for (const std::string& bytes : blobs) {
    std::string address = store().put(bytes);
    EXPECT_TRUE(store().has(address));
    std::optional<std::string> got = store().get(address);
    ASSERT_TRUE(got) << "size " << bytes.size();
    EXPECT_EQ(bytes.size(), got->size());
    EXPECT_TRUE(bytes == *got) << "size " << bytes.size();
  }
  if (store().capabilities().sealsContent) return;  // keyed addresses: checked above via put
  for (const std::string& bytes : blobs) EXPECT_EQ(bytes, store().get(sha256Hex(bytes)));
}

TEST_P(ContentStoreConformance, AbsentAddressIsNulloptNotAnError) {
  std::string absent = sha256Hex("never stored");
  EXPECT_EQ(std::nullopt, store().get(absent));
  EXPECT_FALSE(store().has(absent));
  if (store().capabilities().enumerate) {
    EXPECT_EQ(std::nullopt, store().stat(absent));
  }
  store().put("something else");
  EXPECT_EQ(std::nullopt, store().get(absent));
}

TEST_P(ContentStoreConformance, MalformedAddressIsInvalidArgument) {
  ContentCapabilities caps = store().capabilities();
  for (std::string bad : {std::string(), std::string("abc"), std::string(64, 'A'),
                          std::string(64, 'g'), std::string(65, 'a'), std::string(63, 'a'),
                          "../" + std::string(61, 'a'), std::string(kAbcSha256) + "\n"}) {
    EXPECT_THROW(store().get(bad), InvalidArgumentError) << bad;
    EXPECT_THROW(store().has(bad), InvalidArgumentError) << bad;
    if (caps.remove) {
      EXPECT_THROW(store().remove(bad), InvalidArgumentError) << bad;
    }
    if (caps.deleteIfUntouchedSince) {
      EXPECT_THROW(store().deleteIfUntouchedSince(bad, kT0), InvalidArgumentError) << bad;
    }
    if (caps.enumerate) {
      EXPECT_THROW(store().stat(bad), InvalidArgumentError) << bad;
    }
  }
}

TEST_P(ContentStoreConformance, IdempotentPutTouchesTheBlob) {
  LOOM_REQUIRE_CAPABILITY(enumerate);
  std::string address = store().put("same bytes");
  EXPECT_EQ(kT0, store().stat(address)->lastTouchedMillis);
  clock().advance(60'000);
  EXPECT_EQ(address, store().put("same bytes"));
  std::optional<BlobInfo> info = store().stat(address);
  ASSERT_TRUE(info);
  EXPECT_EQ(kT0 + 60'000, info->lastTouchedMillis);
  if (store().capabilities().sealsContent) {
    EXPECT_GT(info->size, 10) << "a sealing store reports the sealed size";
  } else {
    EXPECT_EQ(10, info->size);
  }
  EXPECT_EQ(1u, allBlobs(store()).size());
  EXPECT_EQ("same bytes", store().get(address));
}

TEST_P(ContentStoreConformance, TouchClockFollowsTheClockAndNeverGoesBack) {
  LOOM_REQUIRE_CAPABILITY(touchClock);
  EXPECT_EQ(kT0, store().touchClock());
  clock().advance(1500);
  EXPECT_EQ(kT0 + 1500, store().touchClock());
  clock().advance(-10'000);  // the wall clock stepped back
  EXPECT_EQ(kT0 + 1500, store().touchClock());
  if (store().capabilities().enumerate) {
    std::string address = store().put("after the step back");
    EXPECT_EQ(kT0 + 1500, store().stat(address)->lastTouchedMillis);
  }
}

TEST_P(ContentStoreConformance, RemoveIsTrueThenFalse) {
  LOOM_REQUIRE_CAPABILITY(remove);
  std::string address = store().put("to remove");
  std::string other = store().put("to keep");
  EXPECT_TRUE(store().remove(address));
  EXPECT_FALSE(store().has(address));
  EXPECT_EQ(std::nullopt, store().get(address));
  EXPECT_FALSE(store().remove(address));
  EXPECT_EQ("to keep", store().get(other));
  EXPECT_EQ(address, store().put("to remove"));  // a removed blob can come back
  EXPECT_EQ("to remove", store().get(address));
}

TEST_P(ContentStoreConformance, DeleteIfUntouchedSinceDeletesOnlyBlobsTouchedBeforeTheCutoff) {
  LOOM_REQUIRE_CAPABILITY(deleteIfUntouchedSince);
  std::string address = store().put("old");  // touched at kT0
  EXPECT_FALSE(store().deleteIfUntouchedSince(address, kT0 - 1));
  EXPECT_FALSE(store().deleteIfUntouchedSince(address, kT0)) << "touched at the cutoff";
  EXPECT_TRUE(store().has(address));
  EXPECT_TRUE(store().deleteIfUntouchedSince(address, kT0 + 1));
  EXPECT_FALSE(store().has(address));
  EXPECT_FALSE(store().deleteIfUntouchedSince(address, kT0 + 1)) << "already gone";

  std::string touched = store().put("touched again");
  clock().advance(1000);
  store().put("touched again");
  EXPECT_FALSE(store().deleteIfUntouchedSince(touched, kT0 + 500));
  EXPECT_EQ("touched again", store().get(touched));
  EXPECT_FALSE(store().deleteIfUntouchedSince(sha256Hex("absent"), kT0 + 10'000));
}

TEST_P(ContentStoreConformance, CapabilitiesAreDeclaredTruthfully) {
  ContentCapabilities caps = store().capabilities();
  std::string address = store().put("capabilities");
  if (caps.touchClock) {
    EXPECT_EQ(kT0, store().touchClock());
  } else {
    EXPECT_THROW(store().touchClock(), FailedPreconditionError);
  }
  if (caps.enumerate) {
    EXPECT_TRUE(store().stat(address));
    EXPECT_EQ(1u, allBlobs(store()).count(address));
  } else {
    EXPECT_THROW(store().stat(address), FailedPreconditionError);
    EXPECT_THROW(store().forEachBlob([](const BlobInfo&) {}), FailedPreconditionError);
  }
  if (caps.deleteIfUntouchedSince) {
    EXPECT_TRUE(store().deleteIfUntouchedSince(address, kT0 + 1));
    store().put("capabilities");
  } else {
    EXPECT_THROW(store().deleteIfUntouchedSince(address, kT0 + 1), FailedPreconditionError);
  }
  if (caps.remove) {
    EXPECT_TRUE(store().remove(address));
  } else {
    EXPECT_THROW(store().remove(address), FailedPreconditionError);
  }
  EXPECT_EQ(caps.sealsContent, address != sha256Hex("capabilities"));
}

TEST_P(ContentStoreConformance, EnumerationListsEveryBlobWithSizeAndTouchTime) {
  LOOM_REQUIRE_CAPABILITY(enumerate);
  EXPECT_TRUE(allBlobs(store()).empty());
  std::map<std::string, BlobInfo> expected;
  for (int i = 0; i < 60; ++i) {
    std::string bytes = randomBytes(static_cast<std::size_t>(i * 37), 100 + i);
    std::string address = store().put(bytes);
    expected[address] = {address, static_cast<int64_t>(bytes.size()), clock().nowMillis()};
    clock().advance(7);
  }
  std::map<std::string, BlobInfo> seen = allBlobs(store());
  ASSERT_EQ(expected.size(), seen.size());
  for (auto& [address, info] : expected) {
    ASSERT_TRUE(seen.count(address)) << address;
    if (store().capabilities().sealsContent) {  // sizes are sealed sizes: plaintext + overhead
      EXPECT_GT(seen[address].size, info.size) << address;
      info.size = seen[address].size;
    }
    EXPECT_EQ(info.size, seen[address].size) << address;
    EXPECT_EQ(info.lastTouchedMillis, seen[address].lastTouchedMillis) << address;
    std::optional<BlobInfo> one = store().stat(address);
    ASSERT_TRUE(one);
    EXPECT_EQ(address, one->address);
    EXPECT_EQ(info.size, one->size);
    EXPECT_EQ(info.lastTouchedMillis, one->lastTouchedMillis);
  }
}

TEST_P(ContentStoreConformance, VisitorMayCallBackIntoTheStore) {
  LOOM_REQUIRE_CAPABILITY(enumerate);
  LOOM_REQUIRE_CAPABILITY(deleteIfUntouchedSince);
  for (int i = 0; i < 40; ++i) store().put("blob " + std::to_string(i));
  clock().advance(10);
  std::string fresh = store().put("fresh");
  int deleted = 0;
  store().forEachBlob([&](const BlobInfo& info) {
    EXPECT_TRUE(store().get(info.address));  // a read inside the walk
    if (store().deleteIfUntouchedSince(info.address, kT0 + 5)) ++deleted;
  });
  EXPECT_EQ(40, deleted);
  std::map<std::string, BlobInfo> left = allBlobs(store());
  ASSERT_EQ(1u, left.size());
  EXPECT_EQ(fresh, left.begin()->first);
}

TEST_P(ContentStoreConformance, ValuesAreCopiedInAndOut) {
  std::string bytes = "original bytes";
  std::string address = store().put(bytes);
  bytes[0] = 'X';
  std::optional<std::string> got = store().get(address);
  ASSERT_TRUE(got);
  EXPECT_EQ("original bytes", *got);
  (*got)[1] = 'Y';
  EXPECT_EQ("original bytes", store().get(address));
}

TEST_P(ContentStoreConformance, SubjectDoesNotChangeTheAddressOfANonSealingStore) {
  if (store().capabilities().sealsContent) GTEST_SKIP() << "a sealing store keys by subject";
  std::string address = store().put("held on alice", std::string("alice"));
  EXPECT_EQ(sha256Hex("held on alice"), address);
  EXPECT_EQ("held on alice", store().get(address, std::string("alice")));
  EXPECT_EQ("held on alice", store().get(address));
}

TEST_P(ContentStoreConformance, PersistentStoreKeepsBlobsAndTouchTimesAcrossReopening) {
  if (!GetParam().persistent) GTEST_SKIP() << "not a persistent store";
  std::string big = randomBytes(300'000, 9);
  std::string a = store().put(big);
  clock().advance(1234);
  std::string b = store().put("second");
  reopen();
  EXPECT_EQ(big, store().get(a));
  EXPECT_EQ("second", store().get(b));
  if (store().capabilities().enumerate) {
    EXPECT_EQ(kT0, store().stat(a)->lastTouchedMillis);
    EXPECT_EQ(kT0 + 1234, store().stat(b)->lastTouchedMillis);
    EXPECT_EQ(2u, allBlobs(store()).size());
  }
}

// putDeferred (ADR 0019): whether a store writes the blob now or with its log's next commit,
// this process reads it at once, and it is kept like a put's blob (a store that defers writes
// what it holds when its log closes).
TEST_P(ContentStoreConformance, ADeferredPutIsReadAtOnceAndKeptLikeAPut) {
  std::vector<std::string> blobs{"deferred and small", randomBytes(5000, 10), ""};
  std::vector<std::string> addresses;
  for (const std::string& bytes : blobs) {
    std::string address = store().putDeferred(bytes);
    if (!store().capabilities().sealsContent) {
      EXPECT_EQ(sha256Hex(bytes), address);
    }
    EXPECT_TRUE(store().has(address));
    EXPECT_EQ(bytes, store().get(address));
    if (store().capabilities().enumerate) {
      std::optional<BlobInfo> info = store().stat(address);
      ASSERT_TRUE(info) << "size " << bytes.size();
      EXPECT_EQ(kT0, info->lastTouchedMillis);
    }
    EXPECT_EQ(address, store().putDeferred(bytes)) << "idempotent";
    addresses.push_back(address);
  }
  if (!GetParam().persistent) return;
  reopen();
  for (std::size_t i = 0; i < blobs.size(); ++i) {
    EXPECT_EQ(blobs[i], store().get(addresses[i])) << "size " << blobs[i].size();
  }
}

}  // namespace
}  // namespace loom::content::conformance

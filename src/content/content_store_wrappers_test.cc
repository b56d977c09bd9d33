// CountingContentStore and FaultyContentStore over a memory store.
#include <gtest/gtest.h>

#include "content/counting_content_store.h"
#include "loom/content/forwarding_content_store.h"
#include "loom/content/memory_content_store.h"
#include "loom/util/error.h"
#include "support/faulty_content_store.h"

namespace loom::content {
namespace {

class WrapperTest : public ::testing::Test {
 protected:
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  MemoryContentStore inner_{clock_};
};

TEST_F(WrapperTest, CountingCountsEveryCallByKind) {
  CountingContentStore store(inner_);
  EXPECT_EQ(0, store.total());
  std::string a = store.put("one");
  store.put("one");
  store.get(a);
  store.has(a);
  store.stat(a);
  store.touchClock();
  store.forEachBlob([](const BlobInfo&) {});
  store.deleteIfUntouchedSince(a, 0);
  store.remove(a);
  EXPECT_EQ(2, store.count(ContentCall::kPut));
  EXPECT_EQ(1, store.count("get"));
  for (ContentCall kind : kAllContentCalls) {
    EXPECT_EQ(kind == ContentCall::kPut ? 2 : 1, store.count(kind)) << contentCallName(kind);
  }
  EXPECT_EQ(9, store.total());
  store.capabilities();
  EXPECT_EQ(9, store.total()) << "capabilities() is not counted";
  store.reset();
  EXPECT_EQ(0, store.total());
  EXPECT_THROW(store.count("putMany"), InvalidArgumentError);
}

// A deferred put (ADR 0019) reaches the target as one, counted as a put; a wrapper that changes
// put and does not know putDeferred gets its own put for it, never the target's.
TEST_F(WrapperTest, ADeferredPutIsForwardedOnlyByWrappersThatKnowIt) {
  class DeferringStore : public MemoryContentStore {
   public:
    using MemoryContentStore::MemoryContentStore;
    std::string putDeferred(std::string_view bytes,
                            const std::optional<std::string>& subject) override {
      ++deferred;
      return put(bytes, subject);
    }
    int deferred = 0;
  };
  class Prefixing : public ForwardingContentStore {
   public:
    using ForwardingContentStore::ForwardingContentStore;
    std::string put(std::string_view bytes, const std::optional<std::string>& subject) override {
      return target().put("wrapped:" + std::string(bytes), subject);
    }
  };
  DeferringStore target(clock_);
  CountingContentStore counting(target);
  std::string a = counting.putDeferred("counted");
  EXPECT_EQ(1, target.deferred);
  EXPECT_EQ(1, counting.count(ContentCall::kPut));
  EXPECT_EQ("counted", target.get(a));
  Prefixing prefixing(target);
  std::string b = prefixing.putDeferred("changed");
  EXPECT_EQ(1, target.deferred) << "the wrapper's put was bypassed";
  EXPECT_EQ("wrapped:changed", target.get(b));
}

TEST_F(WrapperTest, CountingForwardsResultsAndErrors) {
  CountingContentStore store(inner_);
  std::string a = store.put("bytes", "alice");
  EXPECT_EQ(sha256Hex("bytes"), a);
  EXPECT_EQ("bytes", inner_.get(a));
  EXPECT_EQ("bytes", store.get(a));
  EXPECT_TRUE(store.capabilities().deleteIfUntouchedSince);
  EXPECT_THROW(store.get("nope"), InvalidArgumentError);
  EXPECT_EQ(2, store.count(ContentCall::kGet)) << "a call that throws counts";
  EXPECT_TRUE(store.remove(a));
  EXPECT_FALSE(inner_.has(a));
}

TEST_F(WrapperTest, FaultyFailsFromTheNthCallOfAKindDoingNothing) {
  FaultyContentStore store(inner_);
  store.failFrom(ContentCall::kPut, 3);
  std::string a = store.put("1");
  store.put("2");
  EXPECT_THROW(store.put("3"), UnavailableError);
  EXPECT_THROW(store.put("4"), UnavailableError);
  EXPECT_EQ(4, store.calls(ContentCall::kPut));
  EXPECT_FALSE(inner_.has(sha256Hex("3"))) << "a failed put stores nothing";
  EXPECT_EQ("1", store.get(a)) << "other kinds are unaffected";
  store.failFrom(ContentCall::kPut, 0);
  EXPECT_NO_THROW(store.put("3"));
  EXPECT_TRUE(inner_.has(sha256Hex("3")));
}

TEST_F(WrapperTest, FaultyCanFailEveryKindAndRenumbers) {
  FaultyContentStore store(inner_);
  std::string a = inner_.put("x");
  for (ContentCall kind : kAllContentCalls) store.failFrom(kind, 1);
  EXPECT_THROW(store.put("x"), UnavailableError);
  EXPECT_THROW(store.get(a), UnavailableError);
  EXPECT_THROW(store.has(a), UnavailableError);
  EXPECT_THROW(store.remove(a), UnavailableError);
  EXPECT_THROW(store.deleteIfUntouchedSince(a, clock_->nowMillis() + 1), UnavailableError);
  EXPECT_THROW(store.touchClock(), UnavailableError);
  EXPECT_THROW(store.forEachBlob([](const BlobInfo&) {}), UnavailableError);
  EXPECT_THROW(store.stat(a), UnavailableError);
  EXPECT_TRUE(inner_.has(a)) << "no failed call reached the inner store";
  EXPECT_NO_THROW(store.capabilities());
  store.failFrom(ContentCall::kGet, 2);
  EXPECT_EQ(0, store.calls(ContentCall::kGet));
  EXPECT_EQ("x", store.get(a));
  EXPECT_THROW(store.get(a), UnavailableError);
}

TEST_F(WrapperTest, FaultyErrorNamesTheCall) {
  FaultyContentStore store(inner_);
  store.failFrom(ContentCall::kDeleteIfUntouchedSince, 1);
  try {
    store.deleteIfUntouchedSince(sha256Hex("x"), 0);
    FAIL() << "no error";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("deleteIfUntouchedSince call 1"))
        << e.what();
  }
}

}  // namespace
}  // namespace loom::content

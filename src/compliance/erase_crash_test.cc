// Crash injection into eraseSubject (ADR 0140 D8 (b): "a crash between is finished by the
// retry from the intent"): the erasure dies after the intent, after the shred, in the middle
// of the deletes and before its result is journaled; the retry finishes it and returns what
// an uninterrupted erasure of a twin world returns, leaving the same blobs and keys behind.
#include <gtest/gtest.h>

#include "erase_test_util.h"
#include "loom/compliance/erase.h"
#include "support/faulty_content_store.h"

namespace loom::compliance {
namespace {

using testutil::addressOf;
using testutil::CrashingEventStore;
using testutil::World;

// Alice cites three blobs of her own and one she shares with bob; bob cites one of his own.
void populate(World& w) {
  w.run("a1", "alice", {w.offload("alice-1"), w.offload("shared")});
  w.run("a2", "alice", {w.offload("alice-2"), w.offload("alice-3")});
  w.run("b1", "bob", {w.offload("shared"), w.offload("bob-1")});
}

std::vector<std::string> storedBlobs(const World& w) {
  std::vector<std::string> out;
  w.content.forEachBlob([&](const content::BlobInfo& b) { out.push_back(b.address); });
  std::sort(out.begin(), out.end());
  return out;
}

class EraseCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    populate(twin_);
    populate(w_);
    expected_ = eraseSubject(twin_.options(), "alice");
    ASSERT_EQ(expected_.contentDeleted, (ContentDeleted{3, 0}));
  }

  // The retry against the real stores finishes the erasure exactly as the twin's.
  void expectRetryFinishes() {
    ASSERT_EQ(w_.controlTypes().back() == "ERASURE_CONTENT_DELETED", false)
        << "the crashed attempt must not have finished";
    auto r = eraseSubject(w_.options(), "alice");
    EXPECT_EQ(r, expected_);
    EXPECT_EQ(storedBlobs(w_), storedBlobs(twin_));
    EXPECT_FALSE(w_.hasKey("alice"));
    EXPECT_TRUE(w_.hasKey("bob"));
    EXPECT_EQ(w_.controlTypes(), twin_.controlTypes()) << "one intent, one shred, one result";
    EXPECT_EQ(eraseSubject(w_.options(), "alice"), expected_) << "and it stays finished";
  }

  World twin_;
  World w_;
  EraseSubjectResult expected_;
};

TEST_F(EraseCrashTest, ACrashAfterTheIntentIsFinishedByTheRetry) {
  CrashingEventStore crashing(w_.events);
  crashing.dieAt("ERASURE_CONTENT_DELETE_INTENDED", /*afterWrite=*/true);
  EXPECT_THROW(eraseSubject(w_.options(&crashing), "alice"), UnavailableError);
  EXPECT_TRUE(crashing.died());
  EXPECT_TRUE(w_.hasKey("alice")) << "died before the shred";
  expectRetryFinishes();
}

TEST_F(EraseCrashTest, ACrashAfterTheShredBeforeItIsJournaledIsFinishedByTheRetry) {
  CrashingEventStore crashing(w_.events);
  crashing.dieAt("SUBJECT_SHREDDED", /*afterWrite=*/false);
  EXPECT_THROW(eraseSubject(w_.options(&crashing), "alice"), UnavailableError);
  EXPECT_FALSE(w_.hasKey("alice")) << "the shred happened";
  EXPECT_EQ(w_.controlTypes(), std::vector<std::string>{"ERASURE_CONTENT_DELETE_INTENDED"});
  expectRetryFinishes();
}

TEST_F(EraseCrashTest, ACrashAfterTheShredIsJournaledIsFinishedByTheRetry) {
  CrashingEventStore crashing(w_.events);
  crashing.dieAt("SUBJECT_SHREDDED", /*afterWrite=*/true);
  EXPECT_THROW(eraseSubject(w_.options(&crashing), "alice"), UnavailableError);
  expectRetryFinishes();
}

TEST_F(EraseCrashTest, ACrashInTheMiddleOfTheDeletesIsFinishedByTheRetry) {
  content::FaultyContentStore faulty(w_.content);
  faulty.failFrom(content::ContentCall::kDeleteIfUntouchedSince, 2);  // the 1st delete lands
  auto serial = w_.options(nullptr, &faulty);
  serial.concurrency = 1;  // so "the 2nd delete" is well defined
  EXPECT_THROW(eraseSubject(serial, "alice"), UnavailableError);
  EXPECT_EQ(faulty.calls(content::ContentCall::kDeleteIfUntouchedSince), 2);
  EXPECT_EQ(storedBlobs(w_).size(), storedBlobs(twin_).size() + 2) << "one of three deleted";
  expectRetryFinishes();
}

TEST_F(EraseCrashTest, ACrashAtEachDeleteIsFinishedByTheRetry) {
  for (int64_t n = 1; n <= 3; ++n) {
    World w;
    populate(w);
    content::FaultyContentStore faulty(w.content);
    faulty.failFrom(content::ContentCall::kDeleteIfUntouchedSince, n);
    EXPECT_THROW(eraseSubject(w.options(nullptr, &faulty), "alice"), UnavailableError);
    faulty.failFrom(content::ContentCall::kDeleteIfUntouchedSince, 0);  // the store is back
    EXPECT_EQ(eraseSubject(w.options(nullptr, &faulty), "alice"), expected_) << "n = " << n;
    EXPECT_EQ(storedBlobs(w), storedBlobs(twin_)) << "n = " << n;
  }
}

TEST_F(EraseCrashTest, ACrashBeforeTheResultIsJournaledIsFinishedByTheRetry) {
  CrashingEventStore crashing(w_.events);
  crashing.dieAt("ERASURE_CONTENT_DELETED", /*afterWrite=*/false);
  EXPECT_THROW(eraseSubject(w_.options(&crashing), "alice"), UnavailableError);
  EXPECT_EQ(storedBlobs(w_), storedBlobs(twin_)) << "every delete happened";
  expectRetryFinishes();
}

// A blob re-put between the crashed attempt's plan and the retry is spared by the retry too:
// the retry keeps the journaled cutoff, it does not take a new one.
TEST_F(EraseCrashTest, TheRetryKeepsTheJournaledCutoff) {
  CrashingEventStore crashing(w_.events);
  crashing.dieAt("ERASURE_CONTENT_DELETE_INTENDED", /*afterWrite=*/true);
  EXPECT_THROW(eraseSubject(w_.options(&crashing), "alice"), UnavailableError);
  w_.clock->advance(1000);
  std::string again = w_.content.put("alice-2");  // put again for another execution
  auto r = eraseSubject(w_.options(), "alice");
  EXPECT_EQ(r.contentDeleted, (ContentDeleted{2, 1}));
  EXPECT_TRUE(w_.content.has(again));
}

}  // namespace
}  // namespace loom::compliance

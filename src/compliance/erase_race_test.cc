// Erasure racing the runs around it, on the embedded default's stores (SQLite logs and keys
// in one loom.db, a filesystem content store, the blob ledger in front of it):
// - an erase of alice racing bob's first put of the same bytes (his envelope journaled after
//   the erase scanned the logs) never deletes the blob bob's log cites: 0 losses in 100 rounds;
// - a run of alice still in flight when she is erased records nothing more, and a repeated
//   erase deletes the blob it wrote in between;
// - an erase that finds a blob missing because its put is still in flight (ledger row written,
//   bytes not yet) keeps the ledger row, so a repeated erase deletes the blob once it lands.
#include <gtest/gtest.h>

#include <barrier>
#include <future>
#include <latch>
#include <thread>

#include "compliance/sealing_event_store.h"
#include "content/claim_check_envelope.h"
#include "loom/compliance/blob_ledger.h"
#include "loom/compliance/erase.h"
#include "loom/compliance/sqlite_key_store.h"
#include "loom/content/filesystem_content_store.h"
#include "loom/content/forwarding_content_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "sealing_test_util.h"
#include "support/faulty_event_store.h"

namespace loom::compliance {
namespace {

using sealing_test::ScratchHome;
using sealing_test::testMasterKey;

// Holds every put after the ledger recorded it and before the bytes reach the store, until
// released: the window in which an erase sees the ledger row but no blob.
class HeldPuts : public content::ForwardingContentStore {
 public:
  explicit HeldPuts(content::ContentStore& target) : ForwardingContentStore(target) {}
  std::string put(std::string_view bytes, const std::optional<std::string>& subject) override {
    entered.count_down();
    release.wait();
    return target().put(bytes, subject);
  }
  std::latch entered{1};
  std::latch release{1};
};

class EraseRaceTest : public ::testing::Test {
 protected:
  std::string db() const { return (home_.path() / "loom.db").string(); }

  // Puts `bytes` for `subject` through the ledger, then journals a run citing it.
  std::string offloadAndJournal(const std::string& id, const std::string& subject,
                                const std::string& bytes) {
    std::string address = blobs_.put(bytes, subject);
    content::ClaimCheckEnvelope envelope{address, static_cast<int64_t>(bytes.size()), {}, true};
    logs_.append(
        id, 1,
        {kernel::executionStarted("wf", json::value("go"), subject, 1),
         kernel::stepCompleted("wf#turn:1:tool:0", "tool", "fetch", content::toJson(envelope), 2)});
    return address;
  }

  EraseCoordinatorOptions options() {
    EraseCoordinatorOptions o{logs_, keys_};
    o.content = &blobs_;
    o.ledger = &ledger_;
    return o;
  }

  ScratchHome home_;
  kernel::SqliteEventStore raw_{kernel::SqliteEventStoreOptions{db()}};
  SqliteKeyStore keys_{SqliteKeyStoreOptions{db(), testMasterKey(), "the test key"}};
  SealingEventStore logs_{raw_, keys_};
  std::shared_ptr<content::FilesystemContentStore> files_ =
      std::make_shared<content::FilesystemContentStore>(home_.path() / "blobs", systemClock());
  BlobLedger ledger_{db()};
  LedgeredContentStore blobs_{files_, ledger_};
};

TEST_F(EraseRaceTest, D12_AnEraseRacingAnotherSubjectsFirstIdenticalPutLosesNoCitedBlob) {
  int lost = 0;
  for (int round = 0; round < 100; ++round) {
    std::string r = std::to_string(round);
    std::string bytes = "{\"page\":\"shared bytes of round " + r + "\"}";
    std::string address = offloadAndJournal("a" + r, "alice" + r, bytes);
    std::barrier start(2);
    std::thread bob([&] {
      start.arrive_and_wait();
      offloadAndJournal("b" + r, "bob" + r, bytes);
    });
    start.arrive_and_wait();
    eraseSubject(options(), "alice" + r);
    bob.join();
    if (!files_->has(address)) ++lost;  // bob's log cites it
  }
  EXPECT_EQ(lost, 0) << "blobs cited by another subject's log were deleted";
}

TEST_F(EraseRaceTest, D8_ARunInFlightRecordsNothingAfterTheEraseAndARepeatedEraseDeletesItsBlob) {
  std::string first = offloadAndJournal("a1", "alice", "{\"page\":1}");
  EraseSubjectResult erased = eraseSubject(options(), "alice");
  EXPECT_EQ(erased.contentDeleted.deleted, 1);
  EXPECT_FALSE(files_->has(first));

  // The run was still going: its next tool result is put, then its step is refused.
  std::string late = blobs_.put("{\"page\":2, \"secret\":\"ALICE\"}", "alice");
  EXPECT_THROW(
      logs_.append("a1", 3,
                   {kernel::stepCompleted(
                       "wf#turn:2:tool:0", "tool", "fetch",
                       content::toJson(content::ClaimCheckEnvelope{late, 29, {}, true}), 3)}),
      FailedPreconditionError);
  ASSERT_TRUE(files_->has(late));

  // A put in the cutoff's own millisecond is spared (it may be another run's): let one pass.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EraseSubjectResult again = eraseSubject(options(), "alice");
  EXPECT_EQ(again.contentDeleted.deleted, 1) << "the blob written in between";
  EXPECT_FALSE(files_->has(late));
}

TEST_F(EraseRaceTest, D8_AnEraseThatFindsAPutInFlightMissingLetsARepeatedEraseDeleteIt) {
  offloadAndJournal("a1", "alice", "{\"page\":1}");
  auto held = std::make_shared<HeldPuts>(*files_);
  LedgeredContentStore heldBlobs(held, ledger_);
  std::string bytes = "{\"page\":2, \"secret\":\"ALICE\"}";
  auto late = std::async(std::launch::async, [&] { return heldBlobs.put(bytes, "alice"); });
  held->entered.wait();  // the ledger row is written; the blob is not

  EraseSubjectResult erased = eraseSubject(options(), "alice");
  EXPECT_EQ(erased.contentDeleted.deleted, 1);
  EXPECT_EQ(erased.contentDeleted.missing, 1) << "the put still in flight";
  held->release.count_down();
  std::string address = late.get();
  ASSERT_TRUE(files_->has(address)) << "the held put landed after the erase";

  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the cutoff's millisecond
  EraseSubjectResult again = eraseSubject(options(), "alice");
  EXPECT_EQ(again.contentDeleted.deleted, 1) << "the blob that landed after the first erase";
  EXPECT_FALSE(files_->has(address));
}

TEST_F(EraseRaceTest, D8_ABlobKeptForAnotherSubjectGoesWhenThatSubjectIsErasedToo) {
  std::string shared = offloadAndJournal("a1", "alice", "{\"same\":\"bytes\"}");
  offloadAndJournal("b1", "bob", "{\"same\":\"bytes\"}");
  EraseSubjectResult alice = eraseSubject(options(), "alice");
  EXPECT_EQ(alice.keptCitedElsewhere, std::vector<std::string>{shared}) << "bob's log cites it";
  ASSERT_TRUE(files_->has(shared));
  // alice's ledger row of it stays (she may still be putting it), but it was put before her
  // erasure: it must not keep the blob once bob is erased as well.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EraseSubjectResult bob = eraseSubject(options(), "bob");
  EXPECT_EQ(bob.contentDeleted.deleted, 1);
  EXPECT_FALSE(files_->has(shared)) << "a blob both erased subjects put survived";
}

TEST_F(EraseRaceTest, D8_AnEraseKeepsWhatAnotherSubjectPutAndReportsItKept) {
  std::string shared = offloadAndJournal("a1", "alice", "{\"same\":true}");
  blobs_.put("{\"same\":true}", "bob");  // bob's run put it; his envelope is not journaled yet
  EraseSubjectResult erased = eraseSubject(options(), "alice");
  EXPECT_EQ(erased.contentDeleted.deleted, 0);
  EXPECT_EQ(erased.keptCitedElsewhere, std::vector<std::string>{shared});
  EXPECT_TRUE(files_->has(shared));
}

// Found by `loom sim` (kept seed 756): an erasure died right after its intent, before the shred, and
// alice's run then put another blob. The retry finishes the intent's plan (D8 (b)), then, as
// the ledger shows alice put more since, erases that blob too in a fresh pass.
TEST_F(EraseRaceTest, ARetryAlsoErasesWhatTheSubjectPutAfterTheInterruptedIntent) {
  std::string first = offloadAndJournal("a1", "alice", "alice's first report");
  loom::testing::FaultyEventStore crashing(logs_);
  crashing.dieAt("ERASURE_CONTENT_DELETE_INTENDED", /*afterWrite=*/true);
  EraseCoordinatorOptions dying{crashing, keys_};
  dying.content = &blobs_;
  dying.ledger = &ledger_;
  EXPECT_THROW(eraseSubject(dying, "alice"), UnavailableError);
  ASSERT_TRUE(crashing.died());
  std::string second = offloadAndJournal("a2", "alice", "alice's second report");

  EraseSubjectResult r = eraseSubject(options(), "alice");
  EXPECT_FALSE(files_->has(first));
  EXPECT_FALSE(files_->has(second)) << "put after the intent, before the shred";
  EXPECT_EQ(r.contentDeleted.deleted, 2);
  EXPECT_EQ(r.contentDeleted.retained, 0);
  EXPECT_TRUE(ledger_.addressesOf("alice").empty());
}

}  // namespace
}  // namespace loom::compliance

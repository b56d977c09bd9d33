// eraseSubject, clause by clause: ADR 0140 D8 (b), D11 rule 3, D12 (crash injection is in
// erase_crash_test.cc).
#include "loom/compliance/erase.h"

#include <gtest/gtest.h>

#include "erase_test_util.h"
#include "support/faulty_event_store.h"

namespace loom::compliance {
namespace {

using testutil::addressOf;
using testutil::World;

class EraseTest : public ::testing::Test {
 protected:
  World w_;
};

// D8 (b): the subject's own blobs are deleted after the shred; the journal tells it in order.
TEST_F(EraseTest, DeletesBlobsOnlyTheSubjectCitesAndShredsItsKeys) {
  auto mine = w_.offload("alice's report");
  auto mine2 = w_.offload("alice's second report");
  w_.run("a1", "alice", {mine, json::object{{"n", 1}}});
  w_.run("a2", "alice", {mine2});
  auto r = eraseSubject(w_.options(), "alice");
  EXPECT_EQ(r.subject, "alice");
  EXPECT_TRUE(r.shredded);
  EXPECT_EQ(r.contentDeleted, (ContentDeleted{2, 0}));
  EXPECT_FALSE(w_.content.has(addressOf(mine)));
  EXPECT_FALSE(w_.content.has(addressOf(mine2)));
  EXPECT_FALSE(w_.hasKey("alice"));
  EXPECT_TRUE(w_.keys.wasShredded("alice"));
  EXPECT_EQ(w_.controlTypes(),
            (std::vector<std::string>{"ERASURE_CONTENT_DELETE_INTENDED", "SUBJECT_SHREDDED",
                                      "ERASURE_CONTENT_DELETED"}));
}

// A key store whose shred removes the key, then fails to flush its old bytes away (a SQLite
// checkpoint a reader blocks), as SqliteKeyStore does.
class UnfinishedShredKeyStore : public KeyStore {
 public:
  explicit UnfinishedShredKeyStore(KeyStore& inner) : inner_(inner) {}
  DataKey getOrCreate(const std::string& s) override { return inner_.getOrCreate(s); }
  std::optional<DataKey> find(const std::string& s, const std::string& id) const override {
    return inner_.find(s, id);
  }
  bool shred(const std::string& s) override {
    ++shreds;
    if (failBeforeDelete) throw UnavailableError("the key store is locked");
    bool destroyed = inner_.shred(s);
    if (fail) throw UnavailableError("the checkpoint after the shred was kept busy");
    return destroyed;
  }
  bool wasShredded(const std::string& s) const override { return inner_.wasShredded(s); }
  std::vector<std::string> subjects() const override { return inner_.subjects(); }
  bool fail = true;
  bool failBeforeDelete = false;
  int shreds = 0;

 private:
  KeyStore& inner_;
};

// A shred whose key is gone but whose flush failed still deletes the subject's blobs before it
// fails, and is not journaled as finished: running it again shreds (flushes) again and ends it.
// The CLI's lock check before the shred: a lost lock stops the erasure before anything is
// destroyed (the intent is journaled; a repeat finishes it).
TEST_F(EraseTest, ALostLockBeforeTheShredDestroysNothing) {
  auto mine = w_.offload("alice's report");
  w_.run("a1", "alice", {mine});
  EraseCoordinatorOptions o = w_.options();
  o.beforeDestroying = [] { throw UnavailableError("the maintenance lock was lost"); };
  EXPECT_THROW(eraseSubject(o, "alice"), UnavailableError);
  EXPECT_TRUE(w_.hasKey("alice"));
  EXPECT_TRUE(w_.content.has(addressOf(mine)));
  auto r = eraseSubject(w_.options(), "alice");
  EXPECT_TRUE(r.shredded);
  EXPECT_FALSE(w_.content.has(addressOf(mine)));
}

TEST_F(EraseTest, AShredLeftUnfinishedStillDeletesTheBlobsAndARepeatFinishesIt) {
  auto mine = w_.offload("alice's report");
  auto mine2 = w_.offload("alice's second report");
  w_.run("a1", "alice", {mine, mine2});
  UnfinishedShredKeyStore keys(w_.keys);
  EraseCoordinatorOptions options = w_.options();
  EraseCoordinatorOptions failing{options.events,    keys,         options.content, options.archive,
                                  options.snapshots, options.clock};
  try {
    eraseSubject(failing, "alice");
    ADD_FAILURE() << "an unfinished shred reported the erasure done";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("deleted its blobs (2 deleted, 0 retained), but is not "
                                         "finished"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("the checkpoint after the shred was kept busy"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(w_.content.has(addressOf(mine)));
  EXPECT_FALSE(w_.content.has(addressOf(mine2)));
  EXPECT_EQ(w_.controlTypes(),
            (std::vector<std::string>{"ERASURE_CONTENT_DELETE_INTENDED", "SUBJECT_SHREDDED"}));

  keys.fail = false;
  auto r = eraseSubject(failing, "alice");
  EXPECT_EQ(keys.shreds, 2) << "the repeat shreds (flushes) again";
  EXPECT_TRUE(r.shredded);
  EXPECT_EQ(r.contentDeleted, (ContentDeleted{2, 0}));
  EXPECT_EQ(w_.controlTypes(),
            (std::vector<std::string>{"ERASURE_CONTENT_DELETE_INTENDED", "SUBJECT_SHREDDED",
                                      "ERASURE_CONTENT_DELETED"}));
}

// A shred that failed before it deleted the key is no unfinished flush, even when an earlier
// erasure left the subject a tombstone: the erasure stops there, deleting nothing.
TEST_F(EraseTest, AShredThatFailedBeforeDeletingTheKeyDeletesNothingThoughATombstoneExists) {
  w_.run("a0", "alice", {w_.offload("alice's first report")});
  eraseSubject(w_.options(), "alice");  // a tombstone; her next run gets a new key
  auto mine = w_.offload("alice's report");
  w_.run("a1", "alice", {mine});
  ASSERT_TRUE(w_.hasKey("alice"));
  UnfinishedShredKeyStore keys(w_.keys);
  keys.failBeforeDelete = true;
  EraseCoordinatorOptions options = w_.options();
  EraseCoordinatorOptions failing{options.events,    keys,         options.content, options.archive,
                                  options.snapshots, options.clock};
  EXPECT_THROW(eraseSubject(failing, "alice"), UnavailableError);
  EXPECT_TRUE(w_.content.has(addressOf(mine))) << "deleted with the key still there";
  EXPECT_TRUE(w_.hasKey("alice"));
}

TEST_F(EraseTest, JournalsTheIntentWithAddressesAndCutoffAndTheResultNamingIt) {
  auto mine = w_.offload("alice's report");
  w_.run("a1", "alice", {mine});
  // The cutoff is the touch clock's first tick after the erasure began (erase.cc).
  int64_t cutoff = w_.content.touchClock() + 1;
  auto r = eraseSubject(w_.options(), "alice");
  auto log = w_.events.readControl(1);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(r.intent, log[0].seq);
  EXPECT_EQ(json::value(log[0].data),
            json::parse(R"({"subject":"alice","addresses":[")" + addressOf(mine) +
                            R"("],"kept":[],"touchCutoff":)" + std::to_string(cutoff) + "}",
                        "expected"));
  EXPECT_EQ(json::value(log[1].data), json::parse(R"({"subject":"alice"})", "expected"));
  EXPECT_EQ(json::value(log[2].data),
            json::parse(R"({"subject":"alice","deleted":1,"retained":0,"missing":0,"intent":)" +
                            std::to_string(r.intent) + "}",
                        "expected"));
}

// Found by `loom sim`: a blob the subject's run touched in the very millisecond
// the erasure began was spared as "put again during the erasure", and by every retry of it,
// which keeps the intent's cutoff. The cutoff is now the touch clock's next tick.
TEST_F(EraseTest, ABlobTouchedInTheMillisecondTheErasureBeginsIsDeleted) {
  auto mine = w_.offload("alice's report");
  w_.run("a1", "alice", {mine});
  w_.content.put("alice's report");  // touched now: the erasure's first millisecond
  auto r = eraseSubject(w_.options(), "alice");
  EXPECT_EQ(r.contentDeleted, (ContentDeleted{1, 0}));
  EXPECT_FALSE(w_.content.has(addressOf(mine)));
}

// The logs stay: sealed, they read as erased markers after the shred; nothing removes them.
TEST_F(EraseTest, KeepsTheSubjectsLogs) {
  w_.run("a1", "alice", {w_.offload("alice's report")});
  eraseSubject(w_.options(), "alice");
  EXPECT_TRUE(w_.events.info("a1").has_value());
}

// ADR 0120 owner set: a deduplicated blob another subject's live execution cites stays.
TEST_F(EraseTest, ABlobSharedWithAnotherSubjectsLiveExecutionSurvives) {
  auto shared = w_.offload("the same bytes");
  auto mine = w_.offload("alice only");
  w_.run("a1", "alice", {shared, mine});
  w_.run("b1", "bob", {w_.offload("the same bytes")});
  auto r = eraseSubject(w_.options(), "alice");
  EXPECT_EQ(r.contentDeleted, (ContentDeleted{1, 0}));
  EXPECT_TRUE(w_.content.has(addressOf(shared)));
  EXPECT_FALSE(w_.content.has(addressOf(mine)));
  EXPECT_TRUE(w_.hasKey("bob"));
}

TEST_F(EraseTest, ABlobSharedWithAnExecutionWithoutSubjectSurvives) {
  auto shared = w_.offload("the same bytes");
  w_.run("a1", "alice", {shared});
  w_.run("n1", "", {shared});
  EXPECT_EQ(eraseSubject(w_.options(), "alice").contentDeleted, (ContentDeleted{0, 0}));
  EXPECT_TRUE(w_.content.has(addressOf(shared)));
}

TEST_F(EraseTest, ATaintWrappedEnvelopeAtTheTopOfAnotherExecutionKeepsTheBlob) {
  auto shared = w_.offload("the same bytes");
  w_.run("a1", "alice", {shared});
  w_.run("b1", "bob", {effects::tainted(shared, "mcp:files")});
  eraseSubject(w_.options(), "alice");
  EXPECT_TRUE(w_.content.has(addressOf(shared)));
}

// D11 rule 3: only the trusted position counts for another execution; a nested look-alike
// with retain: true (an unlisted tool's output) does not keep the blob.
TEST_F(EraseTest, AForgedNestedRetainInAnotherExecutionDoesNotKeepABlob) {
  auto mine = w_.offload("alice's report");
  w_.run("a1", "alice", {mine});
  w_.run("m1", "mallory", {json::object{{"page", mine}, {"items", json::array{mine}}}});
  auto r = eraseSubject(w_.options(), "alice");
  EXPECT_EQ(r.contentDeleted, (ContentDeleted{1, 0}));
  EXPECT_FALSE(w_.content.has(addressOf(mine)));
}

// D11 rule 3, the snapshot clause: another execution's snapshot keeps a blob only when that
// execution has no recorded STEP_COMPLETED left.
TEST_F(EraseTest, AnotherExecutionsSnapshotDoesNotKeepABlobWhileItsStepsVouchForIt) {
  auto mine = w_.offload("alice's report");
  w_.run("a1", "alice", {mine});
  w_.run("b1", "bob", {json::object{{"n", 1}}});
  w_.snapshot("b1", "bob", mine);
  eraseSubject(w_.options(), "alice");
  EXPECT_FALSE(w_.content.has(addressOf(mine)));
}

TEST_F(EraseTest, AnotherExecutionsSnapshotKeepsABlobWhenNoStepCompletedIsLeft) {
  auto mine = w_.offload("alice's report");
  w_.run("a1", "alice", {mine});
  w_.run("b1", "bob", {mine});
  w_.snapshot("b1", "bob", mine);
  w_.events.remove("b1");  // retention discarded the log; the snapshot is the sole evidence
  eraseSubject(w_.options(), "alice");
  EXPECT_TRUE(w_.content.has(addressOf(mine)));
}

// An archived execution of another subject vouches for a blob at the trusted position.
TEST_F(EraseTest, AnotherSubjectsArchivedExecutionKeepsABlob) {
  auto shared = w_.offload("the same bytes");
  w_.run("a1", "alice", {shared});
  w_.run("b1", "bob", {shared});
  w_.archiveExecution("b1");
  eraseSubject(w_.options(), "alice");
  EXPECT_TRUE(w_.content.has(addressOf(shared)));
}

// Broad collection of the subject's own refs: archived executions, snapshots, nested refs.
TEST_F(EraseTest, CollectsTheSubjectsArchivedSnapshottedAndNestedRefs) {
  auto archived = w_.offload("archived");
  auto snapped = w_.offload("snapped");
  auto nested = w_.offload("nested");
  w_.run("a1", "alice", {archived});
  w_.archiveExecution("a1");
  w_.run("a2", "alice", {json::object{{"deep", json::array{nested}}}});
  w_.snapshot("a3", "alice", snapped);  // its log is gone; the state names alice
  auto r = eraseSubject(w_.options(), "alice");
  EXPECT_EQ(r.contentDeleted, (ContentDeleted{3, 0}));
  for (const auto& e : {archived, snapped, nested}) EXPECT_FALSE(w_.content.has(addressOf(e)));
}

TEST_F(EraseTest, NoCitedBlobNeedsNoContentStore) {
  w_.run("a1", "alice", {json::object{{"inline", true}}});
  auto options = w_.options();
  options.content = nullptr;
  auto r = eraseSubject(options, "alice");
  EXPECT_TRUE(r.shredded);
  EXPECT_EQ(r.contentDeleted, (ContentDeleted{0, 0}));
  EXPECT_EQ(json::value(w_.events.readControl(1).front().data),
            json::parse(R"({"subject":"alice","addresses":[],"kept":[],"touchCutoff":null})",
                        "expected"));
}

// Refusals (D8 (b), D12): before the shred, with no intent journaled.
class RefusalTest : public EraseTest {
 protected:
  void SetUp() override {
    blob_ = w_.offload("alice's report");
    w_.run("a1", "alice", {blob_});
  }
  // Expects `options` to refuse, naming `reason`, with nothing shredded or journaled.
  void expectRefusal(const EraseCoordinatorOptions& options, const std::string& reason) {
    try {
      eraseSubject(options, "alice");
      FAIL() << "expected ContentCopiesRemainError";
    } catch (const ContentCopiesRemainError& e) {
      EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
      EXPECT_EQ(e.subject(), "alice");
      EXPECT_NE(e.reason().find(reason), std::string::npos) << e.reason();
      EXPECT_NE(std::string(e.what()).find("before shredding anything"), std::string::npos);
    }
    EXPECT_TRUE(w_.hasKey("alice")) << "the key must still be there";
    EXPECT_FALSE(w_.keys.wasShredded("alice"));
    EXPECT_TRUE(w_.events.readControl(1).empty()) << "no intent may be journaled";
    EXPECT_TRUE(w_.content.has(addressOf(blob_)));
  }
  content::ContentCapabilities all() const { return w_.content.capabilities(); }
  json::value blob_;
};

TEST_F(RefusalTest, RefusesWhenNoContentStoreIsWired) {
  auto options = w_.options();
  options.content = nullptr;
  expectRefusal(options, "no content store is wired");
}

TEST_F(RefusalTest, RefusesWhenTheStoreCannotDelete) {
  auto caps = all();
  caps.remove = false;
  testutil::MaskedContentStore masked(w_.content, caps);
  expectRefusal(w_.options(nullptr, &masked), "cannot delete");
}

TEST_F(RefusalTest, RefusesWhenTheStoreLacksDeleteIfUntouchedSince) {
  auto caps = all();
  caps.deleteIfUntouchedSince = false;
  testutil::MaskedContentStore masked(w_.content, caps);
  expectRefusal(w_.options(nullptr, &masked), "deleteIfUntouchedSince");
}

TEST_F(RefusalTest, RefusesWhenTheStoreLacksTouchClock) {
  auto caps = all();
  caps.touchClock = false;
  testutil::MaskedContentStore masked(w_.content, caps);
  expectRefusal(w_.options(nullptr, &masked), "touchClock");
}

TEST_F(RefusalTest, RefusesWhenTheEventStoreCannotBeEnumerated) {
  testutil::CrashingEventStore unlisted(w_.events);
  unlisted.cannotList = true;
  expectRefusal(w_.options(&unlisted), "cannot enumerate");
}

TEST_F(RefusalTest, RefusesWhenAPriorIntentHasAddressesAndTheStoreCannotDelete) {
  // A prior attempt journaled its intent and died before the shred.
  testutil::CrashingEventStore crashing(w_.events);
  crashing.dieAt("ERASURE_CONTENT_DELETE_INTENDED", /*afterWrite=*/true);
  EXPECT_THROW(eraseSubject(w_.options(&crashing), "alice"), UnavailableError);
  ASSERT_EQ(w_.events.readControl(1).size(), 1u);
  auto caps = all();
  caps.deleteIfUntouchedSince = false;
  testutil::MaskedContentStore masked(w_.content, caps);
  try {
    eraseSubject(w_.options(nullptr, &masked), "alice");
    FAIL() << "expected ContentCopiesRemainError";
  } catch (const ContentCopiesRemainError& e) {
    EXPECT_NE(e.reason().find("prior erasure's journaled intent"), std::string::npos);
    EXPECT_EQ(e.blobs(), 1);
  }
  EXPECT_TRUE(w_.hasKey("alice"));
  EXPECT_EQ(w_.events.readControl(1).size(), 1u) << "nothing more journaled";
}

// D12: the post-shred delete is conditional; a re-put between plan and delete spares it.
class RePuttingStore : public content::MemoryContentStore {
 public:
  using MemoryContentStore::MemoryContentStore;
  bool deleteIfUntouchedSince(std::string_view address, int64_t cutoff) override {
    if (auto bytes = get(address)) put(*bytes);  // another execution puts the same bytes now
    return MemoryContentStore::deleteIfUntouchedSince(address, cutoff);
  }
};

TEST_F(EraseTest, AConcurrentIdenticalPutBetweenPlanAndDeleteSparesTheBlob) {
  RePuttingStore store(w_.clock);
  std::string address = store.put("alice's report");
  w_.run("a1", "alice",
         {content::toJson(content::ClaimCheckEnvelope{address, 14, std::nullopt, true})});
  w_.clock->advance(1000);
  auto r = eraseSubject(w_.options(nullptr, &store), "alice");
  EXPECT_EQ(r.contentDeleted, (ContentDeleted{0, 1}));
  EXPECT_TRUE(store.has(address));
  EXPECT_EQ(w_.events.readControl(1).back().data.at("retained"), 1);
}

TEST_F(EraseTest, PlanContentDeletionWritesAndDestroysNothing) {
  auto shared = w_.offload("shared");
  auto mine = w_.offload("mine");
  w_.run("a1", "alice", {shared, mine});
  w_.run("b1", "bob", {shared});
  auto plan = EraseCoordinator(w_.options()).planContentDeletion("alice");
  EXPECT_EQ(plan.addresses, std::vector<std::string>{addressOf(mine)});
  EXPECT_EQ(plan.citedBySubject, 2);
  EXPECT_EQ(plan.stillCitedElsewhere, 1);
  EXPECT_EQ(plan.touchCutoff, w_.content.touchClock());
  EXPECT_FALSE(plan.resumesIntent);
  EXPECT_TRUE(w_.events.readControl(1).empty());
  EXPECT_TRUE(w_.hasKey("alice"));
}

TEST_F(EraseTest, ASecondCallAfterAFinishedErasureReturnsTheSameResultAndWritesNothing) {
  w_.run("a1", "alice", {w_.offload("alice's report")});
  auto first = eraseSubject(w_.options(), "alice");
  auto second = eraseSubject(w_.options(), "alice");
  EXPECT_EQ(first, second);
  EXPECT_EQ(w_.events.readControl(1).size(), 3u);
}

TEST_F(EraseTest, RefusesAnEmptySubject) {
  EXPECT_THROW(eraseSubject(w_.options(), ""), InvalidArgumentError);
}

TEST_F(EraseTest, PrintsTheResultForTheCli) {
  EraseSubjectResult r{"alice", true, ContentDeleted{3, 1, 2}, 7, {std::string(64, 'c')}};
  EXPECT_EQ(json::toText(toJson(r)),
            R"({"subject":"alice","shredded":true,"contentDeleted":{"deleted":3,"retained":1,)"
            R"("missing":2,"datedAhead":0,"datedAheadUntil":null,"keptCitedElsewhere":[")" +
                std::string(64, 'c') + R"("]}})");
  std::string text = describe(r);
  EXPECT_NE(text.find("3 deleted, 1 retained"), std::string::npos) << text;
  EXPECT_NE(text.find("2 missing"), std::string::npos) << text;
  EXPECT_NE(text.find("1 kept"), std::string::npos) << text;
  EXPECT_NE(text.find("shredded"), std::string::npos) << text;
}

// The live logs, with one execution's log unreadable (a corrupt row).
class OneCorruptLog : public loom::testing::FaultyEventStore {
 public:
  OneCorruptLog(kernel::EventStore& inner, std::string corrupt)
      : FaultyEventStore(inner), corrupt_(std::move(corrupt)) {}
  void scan(const std::string& id, int64_t from,
            const std::function<void(const kernel::Event&)>& visit) const override {
    if (id == corrupt_) throw CorruptEventError(id, 2, "unknown event type 'STEP_DONE'");
    FaultyEventStore::scan(id, from, visit);
  }

 private:
  std::string corrupt_;
};

TEST_F(EraseTest, D8_AnotherExecutionsLogItCannotReadRefusesTheErasureBeforeTheShred) {
  auto mine = w_.offload("alice's report");
  w_.run("a1", "alice", {mine});
  w_.run("b1", "bob", {w_.offload("bob's report")});
  w_.keys.getOrCreate("alice");
  OneCorruptLog logs(w_.events, "b1");
  EXPECT_THROW(eraseSubject(w_.options(&logs), "alice"), DataLossError)
      << "b1 may cite alice's blob: cannot read is not cites nothing";
  EXPECT_TRUE(w_.content.has(addressOf(mine)));
  EXPECT_FALSE(w_.keys.wasShredded("alice"));
  EXPECT_TRUE(w_.events.readControl(1).empty()) << "no intent journaled";
}

}  // namespace
}  // namespace loom::compliance

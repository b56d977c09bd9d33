// A whole sealed home, wired as boot must wire it (sealing_event_store.h): the runtime over a
// SealingEventStore and SealingSnapshotStore on loom.db (keys in the same file), blobs in an
// EncryptingContentStore over the filesystem store, retention run on the INNER stores so the
// archive segment gets ciphertext, the sweep's archive pins unsealing. Then every file of the
// home is searched for each subject's known plaintext, before and after alice is shredded;
// after the shred alice reads as erased, cannot be resumed, and bob is untouched.
#include <gtest/gtest.h>

#include "compliance/encrypting_content_store.h"
#include "compliance/sealing_event_store.h"
#include "compliance/sealing_snapshot_store.h"
#include "loom/compliance/sqlite_key_store.h"
#include "loom/content/filesystem_content_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/kernel/sqlite_snapshot_store.h"
#include "loom/sweep/retention.h"
#include "loom/util/error.h"
#include "loom/workflow/runtime.h"
#include "sealing_test_util.h"
#include "sweep/pin_sources.h"

namespace loom::compliance {
namespace {

using namespace sealing_test;

constexpr int64_t kDay = 24LL * 3600 * 1000;

class SealedHomeTest : public ::testing::Test {
 protected:
  SealedHomeTest() {
    // Each run: two steps whose outputs hold the subject's secret (one also a sealed blob),
    // then it waits for "go" unless its input says to finish.
    workflows_.add("research", "", [this](workflow::WorkflowContext& ctx) {
      std::string secret = std::string(ctx.input().at("secret").as_string());
      ctx.step("fetch", [&] {
        std::string address = blobs_.put("blob of " + secret, ctx.subject());
        return json::value{{"text", "fetched " + secret}, {"ref", content::contentRef(address)}};
      });
      ctx.step("summarize", [&] { return json::value("summary of " + secret); });
      if (!ctx.input().at("finish").as_bool()) ctx.awaitSignal("go");
      return json::value("done with " + secret);
    });
    runtime_ = std::make_unique<workflow::WorkflowRuntime>(
        sealedLogs_, workflows_, tasks_, nullptr,
        workflow::RuntimeOptions{.clock = clock_,
                                 .snapshots = &sealedSnapshots_,
                                 .snapshotEveryEvents = 2,
                                 .onWarn = [](std::string_view) {}});
  }

  void start(const std::string& id, const std::string& subject, const std::string& secret,
             bool finish) {
    runtime_->start("research", json::object{{"secret", secret}, {"finish", finish}},
                    workflow::RunOptions{id, subject});
  }

  std::string db() const { return (home_.path() / "loom.db").string(); }

  ScratchHome home_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kT0);
  SqliteKeyStore keys_{SqliteKeyStoreOptions{db(), testMasterKey(), "the test key"}};
  kernel::SqliteEventStore logs_{kernel::SqliteEventStoreOptions{db()}};
  kernel::SqliteSnapshotStore snapshots_{kernel::SqliteSnapshotStoreOptions{db()}};
  SealingEventStore sealedLogs_{logs_, keys_};
  SealingSnapshotStore sealedSnapshots_{snapshots_, keys_};
  content::FilesystemContentStore plainBlobs_{home_.path() / "content", clock_};
  EncryptingContentStore blobs_{plainBlobs_, keys_};
  sweep::Archive archive_{home_.path() / "archive"};
  workflow::WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  std::unique_ptr<workflow::WorkflowRuntime> runtime_;
};

TEST_F(SealedHomeTest, NoPlaintextAnywhereInTheHomeBeforeOrAfterAShred) {
  start("a-done", "alice", "ALICE-SECRET-1", true);
  start("a-parked", "alice", "ALICE-SECRET-2", false);
  start("b-done", "bob", "BOB-SECRET-1", true);
  start("b-parked", "bob", "BOB-SECRET-2", false);
  ASSERT_TRUE(sealedSnapshots_.latest("a-parked")) << "a snapshot was written at the park";

  // Retention on the inner stores: the segment receives the events as stored.
  clock_->advance(10 * kDay);
  sweep::RetentionReport retention =
      sweep::runRetention(logs_, &snapshots_, sweep::folderArchiveStore(home_.path() / "archive"),
                          sweep::RetentionOptions{.afterDays = 1, .clock = clock_});
  ASSERT_EQ(2, retention.archived);
  ASSERT_EQ(1u, archive_.segmentNames().size());
  std::optional<sweep::ArchivedExecution> archived = archive_.find("b-done");
  ASSERT_TRUE(archived);
  for (const auto& e : archived->events) EXPECT_TRUE(kernel::isSealed(e.data)) << e.seq;
  EventUnsealer unsealer(keys_);
  EXPECT_EQ(
      "fetched BOB-SECRET-1",
      unsealer.unseal("b-done", archived->events[1]).data.at("output").at("text").as_string());

  // The sweep pins what the sealed archive cites only because its pins unseal.
  sweep::SweepOptions sweepOptions{.dryRun = true, .clock = clock_};
  sweep::SweepReport report = sweep::sweepUnpinnedContent(
      blobs_,
      sweep::SweepSources{
          &sealedLogs_,
          {compliance::sealedArchivePins(archive_, keys_), sweep::snapshotPins(sealedSnapshots_)}},
      sweepOptions);
  EXPECT_EQ(4, report.blobsSeen);
  EXPECT_EQ(2, report.keptByReason["archive"]);
  EXPECT_EQ(0, report.deleted);

  for (const std::string secret : {"ALICE-SECRET", "BOB-SECRET"}) {
    EXPECT_EQ(std::vector<std::string>{}, filesContaining(home_.path(), secret)) << secret;
  }
  ASSERT_GE(fileCount(home_.path()), 7u);  // loom.db(-wal, -shm), LAYOUT, 4 blobs, segment

  // Erase alice.
  ASSERT_TRUE(keys_.shred("alice"));
  for (const auto& e : sealedLogs_.read("a-parked")) {
    ASSERT_TRUE(kernel::isErased(e.data)) << e.seq;
    EXPECT_EQ("alice", e.data.at("erased").at("subject").as_string());
  }
  EXPECT_EQ(2, sealedLogs_.info("a-parked")->steps);
  EXPECT_EQ(2u, sealedLogs_.list({}).size());
  EXPECT_EQ(std::nullopt, sealedSnapshots_.latest("a-parked"));
  std::optional<sweep::ArchivedExecution> aliceArchived = archive_.find("a-done");
  ASSERT_TRUE(aliceArchived);
  EventUnsealer fresh(keys_);  // a new read looks the keys up again
  for (const auto& e : aliceArchived->events) {
    EXPECT_TRUE(kernel::isErased(fresh.unseal("a-done", e).data)) << e.seq;
  }
  try {
    runtime_->resume("a-parked");
    FAIL() << "an erased execution was resumed";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string::npos,
              std::string(e.what()).find("execution a-parked was erased (subject alice)"))
        << e.what();
  }
  // Bob is untouched: his parked run completes, his blobs and archive read.
  workflow::RunResult bob = runtime_->signal("b-parked", "go", json::value(true));
  EXPECT_EQ(kernel::ExecutionStatus::kCompleted, bob.status);
  EXPECT_EQ(json::value("done with BOB-SECRET-2"), bob.output);
  std::string bobRef(
      sealedLogs_.read("b-parked")[1].data.at("output").at("ref").at("__loomContent").as_string());
  EXPECT_EQ("blob of BOB-SECRET-2", blobs_.get(bobRef, std::string("bob")));

  for (const std::string secret : {"ALICE-SECRET", "BOB-SECRET"}) {
    EXPECT_EQ(std::vector<std::string>{}, filesContaining(home_.path(), secret)) << secret;
  }
}

TEST_F(SealedHomeTest, AnErasedEndedExecutionIsRefusedToo) {
  start("a-done", "alice", "ALICE-X", true);
  ASSERT_TRUE(keys_.shred("alice"));
  EXPECT_THROW(runtime_->resume("a-done"), FailedPreconditionError);
  EXPECT_EQ(kernel::ExecutionStatus::kCompleted, sealedLogs_.info("a-done")->status);
}

TEST_F(SealedHomeTest, AliceBlobsAreUnreadableAfterTheShred) {
  start("a-done", "alice", "ALICE-Y", true);
  std::string ref(
      sealedLogs_.read("a-done")[1].data.at("output").at("ref").at("__loomContent").as_string());
  EXPECT_EQ("blob of ALICE-Y", blobs_.get(ref, std::string("alice")));
  ASSERT_TRUE(keys_.shred("alice"));
  EXPECT_EQ(std::nullopt, blobs_.get(ref, std::string("alice")));
}

}  // namespace
}  // namespace loom::compliance

// eraseSubject and exportSubject over sealed logs (compliance.erase): the live logs through
// SealingEventStore, snapshots through SealingSnapshotStore, archive segments holding sealed
// events as retention copied them. The citations must be read through the seal, or a blob
// another subject's archived execution vouches for would look uncited.
#include <gtest/gtest.h>

#include "compliance/sealing_event_store.h"
#include "compliance/sealing_snapshot_store.h"
#include "erase_test_util.h"
#include "loom/compliance/erase.h"
#include "loom/compliance/export.h"

namespace loom::compliance {
namespace {

using testutil::addressOf;
using testutil::World;

class SealedEraseTest : public ::testing::Test {
 protected:
  void run(const std::string& id, const std::string& subject, json::value output) {
    int64_t now = w_.clock->nowMillis();
    sealed_.append(
        id, 1,
        {kernel::executionStarted("wf", json::object{}, subject, now),
         kernel::stepCompleted("agent#turn:1:tool:0", "tool", "fetch", std::move(output), now),
         kernel::executionCompleted(1, now)});
    w_.clock->advance(1000);
  }
  EraseCoordinatorOptions options() {
    return EraseCoordinatorOptions{sealed_,     w_.keys,     &w_.content,
                                   &w_.archive, &snapshots_, w_.clock};
  }
  ExportSubjectOptions exportOptions() {
    return ExportSubjectOptions{sealed_, &w_.content, &w_.archive, &snapshots_, w_.clock, &w_.keys};
  }

  World w_;
  SealingEventStore sealed_{w_.events, w_.keys};
  SealingSnapshotStore snapshots_{w_.snapshots, w_.keys};
};

TEST_F(SealedEraseTest, TheStoredLogHoldsNoPlaintextCitation) {
  auto mine = w_.offload("alice's report");
  run("a1", "alice", mine);
  std::string stored;
  for (const auto& e : w_.events.read("a1")) stored += kernel::toText(e);
  EXPECT_EQ(stored.find(addressOf(mine)), std::string::npos);
}

TEST_F(SealedEraseTest, ABlobAnotherSubjectsSealedArchivedExecutionCitesSurvives) {
  auto shared = w_.offload("the same bytes");
  auto mine = w_.offload("alice only");
  run("a1", "alice", json::object{{"page", mine}});
  run("a2", "alice", shared);
  run("b1", "bob", shared);
  w_.archiveExecution("b1");  // retention reads the inner store: the segment holds ciphertext
  w_.archiveExecution("a1");
  auto r = eraseSubject(options(), "alice");
  EXPECT_EQ(r.contentDeleted, (ContentDeleted{1, 0}));
  EXPECT_TRUE(w_.content.has(addressOf(shared)));
  EXPECT_FALSE(w_.content.has(addressOf(mine)));
}

TEST_F(SealedEraseTest, AfterTheShredTheLogsReadAsErasedAndARetryChangesNothing) {
  auto mine = w_.offload("alice's report");
  run("a1", "alice", mine);
  snapshots_.put(kernel::Snapshot{
      "a1", 2, json::object{{"version", 1}, {"subject", "alice"}, {"steps", mine}}});
  auto first = eraseSubject(options(), "alice");
  EXPECT_TRUE(first.shredded);
  EXPECT_EQ(first.contentDeleted, (ContentDeleted{1, 0}));
  auto events = sealed_.read("a1");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_TRUE(events[1].data.contains("erased")) << kernel::toText(events[1]);
  EXPECT_EQ(eraseSubject(options(), "alice"), first);
  EXPECT_EQ(w_.events.readControl(1).size(), 3u);
}

TEST_F(SealedEraseTest, ExportDecryptsLiveAndArchivedEventsAndResolvesBlobs) {
  auto report = w_.offload("{\"rows\":3}");
  run("a1", "alice", report);
  run("a2", "alice", json::object{{"n", 2}});
  w_.archiveExecution("a2");
  auto doc = exportSubject(exportOptions(), "alice");
  const auto& executions = doc.at("executions").as_array();
  ASSERT_EQ(executions.size(), 2u);
  EXPECT_EQ(executions[0].at("events").at(1).at("output"), report);
  EXPECT_EQ(executions[1].at("source"), "archive");
  EXPECT_EQ(executions[1].at("events").at(1).at("output"), json::value(json::object{{"n", 2}}));
  EXPECT_EQ(doc.at("claimChecked").at(0).at("value"), json::value(json::object{{"rows", 3}}));
}

}  // namespace
}  // namespace loom::compliance

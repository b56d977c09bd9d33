// SealingSnapshotStore over the SQLite snapshot store: sealed at rest, opened on read, bound
// to execution and seq, absent (latest) or an erased marker (forEach) after a shred.
#include "compliance/sealing_snapshot_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "loom/compliance/memory_key_store.h"
#include "loom/kernel/sqlite_snapshot_store.h"
#include "loom/util/error.h"
#include "sealing_test_util.h"

namespace loom::compliance {
namespace {

using namespace sealing_test;

json::value state(const std::optional<std::string>& subject, const std::string& secret) {
  return json::object{{"version", 1},
                      {"subject", subject ? json::value(*subject) : json::value()},
                      {"steps", json::object{{"s", json::object{{"output", secret}}}}}};
}

class SealingSnapshotStoreTest : public ::testing::Test {
 protected:
  std::string dbPath() const { return (home_.path() / "loom.db").string(); }

  ScratchHome home_;
  MemoryKeyStore keys_;
  kernel::SqliteSnapshotStore inner_{kernel::SqliteSnapshotStoreOptions{dbPath()}};
  SealingSnapshotStore store_{inner_, keys_};
};

TEST_F(SealingSnapshotStoreTest, StatesRoundTripAndAreSealedAtRest) {
  store_.put({"e1", 5, state("alice", "SNAP-SECRET")});
  std::optional<kernel::Snapshot> s = store_.latest("e1");
  ASSERT_TRUE(s);
  EXPECT_EQ(5, s->seq);
  EXPECT_EQ(state("alice", "SNAP-SECRET"), s->state);
  std::optional<kernel::Snapshot> stored = inner_.latest("e1");
  ASSERT_TRUE(stored && stored->state.is_object());
  EXPECT_TRUE(kernel::isSealed(stored->state.get_object()));
  EXPECT_EQ(std::string::npos, json::toText(stored->state).find("SNAP-SECRET"));
  EXPECT_TRUE(filesContaining(home_.path(), "SNAP-SECRET").empty());
}

TEST_F(SealingSnapshotStoreTest, StatesWithoutASubjectStayClearUnlessSealSubjectless) {
  store_.put({"e1", 1, state(std::nullopt, "CLEAR")});
  EXPECT_FALSE(kernel::isSealed(inner_.latest("e1")->state.get_object()));
  SealingSnapshotStore crypto(inner_, keys_, SealingOptions{.sealSubjectless = true});
  crypto.put({"e2", 1, state(std::nullopt, "SYSTEM")});
  std::optional<kernel::Snapshot> stored = inner_.latest("e2");
  ASSERT_TRUE(stored);
  const auto& sealed = stored->state.get_object();
  ASSERT_TRUE(kernel::isSealed(sealed));
  EXPECT_EQ(kSystemSubject, sealed.at("sealed").at("subject").as_string());
  EXPECT_EQ(state(std::nullopt, "SYSTEM"), crypto.latest("e2")->state);
}

TEST_F(SealingSnapshotStoreTest, AStateMovedToAnotherExecutionOrSeqIsDataLoss) {
  store_.put({"e1", 5, state("alice", "A")});
  kernel::Snapshot moved = *inner_.latest("e1");
  moved.executionId = "e2";
  inner_.put(moved);
  try {
    store_.latest("e2");
    FAIL() << "a moved state opened";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("'e2' at seq 5")) << e.what();
  }
  moved.executionId = "e1";
  moved.seq = 6;
  inner_.put(moved);
  EXPECT_THROW(store_.latest("e1"), DataLossError);
}

TEST_F(SealingSnapshotStoreTest, AfterAShredLatestIsAbsentAndForEachVisitsAnErasedMarker) {
  store_.put({"a", 3, state("alice", "A")});
  store_.put({"b", 3, state("bob", "B")});
  ASSERT_TRUE(keys_.shred("alice"));
  EXPECT_EQ(std::nullopt, store_.latest("a"));
  EXPECT_TRUE(store_.latest("b"));
  std::map<std::string, json::value> seen;
  store_.forEach([&](const kernel::Snapshot& s) { seen[s.executionId] = s.state; });
  ASSERT_EQ(2u, seen.size());
  EXPECT_EQ((json::object{{"erased", json::object{{"subject", "alice"}}}}), seen["a"]);
  EXPECT_EQ(state("bob", "B"), seen["b"]);
  EXPECT_EQ(1, store_.remove("a"));
  EXPECT_EQ(0, store_.prune("b", 3));
}

}  // namespace
}  // namespace loom::compliance

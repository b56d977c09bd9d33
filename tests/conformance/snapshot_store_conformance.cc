// The SnapshotStore conformance suite: the contract of include/loom/kernel/snapshot_store.h as
// tests that every implementation passes, instantiated once per implementation at the bottom
// (adding one is one factory in that list), then the SQLite store's own tests: it shares the
// home's loom.db with the event store, survives a reopen, and reports a corrupt row.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "loom/kernel/memory_snapshot_store.h"
#include "loom/kernel/sqlite_event_store.h"
#include "loom/kernel/sqlite_snapshot_store.h"
#include "loom/postgres/postgres_snapshot_store.h"
#include "loom/util/error.h"
#include "postgres/pg_connection.h"
#include "support/postgres_server.h"
#include "support/temp_dir.h"

namespace loom::kernel::snapshot_conformance {

using loom::testing::TempDir;
namespace {

namespace fs = std::filesystem;

struct SnapshotStoreFactory {
  std::string name;
  std::function<std::unique_ptr<SnapshotStore>(const fs::path& dir)> make;
  // Overwrites the stored state text of (id, seq) with bytes that are not JSON; empty for
  // stores that keep values, which cannot be corrupt.
  std::function<void(const fs::path& dir, const std::string& id, int64_t seq)> corrupt;
  // Why the implementation cannot run here (no server); unset or "": it can.
  std::function<std::string()> unavailable;
};

void PrintTo(const SnapshotStoreFactory& f, std::ostream* os) { *os << f.name; }

class SnapshotStoreConformance : public ::testing::TestWithParam<SnapshotStoreFactory> {
 protected:
  void SetUp() override {
    if (GetParam().unavailable) {
      std::string why = GetParam().unavailable();
      if (!why.empty()) GTEST_SKIP() << why;
    }
    store_ = GetParam().make(scratch_.path());
  }
  void TearDown() override { store_.reset(); }
  SnapshotStore& store() { return *store_; }
  const fs::path& dir() const { return scratch_.path(); }

 private:
  TempDir scratch_;  // declared first: outlives the store
  std::unique_ptr<SnapshotStore> store_;
};

Snapshot snap(const std::string& id, int64_t seq, json::value state) {
  return Snapshot{id, seq, std::move(state)};
}

TEST_P(SnapshotStoreConformance, LatestIsTheHighestSeq) {
  EXPECT_FALSE(store().latest("e1").has_value());
  store().put(snap("e1", 4, json::object{{"n", 4}}));
  store().put(snap("e1", 9, json::object{{"n", 9}}));
  store().put(snap("e1", 2, json::object{{"n", 2}}));
  store().put(snap("e2", 20, json::object{{"n", 20}}));
  auto latest = store().latest("e1");
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->executionId, "e1");
  EXPECT_EQ(latest->seq, 9);
  EXPECT_EQ(json::toText(latest->state), R"({"n":9})");
  EXPECT_FALSE(store().latest("e3").has_value());
}

TEST_P(SnapshotStoreConformance, PutOfAnExistingSeqReplacesIt) {
  store().put(snap("e1", 3, "old"));
  store().put(snap("e1", 3, "new"));
  EXPECT_EQ(store().latest("e1")->state, json::value("new"));
  int64_t count = 0;
  store().forEach([&](const Snapshot&) { ++count; });
  EXPECT_EQ(count, 1);
}

TEST_P(SnapshotStoreConformance, StatesRoundTripExactly) {
  json::object state{{"text", "naïve café ✓ 日本語 🧵"},
                     {"big", std::string(3 * 1024 * 1024, 'x')},
                     {"nested", json::array{nullptr, true, 1.5, -7, json::object{{"k", "v"}}}},
                     {"ref", json::object{{"__loomContent", std::string(64, 'a')}}}};
  store().put(snap("e1", 1, state));
  EXPECT_EQ(json::toText(store().latest("e1")->state), json::toText(state));
}

TEST_P(SnapshotStoreConformance, ValuesAreCopiedInAndOut) {
  Snapshot s = snap("e1", 1, json::object{{"n", 1}});
  store().put(s);
  s.state.as_object()["n"] = 2;
  auto out = store().latest("e1");
  out->state.as_object()["n"] = 3;
  EXPECT_EQ(store().latest("e1")->state.at("n").as_int64(), 1);
}

TEST_P(SnapshotStoreConformance, RemoveDeletesOneExecutionsSnapshots) {
  store().put(snap("e1", 1, 1));
  store().put(snap("e1", 2, 2));
  store().put(snap("e2", 1, 1));
  EXPECT_EQ(store().remove("e1"), 2);
  EXPECT_EQ(store().remove("e1"), 0);
  EXPECT_FALSE(store().latest("e1").has_value());
  EXPECT_TRUE(store().latest("e2").has_value());
}

TEST_P(SnapshotStoreConformance, PruneKeepsSnapshotsFromTheGivenSeq) {
  for (int64_t seq : {3, 6, 9, 12}) store().put(snap("e1", seq, seq));
  store().put(snap("e2", 1, 1));
  EXPECT_EQ(store().prune("e1", 9), 2);
  EXPECT_EQ(store().prune("e1", 9), 0);
  EXPECT_EQ(store().prune("nobody", 9), 0);
  std::set<int64_t> left;
  store().forEach([&](const Snapshot& s) {
    if (s.executionId == "e1") left.insert(s.seq);
  });
  EXPECT_EQ(left, (std::set<int64_t>{9, 12}));
  EXPECT_EQ(store().latest("e2")->seq, 1);
}

TEST_P(SnapshotStoreConformance, ForEachVisitsEverySnapshotAndMayCallBack) {
  std::set<std::pair<std::string, int64_t>> expected;
  for (int i = 0; i < 150; ++i) {  // more than one chunk of any implementation
    std::string id = "e" + std::to_string(i % 17);
    store().put(snap(id, i + 1, json::object{{"i", i}}));
    expected.insert({id, i + 1});
  }
  std::set<std::pair<std::string, int64_t>> seen;
  store().forEach([&](const Snapshot& s) {
    EXPECT_EQ(s.state.at("i").as_int64(), s.seq - 1);
    EXPECT_TRUE(store().latest(s.executionId).has_value());  // a call back into the store
    seen.insert({s.executionId, s.seq});
  });
  EXPECT_EQ(seen, expected);
}

TEST_P(SnapshotStoreConformance, BadKeysAreRefused) {
  EXPECT_THROW(store().put(snap("", 1, 1)), InvalidArgumentError);
  EXPECT_THROW(store().put(snap("e1", 0, 1)), InvalidArgumentError);
  EXPECT_FALSE(store().latest("e1").has_value());
}

TEST_P(SnapshotStoreConformance, ConcurrentPutsAndReadsAreSafe) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::string id = "e" + std::to_string(t);
      for (int64_t seq = 1; seq <= 40; ++seq) {
        store().put(snap(id, seq, json::object{{"seq", seq}}));
        auto latest = store().latest(id);
        ASSERT_TRUE(latest.has_value());
        EXPECT_EQ(latest->seq, seq);
        if (seq % 10 == 0) store().prune(id, seq);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(store().latest("e" + std::to_string(t))->seq, 40);
}

TEST_P(SnapshotStoreConformance, ACorruptStateIsDataLossNamingExecutionAndSeq) {
  if (!GetParam().corrupt) GTEST_SKIP() << GetParam().name << " keeps values, not texts";
  store().put(snap("e-bad", 7, json::object{{"ok", true}}));
  GetParam().corrupt(dir(), "e-bad", 7);
  for (auto call : {std::function<void()>([&] { store().latest("e-bad"); }),
                    std::function<void()>([&] { store().forEach([](const Snapshot&) {}); })}) {
    try {
      call();
      ADD_FAILURE() << "a corrupt state was read without an error";
    } catch (const DataLossError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("e-bad"), std::string::npos) << what;
      EXPECT_NE(what.find("seq 7"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(store().remove("e-bad"), 1);  // and it can be removed
}

SnapshotStoreFactory memory() {
  return {"Memory",
          [](const fs::path&) -> std::unique_ptr<SnapshotStore> {
            return std::make_unique<MemorySnapshotStore>();
          },
          {}};
}

void corruptSqlite(const fs::path& dir, const std::string& id, int64_t seq) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "loom.db").c_str(), &db), SQLITE_OK);
  std::string sql = "UPDATE snapshots SET state = '{\"ok\": tru' WHERE execution_id = '" + id +
                    "' AND seq = " + std::to_string(seq);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

SnapshotStoreFactory sqlite() {
  return {"Sqlite",
          [](const fs::path& dir) -> std::unique_ptr<SnapshotStore> {
            return std::make_unique<SqliteSnapshotStore>(
                SqliteSnapshotStoreOptions{(dir / "loom.db").string()});
          },
          corruptSqlite};
}

// A schema of its own per test on the test cluster (support/postgres_server.h).
postgres::PostgresOptions postgresOptions(const fs::path& dir) {
  return {loom::testing::testPostgresUrl(), loom::testing::testSchemaFor(dir)};
}

void corruptPostgres(const fs::path& dir, const std::string& id, int64_t seq) {
  auto options = postgresOptions(dir);
  postgres::Connection(options.url, options.schema)
      .execDynamic(
          "UPDATE snapshots SET state = convert_to('{\"ok\": tru', 'UTF8') "
          "WHERE execution_id = $1 AND seq = $2",
          {postgres::Param::text(id), postgres::Param::int64(seq)}, "corrupt");
}

SnapshotStoreFactory postgresStore() {
  return {"Postgres",
          [](const fs::path& dir) -> std::unique_ptr<SnapshotStore> {
            postgres::migrate(postgresOptions(dir));
            return std::make_unique<postgres::PostgresSnapshotStore>(postgresOptions(dir));
          },
          corruptPostgres, &loom::testing::postgresUnavailable};
}

INSTANTIATE_TEST_SUITE_P(Stores, SnapshotStoreConformance,
                         ::testing::Values(memory(), sqlite(), postgresStore()),
                         [](const auto& info) { return info.param.name; });

TEST(SqliteSnapshotStoreTest, SharesLoomDbWithTheEventStoreAndSurvivesReopen) {
  TempDir scratch;
  std::string path = (scratch.path() / "loom.db").string();
  {
    SqliteSnapshotStore snapshots(SqliteSnapshotStoreOptions{path});  // first, on a new file
    SqliteEventStore events(SqliteEventStoreOptions{path});
    events.append("e1", 1, {executionStarted("wf", json::object{}, std::nullopt, 1000)});
    snapshots.put(snap("e1", 1, json::object{{"workflow", "wf"}}));
    EXPECT_EQ(events.info("e1")->nextSeq, 2);
  }
  SqliteSnapshotStore reopened(SqliteSnapshotStoreOptions{path});
  SqliteEventStore events(SqliteEventStoreOptions{path});  // its schema check still passes
  auto latest = reopened.latest("e1");
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->state.at("workflow").as_string(), "wf");
  EXPECT_EQ(events.read("e1").size(), 1u);
}

TEST(SqliteSnapshotStoreTest, RefusesAnInMemoryPath) {
  EXPECT_THROW(SqliteSnapshotStore(SqliteSnapshotStoreOptions{":memory:"}), InvalidArgumentError);
  EXPECT_THROW(SqliteSnapshotStore(SqliteSnapshotStoreOptions{""}), InvalidArgumentError);
}

}  // namespace
}  // namespace loom::kernel::snapshot_conformance

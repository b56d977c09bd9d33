// The kill switch conformance suite: middleware::KillSwitchStore over every KillSwitchRows
// implementation (the home's SQLite database, a PostgreSQL schema), as an operator and the
// processes running effects see it: stops and lifts, persistence, a stop written by another
// process seen within the refresh window, and an unreadable switch failing closed. Adding an
// implementation is one factory in the list at the bottom.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <functional>
#include <memory>

#include "loom/middleware/kill_switch_store.h"
#include "loom/postgres/postgres_kill_switch.h"
#include "postgres/pg_connection.h"
#include "support/postgres_server.h"
#include "support/temp_dir.h"

namespace loom::middleware::conformance {
namespace {

namespace fs = std::filesystem;
using loom::testing::TempDir;

struct KillSwitchFactory {
  std::string name;
  // Opens a store over the rows kept under `dir` (a second call: another process's view).
  std::function<std::unique_ptr<KillSwitchStore>(const fs::path& dir,
                                                 std::shared_ptr<const Clock> clock)>
      open;
  // Makes the rows under `dir` unreadable (drops the table).
  std::function<void(const fs::path& dir)> breakRows;
  std::function<std::string()> unavailable;
};

void PrintTo(const KillSwitchFactory& f, std::ostream* os) { *os << f.name; }

class KillSwitchConformance : public ::testing::TestWithParam<KillSwitchFactory> {
 protected:
  void SetUp() override {
    if (GetParam().unavailable) {
      std::string why = GetParam().unavailable();
      if (!why.empty()) GTEST_SKIP() << why;
    }
  }
  std::unique_ptr<KillSwitchStore> open() { return GetParam().open(dir_.path(), clock_); }
  ManualClock& clock() { return *clock_; }
  const fs::path& dir() const { return dir_.path(); }

 private:
  TempDir dir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1000);
};

TEST_P(KillSwitchConformance, KillUnkillAndList) {
  auto store = open();
  EXPECT_FALSE(store->isStopped("fetch"));
  store->kill("fetch");
  clock().advance(5);
  store->kill("fetch");  // a second kill keeps the first `at`
  store->kill("search");
  EXPECT_TRUE(store->isStopped("fetch"));
  EXPECT_FALSE(store->isStopped("other"));
  auto entries = store->list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].effectId, "fetch");
  EXPECT_EQ(entries[0].atMillis, 1000);
  EXPECT_TRUE(store->unkill("fetch"));
  EXPECT_FALSE(store->unkill("fetch"));
  EXPECT_FALSE(store->isStopped("fetch"));

  store->killAll();
  EXPECT_TRUE(store->isStopped("anything"));
  EXPECT_FALSE(store->unkill("anything"));  // unkill of a name does not lift killAll
  EXPECT_TRUE(store->isStopped("anything"));
  EXPECT_EQ(store->list().front().effectId, "*");
  EXPECT_EQ(store->unkillAll(), 2);  // "*" and "search"
  EXPECT_FALSE(store->isStopped("anything"));
  EXPECT_FALSE(store->isStopped("search"));
  EXPECT_TRUE(store->list().empty());

  EXPECT_THROW(store->kill(""), InvalidArgumentError);
  EXPECT_THROW(store->kill("*"), InvalidArgumentError);
  EXPECT_THROW(store->unkill("*"), InvalidArgumentError);
}

TEST_P(KillSwitchConformance, StopsPersistAcrossReopen) {
  open()->kill("fetch");
  EXPECT_TRUE(open()->isStopped("fetch"));
}

// Two stores on one set of rows stand for two processes (or machines).
TEST_P(KillSwitchConformance, AnotherProcessSeesAKillWithinTheRefreshWindow) {
  auto worker = open();
  auto operatorCli = open();
  EXPECT_FALSE(worker->isStopped("fetch"));  // loads the (empty) set at t0

  operatorCli->kill("fetch");
  clock().advance(kKillSwitchRefreshMillis - 1);
  EXPECT_FALSE(worker->isStopped("fetch"));  // still the cached copy: the rows not re-read
  clock().advance(1);
  EXPECT_TRUE(worker->isStopped("fetch"));  // seen 250 ms after the kill, well within 1 s

  operatorCli->unkillAll();
  clock().advance(kKillSwitchRefreshMillis);
  EXPECT_FALSE(worker->isStopped("fetch"));
}

TEST_P(KillSwitchConformance, AnUnreadableSwitchFailsClosed) {
  auto store = open();
  EXPECT_FALSE(store->isStopped("fetch"));
  GetParam().breakRows(dir());
  clock().advance(kKillSwitchRefreshMillis);
  try {
    store->isStopped("fetch");
    FAIL() << "expected KillSwitchUnreadable";
  } catch (const KillSwitchUnreadable& e) {
    EXPECT_EQ(e.code(), ErrorCode::kStopped);
    EXPECT_NE(std::string(e.what()).find("fetch"), std::string::npos);
  }
}

KillSwitchFactory sqlite() {
  return {"Sqlite",
          [](const fs::path& dir, std::shared_ptr<const Clock> clock) {
            KillSwitchOptions o;
            o.path = (dir / "loom.db").string();
            o.clock = std::move(clock);
            return std::make_unique<KillSwitchStore>(std::move(o));
          },
          [](const fs::path& dir) {
            sqlite3* raw = nullptr;
            ASSERT_EQ(sqlite3_open((dir / "loom.db").c_str(), &raw), SQLITE_OK);
            ASSERT_EQ(sqlite3_exec(raw, "DROP TABLE kill_switch", nullptr, nullptr, nullptr),
                      SQLITE_OK);
            sqlite3_close(raw);
          },
          {}};
}

postgres::PostgresOptions postgresOptions(const fs::path& dir) {
  return {loom::testing::testPostgresUrl(), loom::testing::testSchemaFor(dir)};
}

KillSwitchFactory postgresRows() {
  return {"Postgres",
          [](const fs::path& dir, std::shared_ptr<const Clock> clock) {
            postgres::migrate(postgresOptions(dir));
            KillSwitchOptions o;
            o.clock = std::move(clock);
            return std::make_unique<KillSwitchStore>(
                std::make_unique<postgres::PostgresKillSwitchRows>(postgresOptions(dir)),
                std::move(o));
          },
          [](const fs::path& dir) {
            auto o = postgresOptions(dir);
            postgres::Connection(o.url, o.schema).run("DROP TABLE kill_switch", "test");
          },
          &loom::testing::postgresUnavailable};
}

INSTANTIATE_TEST_SUITE_P(Stores, KillSwitchConformance, ::testing::Values(sqlite(), postgresRows()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace loom::middleware::conformance

// Tests only the SQLite EventStore needs beyond the conformance suite: reopening a file,
// corrupt rows, schema versions, lock and file errors, group commit, and conflicts between
// two stores (and two processes) sharing one file.
#include "loom/kernel/sqlite_event_store.h"

#include <gmock/gmock.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <set>
#include <thread>

#include "event_store_conformance.h"
#include "loom/content/sqlite_content_store.h"
#include "loom/kernel/version.h"
#include "loom/util/error.h"
#include "util/sqlite_db.h"

namespace loom::kernel::conformance {
namespace {

using ::testing::HasSubstr;

// Runs `sql` on its own raw connection, binding `params` as text (?1, ?2, ...).
void rawExec(const std::string& path, const std::string& sql,
             const std::vector<std::string>& params = {}) {
  sqlite3* db = nullptr;
  ASSERT_EQ(SQLITE_OK, sqlite3_open(path.c_str(), &db));
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr))
      << sqlite3_errmsg(db);
  for (std::size_t i = 0; i < params.size(); ++i) {
    sqlite3_bind_text(stmt, static_cast<int>(i) + 1, params[i].c_str(), -1, SQLITE_TRANSIENT);
  }
  EXPECT_EQ(SQLITE_DONE, sqlite3_step(stmt)) << sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

// The single integer `sql` selects, read on its own raw connection.
int64_t rawInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t value = -1;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
      sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    value = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

class SqliteEventStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<SqliteEventStore> open(Durability durability = Durability::kFull,
                                         int busyTimeoutMillis = 5000) {
    return std::make_unique<SqliteEventStore>(
        SqliteEventStoreOptions{path_, durability, busyTimeoutMillis});
  }

  TempDir dir_;
  std::string path_ = (dir_.path() / "events.db").string();
};

TEST_F(SqliteEventStoreTest, DurabilityNames) {
  EXPECT_EQ(Durability::kFull, durabilityFromName("full"));
  EXPECT_EQ(Durability::kNormal, durabilityFromName("normal"));
  EXPECT_EQ("normal", durabilityName(Durability::kNormal));
  try {
    durabilityFromName("FULL!");
    FAIL() << "accepted an unknown durability";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("FULL!"));
    EXPECT_THAT(e.what(), HasSubstr("\"full\""));
    EXPECT_THAT(e.what(), HasSubstr("\"normal\""));
  }
}

TEST_F(SqliteEventStoreTest, RefusesAPathThatIsNotAFile) {
  EXPECT_THROW(SqliteEventStore(SqliteEventStoreOptions{""}), InvalidArgumentError);
  EXPECT_THROW(SqliteEventStore(SqliteEventStoreOptions{":memory:"}), InvalidArgumentError);
}

TEST_F(SqliteEventStoreTest, ReopenReadsEverythingBack) {
  std::vector<Event> log{started("wf", "alice"), step("a", json::object{{"k", "✓"}}),
                         executionCompleted("done", kT0 + 9)};
  std::vector<ExecutionInfo> before;
  {
    auto store = open();
    store->append("e1", 1, log);
    store->append("e2", 1, {started("other")});
    store->appendControl(1, {ControlEvent{0, "RETENTION_RUN", kT0, json::object{{"n", 1}}}});
    before = store->list({});
  }
  auto store = open();
  auto events = store->read("e1");
  ASSERT_EQ(3u, events.size());
  for (std::size_t i = 0; i < log.size(); ++i) {
    log[i].seq = static_cast<int64_t>(i) + 1;
    expectSameEvent(log[i], events[i]);
  }
  auto after = store->list({});
  ASSERT_EQ(before.size(), after.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i].id, after[i].id);
    EXPECT_EQ(before[i].workflow, after[i].workflow);
    EXPECT_EQ(before[i].subject, after[i].subject);
    EXPECT_EQ(before[i].status, after[i].status);
    EXPECT_EQ(before[i].endedAtMillis, after[i].endedAtMillis);
    EXPECT_EQ(before[i].logBytes, after[i].logBytes);
    EXPECT_EQ(before[i].stateBytes, after[i].stateBytes);
    EXPECT_EQ(before[i].sizes.headerBytes, after[i].sizes.headerBytes);
    EXPECT_EQ(before[i].sizes.stepsBytes, after[i].sizes.stepsBytes);
  }
  ASSERT_EQ(1u, store->readControl().size());
  EXPECT_EQ("RETENTION_RUN", store->readControl()[0].type);
  // Appending continues where the log ended, and the sizes keep adding up after reopening.
  EXPECT_THROW(store->append("e2", 1, {started()}), ConflictError);
  EXPECT_EQ(3, store->append("e2", 2, {step("x", 1)}));
  EXPECT_EQ(3, store->appendControl(2, {ControlEvent{0, "RETENTION_RUN", kT0, {}}}));
}

TEST_F(SqliteEventStoreTest, CorruptRowsNameTheExecutionAndSeq) {
  const std::vector<std::pair<std::string, std::string>> bodies{
      {"garbage", "{not json at all"},
      {"unknown type", R"({"seq":2,"type":"STEP_EXPLODED","at":"2026-05-28T00:00:00.000Z"})"},
      {"missing field", R"({"seq":2,"type":"STEP_COMPLETED","at":"2026-05-28T00:00:00.000Z",)"
                        R"("stepId":"a","taskKind":"tool","effectId":"t"})"},
      {"wrong seq", R"({"seq":7,"type":"SIGNAL_RECEIVED","at":"2026-05-28T00:00:00.000Z",)"
                    R"("name":"n","payload":null})"},
      {"not an object", "[1,2,3]"},
  };
  for (const auto& [what, body] : bodies) {
    SCOPED_TRACE(what);
    std::string id = "e-" + what;
    {
      auto store = open();
      store->append(id, 1, {started(), step("a"), step("b")});
    }
    rawExec(path_, "UPDATE events SET body = ?1 WHERE execution_id = ?2 AND seq = 2", {body, id});
    auto store = open();
    try {
      store->read(id);
      ADD_FAILURE() << "read a corrupt row";
    } catch (const CorruptEventError& e) {
      EXPECT_EQ(id, e.executionId());
      EXPECT_EQ(2, e.seq());
      EXPECT_EQ(ErrorCode::kDataLoss, e.code());
    }
    int visited = 0;
    EXPECT_THROW(store->scan(id, 1, [&](const Event&) { ++visited; }), CorruptEventError);
    EXPECT_EQ(1, visited);  // the row before it, then the error: never skipped silently
    EXPECT_EQ(1u, store->read(id, 3).size());
    EXPECT_TRUE(store->info(id));
  }
}

TEST_F(SqliteEventStoreTest, CorruptControlRowNamesItsSeq) {
  {
    auto store = open();
    store->appendControl(
        1, {ControlEvent{0, "RETENTION_RUN", kT0, {}}, ControlEvent{0, "RETENTION_RUN", kT0, {}}});
  }
  rawExec(path_,
          R"(UPDATE control SET body = '{"seq":2,"type":"NOPE","at":"2026-05-28T00:00:00.000Z"}')"
          " WHERE seq = 2");
  auto store = open();
  try {
    store->readControl();
    FAIL() << "read a corrupt control row";
  } catch (const CorruptEventError& e) {
    EXPECT_EQ(2, e.seq());
  }
  EXPECT_THROW(store->readControl(2), CorruptEventError);
  EXPECT_TRUE(store->readControl(3).empty());
  EXPECT_EQ(4, store->appendControl(3, {ControlEvent{0, "RETENTION_RUN", kT0, {}}}));
}

TEST_F(SqliteEventStoreTest, RefusesADatabaseWrittenUnderANewerSchema) {
  { open()->append("e1", 1, {started()}); }
  const std::string newer = std::to_string(EVENT_SCHEMA + 1);
  rawExec(path_, "UPDATE meta SET value = ?1 WHERE key = 'event_schema'", {newer});
  try {
    open();
    FAIL() << "opened a database of a newer EVENT_SCHEMA";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("EVENT_SCHEMA " + newer));
    EXPECT_THAT(e.what(), HasSubstr(std::to_string(EVENT_SCHEMA)));
    EXPECT_THAT(e.what(), HasSubstr(path_));
  }
  // Still refused: the failed open changed nothing.
  EXPECT_THROW(open(), FailedPreconditionError);
  rawExec(path_, "UPDATE meta SET value = ?1 WHERE key = 'event_schema'",
          {std::to_string(EVENT_SCHEMA)});
  EXPECT_EQ(1u, open()->read("e1").size());
}

TEST_F(SqliteEventStoreTest, AFileThatIsNotADatabaseIsDataLoss) {
  std::ofstream(path_) << "this is not an SQLite database, but it is long enough to be read "
                          "as a header of one: "
                       << std::string(200, 'x');
  try {
    open();
    FAIL() << "opened a text file";
  } catch (const DataLossError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path_));
  }
}

TEST_F(SqliteEventStoreTest, ALockedDatabaseIsUnavailableAndReadsStillWork) {
  auto store = open(Durability::kFull, /*busyTimeoutMillis=*/50);
  store->append("e1", 1, {started()});
  sqlite3* other = nullptr;
  ASSERT_EQ(SQLITE_OK, sqlite3_open(path_.c_str(), &other));
  ASSERT_EQ(SQLITE_OK, sqlite3_exec(other,
                                    "BEGIN IMMEDIATE; INSERT INTO control (seq, body) "
                                    "VALUES (99, 'uncommitted')",
                                    nullptr, nullptr, nullptr));
  try {
    store->append("e1", 2, {step("a")});
    ADD_FAILURE() << "appended past another writer's lock";
  } catch (const UnavailableError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path_));
  }
  // Readers do not wait for the writer (WAL), and see only committed rows.
  EXPECT_EQ(2, store->info("e1")->nextSeq);
  EXPECT_EQ(1u, store->read("e1").size());
  EXPECT_TRUE(store->readControl().empty());
  ASSERT_EQ(SQLITE_OK, sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr));
  sqlite3_close(other);
  EXPECT_EQ(3, store->append("e1", 2, {step("a")}));
}

TEST_F(SqliteEventStoreTest, GroupCommitMergesConcurrentAppends) {
  constexpr int kThreads = 32;
  constexpr int kAppends = 50;
  int64_t commits = 0;
  {
    auto store = open(Durability::kFull);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::string id = "exec-" + std::to_string(t);
        try {
          int64_t next = store->append(id, 1, {started()});
          for (int i = 1; i < kAppends; ++i) {
            next = store->append(id, next, {step("s" + std::to_string(i), i)});
          }
        } catch (const std::exception& e) {
          ADD_FAILURE() << id << ": " << e.what();
          failures++;
        }
      });
    }
    for (auto& t : threads) t.join();
    ASSERT_EQ(0, failures.load());
    commits = store->commits();
  }
  RecordProperty("commits", std::to_string(commits));
  EXPECT_GT(commits, 0);
  EXPECT_LT(commits, kThreads * kAppends) << "no append was merged with another";
  auto store = open();
  ASSERT_EQ(static_cast<std::size_t>(kThreads), store->list({}).size());
  for (int t = 0; t < kThreads; ++t) {
    std::string id = "exec-" + std::to_string(t);
    auto events = store->read(id);
    ASSERT_EQ(static_cast<std::size_t>(kAppends), events.size()) << id;
    expectContiguous(events);
    EXPECT_EQ(kAppends + 1, store->info(id)->nextSeq);
  }
}

TEST_F(SqliteEventStoreTest, ABadRequestDoesNotFailItsGroup) {
  constexpr int kThreads = 16;
  constexpr int kRounds = 20;
  auto store = open(Durability::kFull);
  std::atomic<int> unexpected{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string id = "exec-" + std::to_string(t);
      int64_t next = store->append(id, 1, {started()});
      for (int i = 0; i < kRounds; ++i) {
        try {
          if (t % 3 == 1) {  // invalid: a step without output
            Event bad = step("bad");
            bad.data.erase("output");
            store->append(id, next, {bad});
            unexpected++;
          } else if (t % 3 == 2) {  // stale
            store->append(id, next - 1, {step("stale")});
            unexpected++;
          }
        } catch (const InvalidArgumentError&) {
          if (t % 3 != 1) unexpected++;
        } catch (const ConflictError&) {
          if (t % 3 != 2) unexpected++;
        }
        next = store->append(id, next, {step("good" + std::to_string(i))});
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(0, unexpected.load());
  for (int t = 0; t < kThreads; ++t) {
    auto events = store->read("exec-" + std::to_string(t));
    ASSERT_EQ(static_cast<std::size_t>(kRounds) + 1, events.size());
    expectContiguous(events);
  }
}

TEST_F(SqliteEventStoreTest, TwoStoresOnOneFileDetectConflicts) {
  auto a = open();
  auto b = open();
  a->append("e1", 1, {started()});
  EXPECT_EQ(2, b->info("e1")->nextSeq);
  EXPECT_THROW(b->append("e1", 1, {started()}), ConflictError);
  constexpr int kRounds = 30;
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<int> wins{0};
    std::atomic<int> conflicts{0};
    auto race = [&](SqliteEventStore& store, const char* who) {
      try {
        store.append("e1", round + 2, {step(std::string(who) + std::to_string(round))});
        wins++;
      } catch (const ConflictError&) {
        conflicts++;
      }
    };
    std::thread ta([&] { race(*a, "a"); });
    std::thread tb([&] { race(*b, "b"); });
    ta.join();
    tb.join();
    ASSERT_EQ(1, wins.load()) << "round " << round;
    ASSERT_EQ(1, conflicts.load()) << "round " << round;
  }
  auto events = a->read("e1");
  ASSERT_EQ(static_cast<std::size_t>(kRounds) + 1, events.size());
  expectContiguous(events);
  EXPECT_EQ(kRounds + 2, b->info("e1")->nextSeq);
}

// A fenced append reads the lease only when another connection wrote since it was last proven
// (PRAGMA data_version), so a takeover through another store (another process) or a lease row
// changed by another program must still fence the very next append.
TEST_F(SqliteEventStoreTest, ATakeoverThroughAnotherConnectionFencesTheNextAppend) {
  auto a = open();
  auto b = open();
  const LeaseOwner ownerA{"a", "host-a", 101}, ownerB{"b", "host-b", 202};
  Lease la = a->acquireLease({"e1", ownerA, 60'000, std::nullopt});
  EXPECT_EQ(2, a->appendLeased(la, 1, {started()}));
  EXPECT_EQ(3, a->appendLeased(la, 2, {step("s1")}));  // the lease is proven now
  Lease lb = b->acquireLease({"e1", ownerB, 60'000, la.token});
  EXPECT_THROW(a->appendLeased(la, 3, {step("s2")}), LeaseLostError);
  EXPECT_EQ(4, b->appendLeased(lb, 3, {step("s2")}));
  EXPECT_EQ(5, b->appendLeased(lb, 4, {step("s3")}));
  rawExec(path_, "UPDATE leases SET released = 1 WHERE execution_id = 'e1'");
  EXPECT_THROW(b->appendLeased(lb, 5, {step("s4")}), LeaseLostError);
  EXPECT_EQ(5, a->info("e1")->nextSeq) << "a refused append wrote something";
}

// Appends `count` steps to `id`, re-reading the next seq after each ConflictError. Returns
// the conflicts seen.
int appendWithRetry(SqliteEventStore& store, const std::string& id, const std::string& prefix,
                    int count) {
  int conflicts = 0;
  for (int i = 0; i < count;) {
    try {
      store.append(id, store.info(id)->nextSeq, {step(prefix + std::to_string(i))});
      ++i;
    } catch (const ConflictError&) {
      ++conflicts;
    }
  }
  return conflicts;
}

TEST_F(SqliteEventStoreTest, TwoProcessesOnOneFileNeverLoseOrDuplicateAnAppend) {
  constexpr int kEach = 200;
  { open()->append("shared", 1, {started()}); }
  pid_t child = fork();
  ASSERT_NE(-1, child);
  if (child == 0) {
    int code = 0;
    try {
      appendWithRetry(*open(), "shared", "child-", kEach);
    } catch (const std::exception&) {
      code = 1;
    }
    _exit(code);  // no gtest teardown in the child
  }
  appendWithRetry(*open(), "shared", "parent-", kEach);
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(0, WEXITSTATUS(status));
  auto store = open();
  auto events = store->read("shared");
  ASSERT_EQ(static_cast<std::size_t>(2 * kEach) + 1, events.size());
  expectContiguous(events);
  std::set<std::string> ids;
  for (std::size_t i = 1; i < events.size(); ++i) {
    ids.insert(std::string(events[i].data.at("stepId").get_string()));
  }
  EXPECT_EQ(static_cast<std::size_t>(2 * kEach), ids.size());
  EXPECT_EQ(2 * kEach, store->info("shared")->steps);
}

// The writer lent to the blobs packed in the log's file (ADR 0017): a lent write is committed
// by one of the store's groups before run returns; a write that throws leaves nothing and the
// store goes on; once the store is gone the borrower is told to write on its own.
TEST_F(SqliteEventStoreTest, ALentWriterCommitsInTheStoresGroupsUntilTheStoreCloses) {
  auto store = open(Durability::kFull);
  rawExec(path_, "CREATE TABLE side (x INTEGER)");
  std::shared_ptr<sqlite::BorrowedWriter> lent = store->lendWriter();
  EXPECT_EQ(path_, lent->path());
  EXPECT_EQ(lent, store->lendWriter());
  // What the writer frees is zeroed (ADR 0014's deletes leave no copy), whatever SQLite's
  // compile-time default.
  int64_t secureDelete = -1;
  EXPECT_TRUE(lent->run([&](sqlite::Db& db) {
    sqlite::StatementUse pragma(db.prepare("PRAGMA secure_delete"));
    ASSERT_TRUE(pragma->step("read secure_delete"));
    secureDelete = pragma->int64(0);
  }));
  EXPECT_EQ(1, secureDelete);
  EXPECT_THROW(lent->run([&](sqlite::Db&) { lent->run([](sqlite::Db&) {}); }), InternalError)
      << "a nested run would wait for the group that runs it";
  int64_t commits = store->commits();
  EXPECT_TRUE(lent->run([](sqlite::Db& db) { db.exec("INSERT INTO side VALUES (1)", "insert"); }));
  EXPECT_EQ(commits + 1, store->commits());
  EXPECT_EQ(1, rawInt(path_, "SELECT count(*) FROM side")) << "not committed when run returned";

  EXPECT_THROW(lent->run([](sqlite::Db& db) {
    db.exec("INSERT INTO side VALUES (2)", "insert");
    throw UnavailableError("the borrower failed");
  }),
               UnavailableError);
  EXPECT_EQ(1, rawInt(path_, "SELECT count(*) FROM side")) << "a failed write left its row";
  EXPECT_EQ(2, store->append("e", 1, {started()}));

  store.reset();
  bool ran = false;
  EXPECT_FALSE(lent->run([&](sqlite::Db&) { ran = true; }));
  EXPECT_FALSE(ran);
}

// Lent writes and appends from many threads all land, in fewer commits than requests.
TEST_F(SqliteEventStoreTest, LentWritesAndAppendsFromManyThreadsAllLandInMergedGroups) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;
  auto store = open(Durability::kFull);
  rawExec(path_, "CREATE TABLE side (thread INTEGER, round INTEGER)");
  auto lent = store->lendWriter();
  int64_t before = store->commits();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string id = "exec-" + std::to_string(t);
      int64_t next = store->append(id, 1, {started()});
      for (int i = 0; i < kRounds; ++i) {
        lent->run([&](sqlite::Db& db) {
          std::string sql =
              "INSERT INTO side VALUES (" + std::to_string(t) + ", " + std::to_string(i) + ")";
          db.exec(sql.c_str(), "insert");
        });
        next = store->append(id, next, {step("s" + std::to_string(i))});
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(kThreads * kRounds, rawInt(path_, "SELECT count(*) FROM side"));
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(static_cast<std::size_t>(kRounds) + 1,
              store->read("exec-" + std::to_string(t)).size());
  }
  EXPECT_LT(store->commits() - before, kThreads * (2 * kRounds + 1));
}

// A staged write (ADR 0019) waits for the next group and commits in it, before its appends.
TEST_F(SqliteEventStoreTest, AStagedWriteCommitsWithTheNextAppend) {
  auto store = open(Durability::kFull);
  rawExec(path_, "CREATE TABLE side (k TEXT)");
  auto lent = store->lendWriter();
  int calls = 0;
  std::exception_ptr outcome;
  EXPECT_TRUE(lent->stage(
      "k1", [](sqlite::Db& db) { db.exec("INSERT INTO side VALUES ('k1')", "insert"); },
      [&](std::exception_ptr error) {
        ++calls;
        outcome = error;
      }));
  EXPECT_EQ(0, rawInt(path_, "SELECT count(*) FROM side")) << "written before anything commits";
  EXPECT_EQ(0, calls);
  int64_t commits = store->commits();
  EXPECT_EQ(2, store->append("e", 1, {started()}));
  EXPECT_EQ(commits + 1, store->commits()) << "the write and the append share one commit";
  EXPECT_EQ(1, rawInt(path_, "SELECT count(*) FROM side"));
  EXPECT_EQ(1, calls);
  EXPECT_FALSE(outcome);
}

// An append that cites a lost staged write fails with its error, and so does every later one,
// until a staged write of the key commits; appends that do not cite it go on.
TEST_F(SqliteEventStoreTest, AnAppendCitingALostStagedWriteFailsUntilTheKeyIsWritten) {
  auto store = open(Durability::kFull);
  rawExec(path_, "CREATE TABLE side (k TEXT)");
  auto lent = store->lendWriter();
  const std::string key = std::string(64, 'a');
  std::exception_ptr outcome;
  auto failing = [](sqlite::Db& db) {
    db.exec("INSERT INTO side VALUES ('half')", "insert");
    throw UnavailableError("the disk is full");
  };
  ASSERT_TRUE(lent->stage(key, failing, [&](std::exception_ptr e) { outcome = e; }));
  int64_t next = store->append("e", 1, {started()});  // cites nothing: commits
  EXPECT_TRUE(outcome) << "the write's caller hears it was lost";
  EXPECT_EQ(0, rawInt(path_, "SELECT count(*) FROM side")) << "a lost write left its row";
  try {
    store->append("e", next, {step("s1", json::value{{"ref", key}})});
    ADD_FAILURE() << "an append cited a lost write";
  } catch (const ContentStoreUnavailableError& e) {  // not the run's failure: resumable
    std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("'e'"));
    EXPECT_THAT(what, HasSubstr(key));
    EXPECT_THAT(what, HasSubstr("the disk is full"));
  }
  EXPECT_EQ(next, store->info("e")->nextSeq) << "the citing append wrote nothing";
  next = store->append("e", next, {step("s0", json::value{{"ref", "another"}})});

  // Lost in the citing append's own group: staged first, so the append sees it lost.
  const std::string other = std::string(64, 'c');
  std::exception_ptr otherOutcome;
  ASSERT_TRUE(lent->stage(other, failing, [&](std::exception_ptr e) { otherOutcome = e; }));
  EXPECT_THROW(store->append("e", next, {step("s2", json::value{{"ref", other}})}),
               ContentStoreUnavailableError);
  EXPECT_TRUE(otherOutcome);

  ASSERT_TRUE(lent->stage(
      key, [](sqlite::Db& db) { db.exec("INSERT INTO side VALUES ('whole')", "insert"); },
      nullptr));
  EXPECT_EQ(next + 1, store->append("e", next, {step("s1", json::value{{"ref", key}})}));
  EXPECT_EQ(1, rawInt(path_, "SELECT count(*) FROM side"));
}

// A group that fails for a reason of its own (here its BEGIN, the file locked by another
// connection) stages its writes again: they commit with a later group, their keys never lost.
TEST_F(SqliteEventStoreTest, AStagedWriteOutlivesAGroupThatFailedAroundIt) {
  auto store = open(Durability::kFull, 50);
  rawExec(path_, "CREATE TABLE side (k TEXT)");
  int64_t next = store->append("e", 1, {started()});
  auto lent = store->lendWriter();
  int calls = 0;
  std::exception_ptr outcome;
  const std::string key = std::string(64, 'b');
  ASSERT_TRUE(lent->stage(
      key, [](sqlite::Db& db) { db.exec("INSERT INTO side VALUES ('b')", "insert"); },
      [&](std::exception_ptr error) {
        ++calls;
        outcome = error;
      }));
  {
    sqlite3* other = nullptr;
    ASSERT_EQ(SQLITE_OK, sqlite3_open(path_.c_str(), &other));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr));
    try {
      store->append("e", next, {step("s1", json::value{{"ref", key}})});
      ADD_FAILURE() << "appended while another connection held the file";
    } catch (const ContentStoreUnavailableError& e) {
      ADD_FAILURE() << "the key was given up with a group it did not break: " << e.what();
    } catch (const UnavailableError&) {  // the lock: the group failed, not the write
    }
    sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(other);
  }
  EXPECT_EQ(0, calls) << "the write was given up with a group it did not break";
  EXPECT_EQ(next + 1, store->append("e", next, {step("s1", json::value{{"ref", key}})}));
  EXPECT_EQ(1, calls);
  EXPECT_FALSE(outcome);
  EXPECT_EQ(1, rawInt(path_, "SELECT count(*) FROM side"));
}

// A staged write whose groups keep failing around it is lost after three of them: its caller
// hears the last group's error, and an append citing it is refused.
TEST_F(SqliteEventStoreTest, AStagedWriteIsLostAfterThreeGroupsFailedAroundIt) {
  auto store = open(Durability::kFull, 20);
  int64_t next = store->append("e", 1, {started()});
  auto lent = store->lendWriter();
  const std::string key = std::string(64, 'd');
  int calls = 0;
  std::exception_ptr outcome;
  ASSERT_TRUE(lent->stage(
      key, [](sqlite::Db&) {},
      [&](std::exception_ptr error) {
        ++calls;
        outcome = error;
      }));
  sqlite3* other = nullptr;
  ASSERT_EQ(SQLITE_OK, sqlite3_open(path_.c_str(), &other));
  ASSERT_EQ(SQLITE_OK, sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(0, calls) << "lost after " << i << " failed groups";
    EXPECT_THROW(store->append("e", next, {step("s0", json::value{{"ref", "another"}})}),
                 UnavailableError);
  }
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_EQ(1, calls);
  EXPECT_TRUE(outcome);
  EXPECT_THROW(store->append("e", next, {step("s1", json::value{{"ref", key}})}),
               ContentStoreUnavailableError);
  EXPECT_EQ(next + 1, store->append("e", next, {step("s0", json::value{{"ref", "another"}})}));
}

// Closing the store commits what is staged; once closed, nothing stages.
TEST_F(SqliteEventStoreTest, ClosingTheStoreCommitsItsStagedWrites) {
  auto store = open(Durability::kFull);
  rawExec(path_, "CREATE TABLE side (k TEXT)");
  auto lent = store->lendWriter();
  bool committed = false;
  ASSERT_TRUE(lent->stage(
      "k", [](sqlite::Db& db) { db.exec("INSERT INTO side VALUES ('k')", "insert"); },
      [&](std::exception_ptr error) { committed = !error; }));
  store.reset();
  EXPECT_TRUE(committed);
  EXPECT_EQ(1, rawInt(path_, "SELECT count(*) FROM side"));
  bool ran = false;
  EXPECT_FALSE(lent->stage(
      "k", [&](sqlite::Db&) { ran = true; }, nullptr));
  EXPECT_FALSE(ran);
}

// The home's packed blobs (ADR 0019): a deferred put is read at once in this process, seen by
// other connections only with the append that cites it, and lands in that append's commit.
TEST_F(SqliteEventStoreTest, ADeferredBlobLandsWithTheAppendThatCitesIt) {
  auto store = open(Durability::kFull);
  auto clock = systemClock();
  content::SqliteContentStore pack(path_, clock, 5000, content::SqliteContentCommit::kWithDatabase,
                                   store->lendWriter());
  content::SqliteContentStore elsewhere(path_, clock);  // another process's view of the file
  int64_t next = store->append("e", 1, {started()});
  int64_t commits = store->commits();
  std::string result(3000, 'r');
  std::string address = pack.putDeferred(result);
  EXPECT_EQ(result, pack.get(address));
  EXPECT_TRUE(pack.has(address));
  EXPECT_FALSE(elsewhere.has(address)) << "visible before the append that cites it";
  store->append("e", next, {step("s1", json::value{{"ref", address}})});
  EXPECT_EQ(commits + 1, store->commits());
  EXPECT_EQ(result, elsewhere.get(address));
  rawExec(path_, "DELETE FROM blobs WHERE address = ?1", {address});
  EXPECT_FALSE(pack.has(address)) << "still served from memory once committed";
}

// A content store takes a log's writer only for puts committed with the log, in its file.
TEST_F(SqliteEventStoreTest, AContentStoreRefusesALentWriterItCannotUse) {
  auto store = open(Durability::kFull);
  auto lent = store->lendWriter();
  auto clock = systemClock();
  EXPECT_THROW(
      content::SqliteContentStore(path_, clock, 5000, content::SqliteContentCommit::kDurable, lent),
      InvalidArgumentError)
      << "a durable put must not ride an unflushed group";
  EXPECT_THROW(content::SqliteContentStore((dir_.path() / "other.db").string(), clock, 5000,
                                           content::SqliteContentCommit::kWithDatabase, lent),
               InvalidArgumentError);
  content::SqliteContentStore pack(path_, clock, 5000, content::SqliteContentCommit::kWithDatabase,
                                   lent);
  int64_t commits = store->commits();
  std::string address = pack.put("beside the log");
  EXPECT_EQ(commits + 1, store->commits());
  store.reset();  // the log closes: puts go on, on the store's own writer
  EXPECT_EQ(address, pack.put("beside the log"));
  std::string after = pack.put("after the log closed");
  EXPECT_EQ("after the log closed", pack.get(after));
  EXPECT_EQ("beside the log", pack.get(address));
}

}  // namespace
}  // namespace loom::kernel::conformance

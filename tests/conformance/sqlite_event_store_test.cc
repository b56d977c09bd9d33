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

#include "kernel/sqlite_schema.h"
#include "loom/kernel/version.h"
#include "loom/util/error.h"
#include "sqlite_event_store_test_support.h"
#include "support/sqlite_fault_vfs.h"

namespace loom::kernel::conformance {
namespace {

using ::testing::HasSubstr;

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

// Typed reads go through the index of types (their cost does not grow with the BLOB_READ
// events that fill the log), and still meet a row that does not read: it is indexed as '?',
// which every typed read asks for too.
TEST_F(SqliteEventStoreTest, TypedControlReadsUseTheIndexAndMeetCorruptRows) {
  {
    auto store = open();
    store->appendControl(1, {ControlEvent{0, "BLOB_READ", kT0, {}},
                             ControlEvent{0, "SUBJECT_SHREDDED", kT0, {{"subject", "a"}}},
                             ControlEvent{0, "BLOB_READ", kT0, {}}});
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(SQLITE_OK, sqlite3_open(path_.c_str(), &db));
  std::string sql = std::string("EXPLAIN QUERY PLAN SELECT seq FROM control WHERE (") +
                    schema::kControlTypeExpression + ") = 'SUBJECT_SHREDDED' AND seq >= 1";
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr));
  ASSERT_EQ(SQLITE_ROW, sqlite3_step(stmt));
  std::string plan = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 3));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  EXPECT_NE(plan.find("control_by_type"), std::string::npos) << plan;

  // A type a flipped byte changed is indexed under no known type: every typed read meets it.
  rawExec(path_, "UPDATE control SET body = replace(body, 'BLOB_READ', 'BLOB_REAE') WHERE seq = 1");
  EXPECT_THROW(open()->readControlOfTypes({"SUBJECT_SHREDDED"}), CorruptEventError);
  rawExec(path_, "UPDATE control SET body = replace(body, 'BLOB_REAE', 'BLOB_READ') WHERE seq = 1");
  EXPECT_EQ(open()->readControlOfTypes({"SUBJECT_SHREDDED"}).size(), 1u);
  rawExec(path_, "UPDATE control SET body = 'not json' WHERE seq = 3");
  auto store = open();
  try {
    store->readControlOfTypes({"SUBJECT_SHREDDED"});
    FAIL() << "a typed read passed over a corrupt row";
  } catch (const CorruptEventError& e) {
    EXPECT_EQ(3, e.seq());
  }
  EXPECT_EQ(3, store->lastControlSeq());
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

// A failed flush (fsync) may have dropped pages the process wrote, and a later flush can
// succeed without them (Linux reports a lost write-back once): the store writes nothing more,
// saying why and to go on in a new process, which reads what is on disk.
TEST_F(SqliteEventStoreTest, AfterAFailedFlushTheStoreWritesNothingMoreInThisProcess) {
  loom::testing::SqliteFaultVfs vfs;  // before the store: its files go through it
  auto store = open(Durability::kFull);
  int64_t next = store->append("e1", 1, {started()});
  vfs.fail(loom::testing::SqliteFaultVfs::Call::kSync, "events.db-wal", SQLITE_IOERR_FSYNC, 1);
  try {
    store->append("e1", next, {step("a")});
    ADD_FAILURE() << "an append whose flush failed returned";
  } catch (const UnavailableError& e) {
    EXPECT_THAT(e.what(), HasSubstr("may or may not be on disk"));
  }
  ASSERT_EQ(1, vfs.failed());
  try {  // the disk flushes again, but this process no longer writes
    store->append("e1", store->info("e1")->nextSeq, {step("b")});
    ADD_FAILURE() << "appended after a failed flush";
  } catch (const UnavailableError& e) {
    EXPECT_THAT(e.what(), HasSubstr("failed earlier in this process"));
    EXPECT_THAT(e.what(), HasSubstr("restart the process"));
  }
  store.reset();
  auto fresh = open(Durability::kFull);  // a new process
  int64_t at = fresh->info("e1")->nextSeq;
  EXPECT_TRUE(at == 2 || at == 3) << "the failed append is there or not, whole";
  EXPECT_EQ(at + 1, fresh->append("e1", at, {step("b")}));
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

}  // namespace
}  // namespace loom::kernel::conformance

// The SQLite EventStore's writer lent to the blobs packed in its file (ADR 0017) and the writes
// staged on it (ADR 0019), with the content store that borrows it.
#include <gmock/gmock.h>

#include <thread>

#include "loom/content/sqlite_content_store.h"
#include "loom/util/error.h"
#include "sqlite_event_store_test_support.h"
#include "support/sqlite_fault_vfs.h"
#include "util/sqlite_db.h"

namespace loom::kernel::conformance {
namespace {

using ::testing::HasSubstr;

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
      },
      nullptr));
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
  ASSERT_TRUE(lent->stage(
      key, failing, [&](std::exception_ptr e) { outcome = e; }, nullptr));
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
  ASSERT_TRUE(lent->stage(
      other, failing, [&](std::exception_ptr e) { otherOutcome = e; }, nullptr));
  EXPECT_THROW(store->append("e", next, {step("s2", json::value{{"ref", other}})}),
               ContentStoreUnavailableError);
  EXPECT_TRUE(otherOutcome);

  ASSERT_TRUE(lent->stage(
      key, [](sqlite::Db& db) { db.exec("INSERT INTO side VALUES ('whole')", "insert"); }, nullptr,
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
      },
      nullptr));
  {
    FileWriteLock other(path_);
    try {
      store->append("e", next, {step("s1", json::value{{"ref", key}})});
      ADD_FAILURE() << "appended while another connection held the file";
    } catch (const ContentStoreUnavailableError& e) {
      ADD_FAILURE() << "the key was given up with a group it did not break: " << e.what();
    } catch (const UnavailableError&) {  // the lock: the group failed, not the write
    }
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
      },
      nullptr));
  {
    FileWriteLock other(path_);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(0, calls) << "lost after " << i << " failed groups";
      EXPECT_THROW(store->append("e", next, {step("s0", json::value{{"ref", "another"}})}),
                   UnavailableError);
    }
  }
  EXPECT_EQ(1, calls);
  EXPECT_TRUE(outcome);
  EXPECT_THROW(store->append("e", next, {step("s1", json::value{{"ref", key}})}),
               ContentStoreUnavailableError);
  EXPECT_EQ(next + 1, store->append("e", next, {step("s0", json::value{{"ref", "another"}})}));
}

// A lost key found present in a group is forgotten only when that group commits. Here its row
// is written by another staged write of the same group and the group's COMMIT fails (the WAL
// cannot be written), so the row is rolled back: the key stays lost, and once the disk works an
// append citing it is still refused instead of citing a row that is not there.
TEST_F(SqliteEventStoreTest, ALostKeyFoundInAGroupThatFailsToCommitStaysLost) {
  loom::testing::SqliteFaultVfs vfs;  // before the store: its files go through it
  auto store = open(Durability::kFull);
  rawExec(path_, "CREATE TABLE side (k TEXT)");
  int64_t next = store->append("e", 1, {started()});
  auto lent = store->lendWriter();
  const std::string key(64, 'k');
  auto present = [](sqlite::Db& db) {
    sqlite::StatementUse probe(db.prepare("SELECT 1 FROM side WHERE k = 'k'"));
    return probe->step("probe side");
  };
  ASSERT_TRUE(lent->stage(
      key, [](sqlite::Db&) { throw UnavailableError("the disk is full"); }, nullptr, present));
  next = store->append("e", next, {step("s0", json::value{{"ref", "another"}})});  // loses it

  std::exception_ptr carrierOutcome;
  int carrierCalls = 0;
  ASSERT_TRUE(lent->stage(
      std::string(64, 'w'),
      [](sqlite::Db& db) { db.exec("INSERT INTO side VALUES ('k')", "insert"); },
      [&](std::exception_ptr e) {
        ++carrierCalls;
        carrierOutcome = e;
      },
      nullptr));
  vfs.fail(loom::testing::SqliteFaultVfs::Call::kWrite, "events.db-wal", SQLITE_IOERR_WRITE);
  for (int i = 0; i < 3; ++i) {  // the carrier writes the row, the probe finds it, COMMIT fails
    try {
      store->append("e", next, {step("s1", json::value{{"ref", key}})});
      ADD_FAILURE() << "appended with a WAL that cannot be written";
    } catch (const ContentStoreUnavailableError& e) {
      ADD_FAILURE() << "the probe did not see the row written in its group: " << e.what();
    } catch (const Error&) {
    }
  }
  ASSERT_GE(vfs.failed(), 3);
  vfs.clear();
  EXPECT_EQ(1, carrierCalls) << "the carrier is lost after three failed groups";
  EXPECT_TRUE(carrierOutcome);
  EXPECT_EQ(0, rawInt(path_, "SELECT count(*) FROM side")) << "a failed group left its row";
  EXPECT_THROW(store->append("e", next, {step("s1", json::value{{"ref", key}})}),
               ContentStoreUnavailableError);
  EXPECT_EQ(next, store->info("e")->nextSeq);
}

// Closing the store commits what is staged; once closed, nothing stages.
TEST_F(SqliteEventStoreTest, ClosingTheStoreCommitsItsStagedWrites) {
  auto store = open(Durability::kFull);
  rawExec(path_, "CREATE TABLE side (k TEXT)");
  auto lent = store->lendWriter();
  bool committed = false;
  ASSERT_TRUE(lent->stage(
      "k", [](sqlite::Db& db) { db.exec("INSERT INTO side VALUES ('k')", "insert"); },
      [&](std::exception_ptr error) { committed = !error; }, nullptr));
  store.reset();
  EXPECT_TRUE(committed);
  EXPECT_EQ(1, rawInt(path_, "SELECT count(*) FROM side"));
  bool ran = false;
  EXPECT_FALSE(lent->stage(
      "k", [&](sqlite::Db&) { ran = true; }, nullptr, nullptr));
  EXPECT_FALSE(ran);
}

// A lost deferred put whose blob is in the file all the same (put before, by another writer)
// refuses nothing: the citing append touches the row as the put would have, and commits. A lost
// put with no row behind it still refuses.
TEST_F(SqliteEventStoreTest, ALostDeferredPutOfABlobAlreadyThereRefusesNothingAndTouchesIt) {
  auto store = open(Durability::kFull);
  auto clock = std::make_shared<ManualClock>();
  content::SqliteContentStore pack(path_, clock, 5000, content::SqliteContentCommit::kWithDatabase,
                                   store->lendWriter());
  int64_t next = store->append("e", 1, {started()});
  const std::string result(3000, 'r');
  std::string address = pack.put(result);
  const int64_t putAt = clock->nowMillis();
  rawExec(path_,  // the bytes cannot be rewritten (the upsert fails); a touch alone can
          "CREATE TRIGGER refuse_rewrite BEFORE UPDATE OF bytes ON blobs "
          "BEGIN SELECT RAISE(ABORT, 'the disk is full'); END");
  clock->advance(60'000);
  EXPECT_EQ(address, pack.putDeferred(result));
  next = store->append("e", next, {step("s1", json::value{{"ref", address}})});
  EXPECT_EQ(putAt + 60'000,
            rawInt(path_, "SELECT touched_at FROM blobs WHERE address = '" + address + "'"));
  EXPECT_EQ(result, pack.get(address));
  {  // the staged upsert rewrote the bytes, which the trigger refuses: it was lost, not written
    sqlite3* db = nullptr;
    ASSERT_EQ(SQLITE_OK, sqlite3_open(path_.c_str(), &db));
    EXPECT_NE(SQLITE_OK,
              sqlite3_exec(db, "UPDATE blobs SET bytes = bytes", nullptr, nullptr, nullptr));
    sqlite3_close(db);
  }

  rawExec(path_,
          "CREATE TRIGGER refuse_new BEFORE INSERT ON blobs "
          "BEGIN SELECT RAISE(ABORT, 'the disk is full'); END");
  std::string missing = pack.putDeferred(std::string(3000, 'm'));
  EXPECT_THROW(store->append("e", next, {step("s2", json::value{{"ref", missing}})}),
               ContentStoreUnavailableError);
}

// A process that dies drops what it staged (the simulator's crash): nothing of it commits, not
// even when the store closes, and each write hears that it is lost; a deferred blob is no longer
// served from memory.
TEST_F(SqliteEventStoreTest, DroppedStagedWritesNeverCommit) {
  auto store = open(Durability::kFull);
  rawExec(path_, "CREATE TABLE side (k TEXT)");
  auto lent = store->lendWriter();
  content::SqliteContentStore pack(path_, systemClock(), 5000,
                                   content::SqliteContentCommit::kWithDatabase, lent);
  std::exception_ptr outcome;
  ASSERT_TRUE(lent->stage(
      "k", [](sqlite::Db& db) { db.exec("INSERT INTO side VALUES ('k')", "insert"); },
      [&](std::exception_ptr error) { outcome = error; }, nullptr));
  std::string address = pack.putDeferred(std::string(3000, 'd'));
  ASSERT_TRUE(pack.has(address));
  store->dropStagedWrites();
  ASSERT_TRUE(outcome) << "the dropped write was not told";
  EXPECT_THROW(std::rethrow_exception(outcome), UnavailableError);
  EXPECT_FALSE(pack.has(address)) << "a dropped blob still served from memory";
  store.reset();
  EXPECT_EQ(0, rawInt(path_, "SELECT count(*) FROM side"));
  EXPECT_EQ(0, rawInt(path_, "SELECT count(*) FROM blobs"));
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

#include "util/sqlite_db.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <thread>

#include "loom/util/error.h"
#include "support/sqlite_fault_vfs.h"
#include "support/temp_dir.h"

namespace loom::sqlite {
namespace {

template <typename E>
void expectMapped(int rc, const char* codeName) {
  try {
    throwError(rc, "/data/loom.db", "append event");
    ADD_FAILURE() << "no error thrown for " << codeName;
  } catch (const E& e) {
    std::string what = e.what();
    EXPECT_NE(std::string::npos, what.find("/data/loom.db")) << what;
    EXPECT_NE(std::string::npos, what.find("append event")) << what;
  } catch (const Error& e) {
    ADD_FAILURE() << codeName << " mapped to the wrong error: " << e.what();
  }
}

TEST(SqliteDbTest, ErrorsMapByWhatTheCallerShouldDo) {
  expectMapped<UnavailableError>(SQLITE_BUSY, "SQLITE_BUSY");
  expectMapped<UnavailableError>(SQLITE_BUSY_SNAPSHOT, "SQLITE_BUSY_SNAPSHOT");
  expectMapped<UnavailableError>(SQLITE_LOCKED, "SQLITE_LOCKED");
  expectMapped<DataLossError>(SQLITE_CORRUPT, "SQLITE_CORRUPT");
  expectMapped<DataLossError>(SQLITE_NOTADB, "SQLITE_NOTADB");
  expectMapped<FailedPreconditionError>(SQLITE_CANTOPEN, "SQLITE_CANTOPEN");
  expectMapped<UnavailableError>(SQLITE_FULL, "SQLITE_FULL");
  expectMapped<UnavailableError>(SQLITE_IOERR_SHMSIZE, "SQLITE_IOERR_SHMSIZE");  // no room
  expectMapped<FailedPreconditionError>(SQLITE_READONLY, "SQLITE_READONLY");
  expectMapped<FailedPreconditionError>(SQLITE_READONLY_DBMOVED, "SQLITE_READONLY_DBMOVED");
  expectMapped<UnavailableError>(SQLITE_NOMEM, "SQLITE_NOMEM");
  expectMapped<UnavailableError>(SQLITE_IOERR_FSYNC, "SQLITE_IOERR_FSYNC");  // maybe committed
  expectMapped<UnavailableError>(SQLITE_IOERR_READ, "SQLITE_IOERR_READ");
  expectMapped<UnavailableError>(SQLITE_IOERR_NOMEM, "SQLITE_IOERR_NOMEM");
  expectMapped<UnavailableError>(SQLITE_IOERR_LOCK, "SQLITE_IOERR_LOCK");  // NFS: not the run's
  expectMapped<DataLossError>(SQLITE_IOERR_CORRUPTFS, "SQLITE_IOERR_CORRUPTFS");
  expectMapped<InternalError>(SQLITE_CONSTRAINT_PRIMARYKEY, "SQLITE_CONSTRAINT_PRIMARYKEY");
}

// An I/O error is a full disk when the OS said so (ENOSPC, EDQUOT), and says what to do.
TEST(SqliteDbTest, AnIoErrorOfAFullDiskSaysTheDiskIsFull) {
  for (int err : {ENOSPC, EDQUOT}) {
    try {
      throwError(SQLITE_IOERR_WRITE, "/data/loom.db", "commit", "", err);
      ADD_FAILURE() << "no error thrown";
    } catch (const UnavailableError& e) {
      EXPECT_NE(std::string(e.what()).find("the disk holding it is full: free disk space"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("errno " + std::to_string(err)), std::string::npos);
    }
  }
  try {  // the disk's failure, not the run's: unavailable, with what to check
    throwError(SQLITE_IOERR_WRITE, "/data/loom.db", "commit", "", EROFS);
    ADD_FAILURE() << "no error thrown";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("the file system is read-only"), std::string::npos);
  }
  try {
    throwError(SQLITE_IOERR_FSYNC, "/data/loom.db", "commit", "", EIO);
    ADD_FAILURE() << "no error thrown";
  } catch (const UnavailableError& e) {  // a failed flush: the outcome is not known
    EXPECT_NE(std::string(e.what()).find("may or may not be on disk"), std::string::npos);
  }
  try {
    throwError(SQLITE_IOERR_WRITE, "/data/loom.db", "commit", "", EIO);
    ADD_FAILURE() << "no error thrown";
  } catch (const UnavailableError& e) {  // another I/O error: not full, still not Loom's bug
    EXPECT_EQ(std::string(e.what()).find("full"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the disk reported an I/O error"), std::string::npos);
  }
}

class SqliteDbFileTest : public ::testing::Test {
 protected:
  std::string path() { return dir_ / "t.db"; }
  loom::testing::TempDir dir_{"sqlite-db"};
};

// A file moved away while open is not a permissions problem: the message says what happened.
TEST_F(SqliteDbFileTest, AWriteToAFileMovedAwaySaysItWasMoved) {
  Db db(path(), 1000);
  db.exec("CREATE TABLE t (k TEXT)", "create");
  std::filesystem::rename(path(), dir_.path() / "elsewhere.db");
  try {
    db.exec("INSERT INTO t VALUES ('a')", "insert");
    ADD_FAILURE() << "wrote to a file moved away";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("moved or deleted while this process had it open"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("write access"), std::string::npos) << e.what();
  }
}

// After a failed flush the kernel may have dropped pages this process wrote: no connection of
// this process writes to that file again (a key store's failure stops the log beside it in
// loom.db too) until every one of them is closed; reading goes on.
TEST_F(SqliteDbFileTest, AfterAFailedFlushNoConnectionOfTheProcessWritesToTheFile) {
  loom::testing::SqliteFaultVfs vfs;  // before the connections: their files go through it
  {
    auto first = std::make_unique<Db>(path(), 1000);
    Db second(path(), 1000);
    first->useWal();
    first->exec("CREATE TABLE t (k TEXT)", "create");
    first->exec("PRAGMA synchronous = FULL", "flush every commit");
    vfs.fail(loom::testing::SqliteFaultVfs::Call::kSync, "t.db-wal", SQLITE_IOERR_FSYNC, 1);
    EXPECT_THROW(first->exec("INSERT INTO t VALUES ('a')", "insert"), UnavailableError);
    ASSERT_EQ(1, vfs.failed());
    for (Db* db : {first.get(), &second}) {
      try {
        StatementUse insert(db->prepare("INSERT INTO t VALUES ('b')"));
        insert->step("insert");
        ADD_FAILURE() << "wrote to a file whose flush failed";
      } catch (const UnavailableError& e) {
        EXPECT_NE(std::string(e.what()).find("failed earlier in this process"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("restart the process"), std::string::npos);
      }
      EXPECT_THROW(db->exec("INSERT INTO t VALUES ('c')", "insert"), UnavailableError);
      {
        ReadTransaction read(*db);  // BEGIN ... COMMIT through exec: reading goes on
        StatementUse count(db->prepare("SELECT count(*) FROM t"));
        EXPECT_TRUE(count->step("count"));
      }
      db->exec("PRAGMA query_only = 1; PRAGMA query_only = 0", "as a reader pool does");
    }
    ReaderPool pool(path(), 1000, 1);
    auto reader = pool.acquire();  // a new reader connection opens
    StatementUse count(reader->prepare("SELECT count(*) FROM t"));
    EXPECT_TRUE(count->step("count"));
    Db other(dir_ / "other.db", 1000);  // another file is not marked
    other.exec("CREATE TABLE t (k TEXT); INSERT INTO t VALUES ('a')", "write");
  }
  Db reopened(path(), 1000);  // every connection closed: as a new process would
  reopened.exec("INSERT INTO t VALUES ('d')", "insert");
}

TEST_F(SqliteDbFileTest, StatementsBindStepAndReset) {
  Db db(path(), 1000);
  db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER, o TEXT)", "create");
  {
    StatementUse insert(db.prepare("INSERT INTO t (k, n, o) VALUES (?1, ?2, ?3)"));
    insert->bind(1, std::string_view("a\0b", 3));  // text is length-delimited
    insert->bind(2, std::optional<int64_t>());
    insert->bind(3, std::optional<std::string>("x"));
    EXPECT_FALSE(insert->step("insert"));
    EXPECT_EQ(1, db.changes());
  }
  StatementUse select(db.prepare("SELECT k, n, o FROM t"));
  ASSERT_TRUE(select->step("select"));
  EXPECT_EQ(std::string_view("a\0b", 3), select->text(0));
  EXPECT_TRUE(select->isNull(1));
  EXPECT_EQ("x", select->text(2));
  EXPECT_FALSE(select->step("select"));
  // The same statement object comes back from the cache.
  EXPECT_EQ(&*select, &db.prepare("SELECT k, n, o FROM t"));
}

TEST_F(SqliteDbFileTest, FailuresNameTheOperation) {
  Db db(path(), 1000);
  db.exec("CREATE TABLE t (k TEXT PRIMARY KEY)", "create");
  db.exec("INSERT INTO t VALUES ('a')", "insert");
  try {
    db.exec("INSERT INTO t VALUES ('a')", "insert twice");
    FAIL() << "duplicate key accepted";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("insert twice")) << e.what();
    EXPECT_NE(std::string::npos, std::string(e.what()).find("UNIQUE")) << e.what();
  }
  EXPECT_THROW(db.prepare("SELECT nope FROM t"), InternalError);
  EXPECT_FALSE(db.inTransaction());
}

}  // namespace
}  // namespace loom::sqlite

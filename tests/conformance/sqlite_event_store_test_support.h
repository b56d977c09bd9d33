// Helpers of the SQLite EventStore's own tests (sqlite_event_store_test.cc and
// sqlite_lent_writer_test.cc): raw connections to the store's file, and the fixture.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "event_store_conformance.h"
#include "loom/kernel/sqlite_event_store.h"

namespace loom::kernel::conformance {

// Runs `sql` on its own raw connection, binding `params` as text (?1, ?2, ...).
inline void rawExec(const std::string& path, const std::string& sql,
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
inline int64_t rawInt(const std::string& path, const std::string& sql) {
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

// Holds the file's write lock on a connection of its own (another process writing) until it
// goes out of scope.
class FileWriteLock {
 public:
  explicit FileWriteLock(const std::string& path) {
    EXPECT_EQ(SQLITE_OK, sqlite3_open(path.c_str(), &db_));
    EXPECT_EQ(SQLITE_OK, sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr));
  }
  ~FileWriteLock() {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
  }
  FileWriteLock(const FileWriteLock&) = delete;
  FileWriteLock& operator=(const FileWriteLock&) = delete;

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace loom::kernel::conformance

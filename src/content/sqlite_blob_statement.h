// The SQLite pieces of the SQLite content store: a connection (the kernel's Db, whose error
// mapping names the database path and the operation) with its own prepared statements, which
// unlike the kernel's bind and read BLOB values, and a guard that resets a statement on every
// exit path. Thread-safety: a Connection and its statements are used by one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "kernel/sqlite_db.h"

struct sqlite3_stmt;

namespace loom::content::sqlite {

class BlobStatement {
 public:
  BlobStatement(kernel::sqlite::Db& db, const char* sql);
  ~BlobStatement();
  BlobStatement(const BlobStatement&) = delete;
  BlobStatement& operator=(const BlobStatement&) = delete;

  // Parameters are 1-based; values are copied (SQLITE_TRANSIENT).
  void bindText(int index, std::string_view text);
  void bindBlob(int index, std::string_view bytes);  // empty binds a zero-length BLOB, not NULL
  void bindInt(int index, int64_t value);

  // True when a row is ready, false when done; throws the mapped error naming `op`.
  bool step(std::string_view op);
  void reset();

  // Columns are 0-based; views are valid until the next step or reset.
  std::string_view blob(int column) const;
  std::string_view text(int column) const;
  int64_t int64(int column) const;

 private:
  kernel::sqlite::Db& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Resets a statement when the scope ends, so no exit path leaves a read open.
class StatementUse {
 public:
  explicit StatementUse(BlobStatement& statement) : statement_(statement) {}
  ~StatementUse() { statement_.reset(); }
  StatementUse(const StatementUse&) = delete;
  StatementUse& operator=(const StatementUse&) = delete;
  BlobStatement* operator->() const { return &statement_; }

 private:
  BlobStatement& statement_;
};

class Connection {
 public:
  Connection(const std::string& path, int busyTimeoutMillis) : db_(path, busyTimeoutMillis) {}
  kernel::sqlite::Db& db() { return db_; }
  // Prepared on first use and kept; `sql` must be a literal (the cache is keyed by address).
  BlobStatement& prepare(const char* sql);

 private:
  kernel::sqlite::Db db_;
  std::map<const char*, std::unique_ptr<BlobStatement>> statements_;  // finalized before db_
};

}  // namespace loom::content::sqlite

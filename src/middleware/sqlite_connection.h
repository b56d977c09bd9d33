// A tiny RAII layer over the SQLite C API for the middleware module's own table (the kill
// switch): one connection and one prepared statement at a time, with SQLite result codes
// mapped to Loom errors (busy/locked: UnavailableError; corrupt/not a database:
// DataLossError; cannot open: FailedPreconditionError; anything else: InternalError), each
// message naming the database path and the operation.
// Thread-safety: a Connection and its statements are used by one thread at a time (opened
// with SQLITE_OPEN_NOMUTEX); the owner serializes access.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace loom::middleware::sqlite {

class Connection {
 public:
  // Opens `path` (":memory:" for a private in-memory database), creating the file when
  // missing; its folder must exist. Throws the mapped error when it cannot be opened.
  Connection(std::string path, int busyTimeoutMillis);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs SQL that returns no rows of interest. Throws the mapped error naming `op`.
  void exec(const char* sql, std::string_view op);
  // Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t changes() const;
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(int rc, std::string_view op) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// A statement prepared on construction and finalized on destruction. Bound text is copied.
class Statement {
 public:
  Statement(Connection& db, const char* sql, std::string_view op);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int index, std::string_view text);  // 1-based, as in SQLite
  void bind(int index, int64_t value);
  // Advances to the next row: true when there is one, false when done.
  bool step();
  std::string_view text(int column) const;  // 0-based; valid until the next step
  int64_t int64(int column) const;

 private:
  Connection& db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string op_;
};

}  // namespace loom::middleware::sqlite

#include "sqlite_connection.h"

#include <sqlite3.h>

#include "loom/util/error.h"
#include "util/private_files.h"

namespace loom::middleware::sqlite {
namespace {

[[noreturn]] void throwMapped(int rc, const std::string& path, std::string_view op,
                              std::string_view detail) {
  std::string message = "sqlite database '" + path + "': " + std::string(op) +
                        " failed: " + std::string(detail.empty() ? sqlite3_errstr(rc) : detail);
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw UnavailableError(message + " (another process holds the database; retry)");
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      throw DataLossError(message);
    case SQLITE_CANTOPEN:
      throw FailedPreconditionError(message + " (does its folder exist and is it writable?)");
    default:
      throw InternalError(message);
  }
}

}  // namespace

Connection::Connection(std::string path, int busyTimeoutMillis) : path_(std::move(path)) {
  int rc =
      sqlite3_open_v2(path_.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string detail = db_ ? sqlite3_errmsg(db_) : "";
    sqlite3_close(db_);  // a handle is returned even on failure; NULL is a no-op
    db_ = nullptr;
    throwMapped(rc, path_, "open", detail);
  }
  // Subjects' data: owner-only whatever the umask (the WAL and -shm inherit the file's mode).
  for (const char* suffix : {"", "-wal", "-shm"}) restrictToOwner(path_ + suffix);
  sqlite3_busy_timeout(db_, busyTimeoutMillis);
}

Connection::~Connection() { sqlite3_close(db_); }

void Connection::exec(const char* sql, std::string_view op) {
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc, op);
}

int64_t Connection::changes() const { return sqlite3_changes64(db_); }

void Connection::fail(int rc, std::string_view op) const {
  throwMapped(rc, path_, op, sqlite3_errmsg(db_));
}

Statement::Statement(Connection& db, const char* sql, std::string_view op) : db_(db), op_(op) {
  int rc = sqlite3_prepare_v2(db_.handle(), sql, -1, &stmt_, nullptr);
  if (rc != SQLITE_OK) db_.fail(rc, op_);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::bind(int index, std::string_view text) {
  int rc =
      sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) db_.fail(rc, op_);
}

void Statement::bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) db_.fail(rc, op_);
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail(rc, op_);
}

std::string_view Statement::text(int column) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
           : std::string_view();
}

int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }

}  // namespace loom::middleware::sqlite

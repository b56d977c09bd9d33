#include "sqlite_blob_statement.h"

#include <sqlite3.h>

namespace loom::content::sqlite {

BlobStatement::BlobStatement(kernel::sqlite::Db& db, const char* sql) : db_(db) {
  int rc = sqlite3_prepare_v3(db.handle(), sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, std::string("prepare '") + sql + "'");
}

BlobStatement::~BlobStatement() { sqlite3_finalize(stmt_); }

void BlobStatement::bindText(int index, std::string_view text) {
  int rc =
      sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) db_.fail(rc, "bind");
}

void BlobStatement::bindBlob(int index, std::string_view bytes) {
  // A null data pointer would bind NULL: an empty blob needs a real one.
  const char* data = bytes.empty() ? "" : bytes.data();
  int rc = sqlite3_bind_blob64(stmt_, index, data, bytes.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) db_.fail(rc, "bind");
}

void BlobStatement::bindInt(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) db_.fail(rc, "bind");
}

bool BlobStatement::step(std::string_view op) {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail(rc, op);
}

void BlobStatement::reset() {
  sqlite3_reset(stmt_);  // repeats the last step's error, which step() has already thrown
  sqlite3_clear_bindings(stmt_);
}

std::string_view BlobStatement::blob(int column) const {
  // Pointer first, then length: the documented order for a stable pointer.
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  auto n = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
  return p == nullptr ? std::string_view() : std::string_view(p, n);
}

std::string_view BlobStatement::text(int column) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  auto n = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
  return p == nullptr ? std::string_view() : std::string_view(p, n);
}

int64_t BlobStatement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }

BlobStatement& Connection::prepare(const char* sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    it = statements_.emplace(sql, std::make_unique<BlobStatement>(db_, sql)).first;
  }
  return *it->second;
}

}  // namespace loom::content::sqlite

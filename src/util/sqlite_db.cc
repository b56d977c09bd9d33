#include "util/sqlite_db.h"

#include <sqlite3.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "loom/util/error.h"
#include "util/private_files.h"

namespace loom::sqlite {

namespace {

// SQLITE_IOERR other than a full disk: the disk or the file system failed, not the run, so it
// is unavailable (a run stopped by it is not marked failed; a worker tries it again) with what
// to check, except damaged data the file system returned.
[[noreturn]] void throwIoErr(int rc, const std::string& message, int systemErrno) {
  std::string advice;
  switch (rc) {
    case SQLITE_IOERR_NOMEM:
      throw UnavailableError(message + "; this process ran out of memory, retry");
    case SQLITE_IOERR_CORRUPTFS:
    case SQLITE_IOERR_DATA:
      throw DataLossError(message +
                          "; the file system returned damaged data: check the disk, and restore "
                          "the file from a backup if it persists");
    case SQLITE_IOERR_FSYNC:
    case SQLITE_IOERR_DIR_FSYNC:
      // The frames are written but not counted: after a crash they may be found committed.
      throw UnavailableError(message +
                             "; the disk failed a flush, so the last write may or may not be on "
                             "disk: check the disk and the kernel log (dmesg), then restart the "
                             "process; `loom log` shows what was recorded");
    case SQLITE_IOERR_LOCK:
    case SQLITE_IOERR_RDLOCK:
    case SQLITE_IOERR_UNLOCK:
    case SQLITE_IOERR_SHMLOCK:
    case SQLITE_IOERR_CHECKRESERVEDLOCK:
      advice =
          "the file system refused a lock: put the home on a local file system (not a "
          "network share), then retry";
      break;
    default:
      if (systemErrno == EROFS) {
        advice =
            "the file system is read-only (a disk error may have made the kernel remount "
            "it so: check the kernel log, dmesg), fix it, then retry";
      } else if (systemErrno == EACCES || systemErrno == EPERM) {
        advice = "give this process write access to the file, then retry";
      } else {
        advice = "the disk reported an I/O error: check it and the kernel log (dmesg), then retry";
      }
  }
  throw UnavailableError(message + "; " + advice);
}

// After a failed flush of a database (its WAL or its folder: SQLITE_IOERR_FSYNC, _DIR_FSYNC),
// the kernel may have dropped pages this process wrote to it, and a later flush can succeed
// without them: every connection of this process to that file refuses to write until the last
// of them closes (a new open then starts afresh, as a new process would). One registry for the
// process, keyed by the file's canonical path; `marked` keeps the write path to one load.
class FlushFailures {
 public:
  static FlushFailures& instance() {
    static FlushFailures* registry = new FlushFailures();  // outlives every static Db
    return *registry;
  }
  bool anyMarked() const { return marked_.load(std::memory_order_acquire) > 0; }
  void opened(const std::string& file) {
    std::lock_guard lock(mu_);
    ++files_[file].connections;
  }
  void closed(const std::string& file) {
    std::lock_guard lock(mu_);
    auto it = files_.find(file);
    if (it == files_.end() || --it->second.connections > 0) return;
    if (!it->second.reason.empty()) marked_.fetch_sub(1, std::memory_order_release);
    files_.erase(it);
  }
  void mark(const std::string& file, std::string reason) {
    std::lock_guard lock(mu_);
    Entry& e = files_[file];
    if (!e.reason.empty()) return;
    e.reason = std::move(reason);
    marked_.fetch_add(1, std::memory_order_release);
  }
  std::string reasonFor(const std::string& file) const {
    std::lock_guard lock(mu_);
    auto it = files_.find(file);
    return it == files_.end() ? std::string() : it->second.reason;
  }

 private:
  struct Entry {
    int connections = 0;
    std::string reason;  // empty: every flush of it succeeded
  };
  mutable std::mutex mu_;
  std::map<std::string, Entry> files_;
  std::atomic<int> marked_{0};
};

// Whether every statement of `sql` only reads (BEGIN, SELECT, a PRAGMA that reads; SQLite's
// sqlite3_stmt_readonly). Prepares them, so it is called only once a flush failed.
bool readOnly(sqlite3* db, const char* sql) {
  while (sql != nullptr && *sql != '\0') {
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, &tail) != SQLITE_OK) return false;
    bool readOnly = stmt == nullptr || sqlite3_stmt_readonly(stmt) != 0;
    sqlite3_finalize(stmt);
    if (!readOnly) return false;
    sql = tail;
  }
  return true;
}

// The registry's key for `path`: its canonical form when it names a file.
std::string fileKey(const std::string& path) {
  if (path.empty() || path == ":memory:") return path;
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : canonical.string();
}

}  // namespace

void throwError(int rc, const std::string& path, std::string_view op, std::string_view detail,
                int systemErrno) {
  std::string message = "sqlite database '" + path + "': " + std::string(op) +
                        " failed: " + std::string(detail.empty() ? sqlite3_errstr(rc) : detail) +
                        " (sqlite code " + std::to_string(rc) +
                        (systemErrno != 0 ? ", errno " + std::to_string(systemErrno) : "") + ")";
  const bool noSpace =
      (rc & 0xff) == SQLITE_IOERR &&
      (systemErrno == ENOSPC || systemErrno == EDQUOT || rc == SQLITE_IOERR_SHMSIZE);
  switch (noSpace ? SQLITE_FULL : rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw UnavailableError(message + "; another writer holds the database, retry");
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      throw DataLossError(message);
    case SQLITE_CANTOPEN:
      throw FailedPreconditionError(message + "; check that its folder exists and is writable");
    case SQLITE_FULL:  // the failed transaction is not committed
      throw UnavailableError(message +
                             "; the disk holding it is full: free disk space, then retry (the "
                             "disk of SQLite's temporary files counts too: $SQLITE_TMPDIR, else "
                             "/var/tmp or /tmp)");
    case SQLITE_READONLY:
      if (rc == SQLITE_READONLY_DBMOVED) {
        throw FailedPreconditionError(
            message +
            "; the file was moved or deleted while this process had it "
            "open: put it back, or run the command again where it is now");
      }
      [[fallthrough]];
    case SQLITE_PERM:
      throw FailedPreconditionError(message + "; give this process write access to the file");
    case SQLITE_NOMEM:
      throw UnavailableError(message + "; this process ran out of memory, retry");
    case SQLITE_IOERR:
      throwIoErr(rc, message, systemErrno);
    default:
      throw InternalError(message);
  }
}

Db::Db(std::string path, int busyTimeoutMillis)
    : path_(std::move(path)), busyTimeoutMillis_(busyTimeoutMillis) {
  int rc =
      sqlite3_open_v2(path_.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    // A handle comes back even on failure (unless out of memory): read its message, close it.
    std::string detail = db_ != nullptr ? sqlite3_errmsg(db_) : "";
    int systemErrno = db_ != nullptr ? sqlite3_system_errno(db_) : 0;
    sqlite3_close(db_);
    db_ = nullptr;
    throwError(rc, path_, "open", detail, systemErrno);
  }
  // Subjects' data: owner-only whatever the umask (the WAL and -shm inherit the file's mode).
  for (const char* suffix : {"", "-wal", "-shm"}) restrictToOwner(path_ + suffix);
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busyTimeoutMillis);
  fileKey_ = fileKey(path_);
  FlushFailures::instance().opened(fileKey_);
}

Db::~Db() {
  statements_.clear();  // finalize before close, or close fails with SQLITE_BUSY
  sqlite3_close(db_);
  FlushFailures::instance().closed(fileKey_);
}

bool anyFlushFailed() { return FlushFailures::instance().anyMarked(); }

void Db::requireNoFailedFlush() const {
  if (!FlushFailures::instance().anyMarked()) return;
  std::string reason = FlushFailures::instance().reasonFor(fileKey_);
  if (!reason.empty()) throw UnavailableError(reason);
}

void Db::noteFailedFlush(int rc) const {
  if (rc != SQLITE_IOERR_FSYNC && rc != SQLITE_IOERR_DIR_FSYNC) return;
  FlushFailures::instance().mark(
      fileKey_, "sqlite database '" + path_ + "': a flush of it failed earlier in this process " +
                    "(sqlite code " + std::to_string(rc) + ", errno " +
                    std::to_string(sqlite3_system_errno(db_)) +
                    "), so this process writes nothing more to it (what it wrote since its last "
                    "good flush may not be on disk): check the disk and the kernel log (dmesg), "
                    "then restart the process; a new one reads what is on disk");
}

void Db::exec(const char* sql, std::string_view op) {
  if (FlushFailures::instance().anyMarked() && !readOnly(db_, sql)) requireNoFailedFlush();
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc, op);
}

int Db::execNoThrow(const char* sql) { return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr); }

Statement& Db::prepare(const char* sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    it = statements_.emplace(sql, std::make_unique<Statement>(*this, sql)).first;
  }
  return *it->second;
}

void Db::useWal() {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busyTimeoutMillis_);
  for (;;) {
    std::string mode;
    auto keep = [](void* out, int columns, char** values, char**) {
      if (columns > 0 && values[0] != nullptr) *static_cast<std::string*>(out) = values[0];
      return 0;
    };
    int rc = sqlite3_exec(db_, "PRAGMA journal_mode = WAL", keep, &mode, nullptr);
    if (rc == SQLITE_OK) {
      if (mode == "wal" || mode == "memory") return;  // an in-memory database has no WAL
      throw FailedPreconditionError("sqlite database '" + path_ + "' stayed in journal mode '" +
                                    mode +
                                    "', not WAL, which Loom needs for readers beside a writer; "
                                    "put the home on a local filesystem (not a network share)");
    }
    int primary = rc & 0xff;
    bool busy = primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
    if (!busy || std::chrono::steady_clock::now() >= deadline) fail(rc, "set WAL mode");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void Db::run(const char* sql, std::string_view op) {
  if (FlushFailures::instance().anyMarked() && !sqlite3_stmt_readonly(prepare(sql).handle())) {
    requireNoFailedFlush();
  }
  int rc = runNoThrow(sql);
  if (rc != SQLITE_OK) fail(rc, op);
}

int Db::runNoThrow(const char* sql) {
  try {
    return prepare(sql).runOnce();
  } catch (const std::exception&) {
    return SQLITE_ERROR;  // could not even be prepared (out of memory): the caller's error stands
  }
}

bool Db::hasColumn(std::string_view table, std::string_view column) {
  std::string sql = "PRAGMA table_info(" + std::string(table) + ")";
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    throw InternalError("sqlite database '" + path_ + "': cannot read the columns of " +
                        std::string(table) + ": " + sqlite3_errmsg(db_));
  }
  bool found = false;
  while (!found && sqlite3_step(raw) == SQLITE_ROW) {
    const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(raw, 1));
    found = name != nullptr && column == name;
  }
  sqlite3_finalize(raw);
  return found;
}

bool Db::inTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

ReadTransaction::~ReadTransaction() {
  // Nothing was written: ending it cannot lose anything, but a connection going back to the
  // pool must not keep an old snapshot open.
  if (db_.execNoThrow("COMMIT") != SQLITE_OK && db_.inTransaction()) db_.execNoThrow("ROLLBACK");
}

int64_t Db::changes() const { return sqlite3_changes64(db_); }

int Db::truncateWal(int waitMillis) {
  sqlite3_busy_timeout(db_, waitMillis);
  int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
  sqlite3_busy_timeout(db_, busyTimeoutMillis_);
  noteFailedFlush(rc);
  return rc;
}

void Db::fail(int rc, std::string_view op) const {
  // The connection's message is about its last call, which is the failed one only when it
  // reports the same code.
  const bool last = sqlite3_extended_errcode(db_) == rc;
  noteFailedFlush(rc);
  throwError(rc, path_, op, last ? sqlite3_errmsg(db_) : "", last ? sqlite3_system_errno(db_) : 0);
}

Statement::Statement(Db& db, const char* sql) : db_(db) {
  int rc = sqlite3_prepare_v3(db.handle(), sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, std::string("prepare '") + sql + "'");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) db_.fail(rc, "bind");
}

void Statement::bind(int index, std::string_view text) {
  int rc =
      sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) db_.fail(rc, "bind");
}

void Statement::bind(int index, const std::optional<std::string>& text) {
  if (text) {
    bind(index, std::string_view(*text));
    return;
  }
  int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) db_.fail(rc, "bind");
}

void Statement::bind(int index, const std::optional<int64_t>& value) {
  if (value) {
    bind(index, *value);
    return;
  }
  int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) db_.fail(rc, "bind");
}

bool Statement::step(std::string_view op) {
  if (FlushFailures::instance().anyMarked() && !sqlite3_stmt_readonly(stmt_)) {
    db_.requireNoFailedFlush();
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail(rc, op);
}

void Statement::reset() {
  // sqlite3_reset repeats the error of the last step, which step() has already thrown.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::runOnce() {
  int rc = sqlite3_step(stmt_);
  sqlite3_reset(stmt_);
  return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }

void Statement::bindBlob(int index, std::string_view bytes) {
  // A null data pointer would bind NULL: an empty blob needs a real one.
  const char* data = bytes.empty() ? "" : bytes.data();
  int rc = sqlite3_bind_blob64(stmt_, index, data, bytes.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) db_.fail(rc, "bind");
}

std::string_view Statement::blob(int column) const {
  // Pointer first, then length: the documented order for a stable pointer.
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  auto n = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
  return p == nullptr ? std::string_view() : std::string_view(p, n);
}

std::string_view Statement::text(int column) const {
  // Text first, then its length: the documented order for a stable pointer.
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  auto n = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
  return p == nullptr ? std::string_view() : std::string_view(p, n);
}

bool Statement::isNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

ReaderPool::Lease ReaderPool::acquire() const {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Db> db = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(db));
    }
  }
  auto db = std::make_unique<Db>(path_, busyTimeoutMillis_);
  db->exec("PRAGMA query_only = 1", "open read connection");
  return Lease(*this, std::move(db));
}

void ReaderPool::giveBack(std::unique_ptr<Db> db) const {
  std::lock_guard lock(mu_);
  if (idle_.size() < maxIdle_) idle_.push_back(std::move(db));
}

}  // namespace loom::sqlite

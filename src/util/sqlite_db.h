// Loom's one RAII layer over the SQLite C API, for every SQLite store (events, snapshots,
// content, keys, the blob ledger, the kill switch, the home record): a connection (Db), a
// prepared statement (Statement) with a scope guard that resets it (StatementUse), a read
// transaction, and the mapping of SQLite result codes to Loom errors (busy or locked, a full
// disk, a disk I/O error: UnavailableError; corrupt, not a database, damaged data from the file
// system: DataLossError; cannot open, no write access: FailedPreconditionError; anything
// else: InternalError), each message naming the database
// path and the operation that failed. After a failed flush of a database, no connection of this
// process writes to it again until all of them are closed (Db::requireNoFailedFlush).
// Thread-safety: a Db and its statements are used by one thread at a time (connections are
// opened with SQLITE_OPEN_NOMUTEX); the owner serializes access.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace loom::sqlite {

// Throws the Loom error for SQLite result code `rc` (extended codes are fine). `detail` is
// SQLite's message for the failure; empty means the generic text of `rc`. `systemErrno` is the
// OS error behind an I/O failure (sqlite3_system_errno), 0 when unknown: ENOSPC or EDQUOT make
// it a full disk, as SQLITE_FULL and a shared-memory file that could not grow are. Any other
// I/O error (EIO, a failed flush) is UnavailableError too: nothing was committed (after a failed
// flush, maybe something was: the message says so), and a run stopped by it stays resumable.
// Damaged data from the file system (IOERR_CORRUPTFS) is DataLossError.
[[noreturn]] void throwError(int rc, const std::string& path, std::string_view op,
                             std::string_view detail = {}, int systemErrno = 0);

class Statement;

// One connection. Opening creates the file when missing.
class Db {
 public:
  // Throws the mapped error when the file cannot be opened.
  Db(std::string path, int busyTimeoutMillis);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

  // Runs one or more SQL statements that return no rows of interest. Throws on failure.
  void exec(const char* sql, std::string_view op);
  // Runs `sql` and returns the SQLite result code instead of throwing: for a rollback on an
  // error path, where the first error is the one to report.
  int execNoThrow(const char* sql);
  // Runs one statement that returns no rows (BEGIN, COMMIT, SAVEPOINT, ...) prepared once and
  // kept, not re-parsed per call as exec does: for the hot paths. `sql` as for prepare().
  void run(const char* sql, std::string_view op);
  // run() returning the SQLite result code instead of throwing, even when `sql` cannot be
  // prepared (SQLITE_ERROR then), for error paths.
  int runNoThrow(const char* sql);
  // The statement for `sql`, prepared on first use and kept for the connection's life.
  // `sql` must outlive the Db, a literal or a static (the cache is keyed by its address).
  Statement& prepare(const char* sql);
  // Puts the file in WAL mode (persistent in the file). Switching takes an exclusive lock that
  // SQLite does not wait for through the busy timeout, so processes opening a new home at once
  // would fail: this retries for up to the busy timeout, then throws UnavailableError.
  void useWal();
  // True while an explicit transaction is open (sqlite3_get_autocommit is 0).
  bool inTransaction() const;
  // True when table `table` has a column named `column` (for schema upgrades).
  bool hasColumn(std::string_view table, std::string_view column);
  // Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t changes() const;
  // Copies the WAL into the database and truncates it (SQLITE_CHECKPOINT_TRUNCATE), so frames of
  // deleted rows leave the -wal file. Waits at most `waitMillis` for readers and writers (then
  // the connection's busy timeout again). Returns SQLite's result code: SQLITE_OK, SQLITE_BUSY
  // or SQLITE_LOCKED (someone held the WAL: try later) or an error for the caller to judge.
  int truncateWal(int waitMillis);

  [[noreturn]] void fail(int rc, std::string_view op) const;
  // Throws UnavailableError when a flush of this database failed earlier in this process, on
  // any connection to it still open (see below). Every write (a statement that is not
  // read-only, exec, run) checks it first; a rollback (runNoThrow, execNoThrow) does not.
  void requireNoFailedFlush() const;

 private:
  // Marks this database when `rc` is a failed flush (SQLITE_IOERR_FSYNC, _DIR_FSYNC): the
  // kernel may have dropped pages this process wrote, and a later flush can succeed without
  // them, so no connection of this process writes to the file again until all are closed.
  void noteFailedFlush(int rc) const;

  std::string path_;
  std::string fileKey_;  // the canonical path: one mark for every connection to the file
  int busyTimeoutMillis_ = 0;
  sqlite3* db_ = nullptr;
  std::map<const char*, std::unique_ptr<Statement>> statements_;
};

// A prepared statement of one Db. Bound text is copied (SQLITE_TRANSIENT).
class Statement {
 public:
  Statement(Db& db, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite.
  void bind(int index, int64_t value);
  void bind(int index, std::string_view text);
  void bind(int index, const std::optional<std::string>& text);  // nullopt binds NULL
  void bind(int index, const std::optional<int64_t>& value);     // nullopt binds NULL
  // Binds `bytes` as a BLOB (empty binds a zero-length BLOB, not NULL).
  void bindBlob(int index, std::string_view bytes);

  // Advances to the next row: true when there is one, false when done. Throws the mapped
  // error naming `op`.
  bool step(std::string_view op);
  // Forgets bindings and the current position, ending any read the statement holds open.
  void reset();
  // Steps once and resets; the SQLite result code, SQLITE_OK when it ran (Db::runNoThrow).
  int runOnce();

  // Columns are 0-based, as in SQLite. text() is valid until the next step or reset.
  int64_t int64(int column) const;
  std::string_view text(int column) const;
  // A BLOB column's bytes; valid until the next step or reset.
  std::string_view blob(int column) const;
  bool isNull(int column) const;
  sqlite3_stmt* handle() const { return stmt_; }

 private:
  Db& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Resets a statement when the scope ends, so no exit path (an exception from a visitor
// included) leaves it mid-step holding a read transaction open.
class StatementUse {
 public:
  explicit StatementUse(Statement& statement) : statement_(statement) {}
  ~StatementUse() { statement_.reset(); }
  StatementUse(const StatementUse&) = delete;
  StatementUse& operator=(const StatementUse&) = delete;

  Statement* operator->() const { return &statement_; }
  Statement& operator*() const { return statement_; }

 private:
  Statement& statement_;
};

// A writer connection one store lends another store of the same database file (the home's log
// lends its writer to the blobs packed beside it, ADR 0017): the borrower's writes run inside
// the lender's write transactions, so one connection writes the file, the borrower's writes
// never wait for the lender's commits in SQLite's busy handler (which sleeps a millisecond or
// more), and neither store's commits throw away the other's page cache. A borrower writes
// only tables of its own: the lender trusts what it cached of its own tables while no other
// connection commits. Thread-safe.
class BorrowedWriter {
 public:
  virtual ~BorrowedWriter() = default;
  // The database file the connection writes.
  virtual const std::string& path() const = 0;
  // Runs `write` in a transaction of the lender, committed when this returns (flushed with the
  // lender's next synchronous commit at the latest). Rethrows what `write` threw, its rows
  // rolled back. Returns false, running nothing, once the lender has closed: the borrower then
  // writes on a connection of its own. `write` must not call run (InternalError).
  virtual bool run(const std::function<void(Db&)>& write) = 0;

  // Runs `write` in the lender's next group commit, before that group's own writes, and
  // returns at once (ADR 0019); false, running nothing, once the lender has closed. `key` names
  // what it writes (a blob's address): an append to the lender made after stage returned
  // commits in the write's transaction or a later one, and an append whose event text holds
  // `key` fails with ContentStoreUnavailableError (naming it and the write's error) when the
  // write failed, until a later staged write of `key` commits. When a group fails for another
  // reason its writes are staged again, so `write` may run up to three times in transactions
  // that roll back before one commits: it must write only the database, and the same rows each
  // time. `done` runs on the lender's committing thread once the write is committed (nullptr)
  // or lost (the error it failed with, or the last failed group's); it must not throw or call
  // into the lender. A write nothing else triggers commits with the lender's next lease write,
  // or when the lender closes. `touchIfPresent` (may be empty) runs in the transaction of an
  // append citing a lost `key`: when what `key` names is in the database all the same
  // (committed by another writer, or by another staged write of the key in that group), it
  // keeps it as the write would have (a blob's touch) and returns true, and the append goes on.
  virtual bool stage(std::string key, std::function<void(Db&)> write,
                     std::function<void(std::exception_ptr)> done,
                     std::function<bool(Db&)> touchIfPresent) = 0;
};

// A read transaction for the scope: every statement in it sees one snapshot of the database.
// Declare it before the StatementUses it spans, so they are reset before it ends.
class ReadTransaction {
 public:
  explicit ReadTransaction(Db& db) : db_(db) { db_.exec("BEGIN", "begin read transaction"); }
  ~ReadTransaction();
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  Db& db_;
};

// Read-only connections to one database file for many threads: acquire() hands out an idle
// one (or opens a new one with PRAGMA query_only) for the lease's life, and the lease gives it
// back, keeping at most `maxIdle`. Thread-safe; each leased Db is used by one thread.
class ReaderPool {
 public:
  ReaderPool(std::string path, int busyTimeoutMillis, std::size_t maxIdle)
      : path_(std::move(path)), busyTimeoutMillis_(busyTimeoutMillis), maxIdle_(maxIdle) {}
  ReaderPool(const ReaderPool&) = delete;
  ReaderPool& operator=(const ReaderPool&) = delete;

  class Lease {
   public:
    Lease(const ReaderPool& pool, std::unique_ptr<Db> db) : pool_(pool), db_(std::move(db)) {}
    ~Lease() { pool_.giveBack(std::move(db_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Db& operator*() const { return *db_; }
    Db* operator->() const { return db_.get(); }

   private:
    const ReaderPool& pool_;
    std::unique_ptr<Db> db_;
  };

  // Throws the mapped error when a new connection cannot be opened.
  Lease acquire() const;

 private:
  void giveBack(std::unique_ptr<Db> db) const;

  const std::string path_;
  const int busyTimeoutMillis_;
  const std::size_t maxIdle_;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<Db>> idle_;  // GUARDED_BY(mu_)
};

// True when a flush of any database failed in this process and a connection to it is still
// open: a long-lived process (the inspector server) closes its connections to start afresh.
bool anyFlushFailed();

}  // namespace loom::sqlite

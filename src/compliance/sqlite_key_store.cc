#include "loom/compliance/sqlite_key_store.h"

#include <sqlite3.h>

#include <charconv>
#include <chrono>
#include <mutex>
#include <thread>

#include "key_wrapping.h"
#include "loom/compliance/subject.h"
#include "loom/util/error.h"
#include "util/sqlite_db.h"
#include "util/utf8.h"

namespace loom::compliance {
namespace {

using sqlite::Db;
using sqlite::StatementUse;

constexpr const char* kCreateTables = R"sql(
CREATE TABLE IF NOT EXISTS key_store_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS subject_keys (
  subject TEXT PRIMARY KEY,
  key_id TEXT NOT NULL UNIQUE,
  nonce TEXT NOT NULL,
  wrapped TEXT NOT NULL,
  created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS subject_key_tombstones (
  subject TEXT PRIMARY KEY,
  shredded_at INTEGER NOT NULL);
)sql";

// Commits on commit(), rolls back when destroyed before it: every exit path of a write
// transaction ends it, and the error being thrown stays the one reported.
class Transaction {
 public:
  Transaction(Db& db, std::string_view op) : db_(db) { db_.exec("BEGIN IMMEDIATE", op); }
  ~Transaction() {
    if (db_.inTransaction()) db_.execNoThrow("ROLLBACK");
  }
  void commit() { db_.exec("COMMIT", "commit key store transaction"); }

 private:
  Db& db_;
};

}  // namespace

struct SqliteKeyStore::Impl {
  explicit Impl(SqliteKeyStoreOptions& o)
      : path(o.path),
        origin(o.masterKeyOrigin),
        clock(o.clock),
        master(o.masterKey),
        busyTimeoutMillis(o.busyTimeoutMillis),
        db(o.path, o.busyTimeoutMillis) {
    db.exec("PRAGMA secure_delete = ON", "enable secure_delete");
    db.useWal();  // persistent; loom.db has it already
    db.exec("PRAGMA synchronous = FULL", "set synchronous");
    Transaction tx(db, "begin key store schema transaction");
    db.exec(kCreateTables, "create key store tables");
    checkSchema();
    checkMasterKey();
    tx.commit();
    // A WAL left by a shred whose checkpoint could not finish is truncated now if it can be.
    // When it cannot (a full disk), opening goes on: that shred reported it, and reading the
    // keys needs no checkpoint.
    db.truncateWal(busyTimeoutMillis);
  }

  std::optional<std::string> meta(const char* name) {
    StatementUse select(db.prepare("SELECT value FROM key_store_meta WHERE name = ?1"));
    select->bind(1, std::string_view(name));
    if (!select->step("read key_store_meta")) return std::nullopt;
    return std::string(select->text(0));
  }

  void setMeta(const char* name, std::string_view value) {
    StatementUse insert(db.prepare("INSERT INTO key_store_meta (name, value) VALUES (?1, ?2)"));
    insert->bind(1, std::string_view(name));
    insert->bind(2, value);
    insert->step("write key_store_meta");
  }

  void checkSchema() {
    auto text = meta("schema");
    if (!text) {
      setMeta("schema", std::to_string(kSqliteKeyStoreSchema));
      return;
    }
    int version = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), version);
    if (ec != std::errc() || end != text->data() + text->size()) {
      throw DataLossError("key store '" + path + "': key_store_meta.schema is '" + *text +
                          "', not a version number");
    }
    if (version > kSqliteKeyStoreSchema || version < kSqliteKeyStoreSchemaOldestReadable) {
      throw FailedPreconditionError(
          "key store '" + path + "' was written under key store schema " + std::to_string(version) +
          " but this build reads " + std::to_string(kSqliteKeyStoreSchemaOldestReadable) + " to " +
          std::to_string(kSqliteKeyStoreSchema) +
          (version > kSqliteKeyStoreSchema ? "; upgrade Loom to open it" : ""));
    }
  }

  void checkMasterKey() {
    auto nonceHex = meta("check_nonce");
    auto sealedHex = meta("check");
    if (!nonceHex && !sealedHex) {  // a new store: this master key is the one
      detail::CheckValue check = detail::newCheckValue(master);
      setMeta("check_nonce", check.nonceHex);
      setMeta("check", check.sealedHex);
      return;
    }
    detail::verifyCheckValue(master, nonceHex, sealedHex, "'" + path + "'", origin);
  }

  // The subject's current key row, unwrapped; nullopt when it has none.
  std::optional<DataKey> current(const std::string& subject) {
    StatementUse select(
        db.prepare("SELECT key_id, nonce, wrapped FROM subject_keys WHERE subject = ?1"));
    select->bind(1, std::string_view(subject));
    if (!select->step("read subject key")) return std::nullopt;
    return detail::unwrapKey(master, subject, select->text(0), select->text(1), select->text(2),
                             "'" + path + "'");
  }

  DataKey create(const std::string& subject) {
    auto [key, wrapped] = detail::newWrappedKey(master, subject);
    StatementUse insert(
        db.prepare("INSERT INTO subject_keys (subject, key_id, nonce, wrapped, created_at) "
                   "VALUES (?1, ?2, ?3, ?4, ?5)"));
    insert->bind(1, std::string_view(subject));
    insert->bind(2, std::string_view(wrapped.keyId));
    insert->bind(3, std::string_view(wrapped.nonceHex));
    insert->bind(4, std::string_view(wrapped.wrappedHex));
    insert->bind(5, clock->nowMillis());
    insert->step("create subject key");
    return std::move(key);
  }

  // Copies the WAL into the database and truncates it, so neither the -wal file nor the
  // database file keeps the old page of the deleted key row (the database file holds it until
  // the checkpoint writes the new page over it). Until then the erasure is not done: busy
  // (another process reading past the busy timeout) is an error that says so, and the shred
  // of a shredded subject checkpoints again.
  void checkpoint(const std::string& subject) {
    // The checkpoint lock is taken without the busy handler: another connection's checkpoint
    // (SQLite's automatic one, a store opening) makes it busy at once, so it is tried again
    // until the busy timeout has passed.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busyTimeoutMillis);
    int rc = db.truncateWal(busyTimeoutMillis);
    while (((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      rc = db.truncateWal(busyTimeoutMillis);
    }
    if (rc == SQLITE_OK) return;
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
      throw UnavailableError(
          "the key of subject '" + shownSubject(subject) +
          "' is shredded, but another process kept reading " + path +
          " (or checkpointing it) past the busy timeout (a `loom serve`, a worker, a "
          "backup or a query), so the old copy of its wrapped key stays in that file and its "
          "write-ahead log until a checkpoint runs: run `" +
          eraseCommand(subject) + "` again, after pausing a reader that holds the home for long");
    }
    try {
      db.fail(rc, "checkpoint the WAL after a shred");
    } catch (const Error& e) {
      rethrowWithContext(e, "the key of subject '" + shownSubject(subject) +
                                "' is shredded, but its old bytes may stay in the write-ahead log "
                                "until a checkpoint succeeds; fix the cause (it follows), then "
                                "shred it again (`" +
                                eraseCommand(subject) + "` again)");
    }
  }

  const std::string path;
  const std::string origin;
  const std::shared_ptr<const Clock> clock;
  detail::SecretKey master;  // wiped on destruction
  mutable std::mutex mu;
  const int busyTimeoutMillis;
  mutable Db db;  // GUARDED_BY(mu)
};

SqliteKeyStore::SqliteKeyStore(SqliteKeyStoreOptions options) {
  // Our copy of the master key is wiped however the constructor ends.
  struct WipeOnExit {
    detail::Key& key;
    ~WipeOnExit() { detail::wipe(key); }
  } wipeOptions{options.masterKey};
  if (options.path.empty() || options.path == ":memory:") {
    throw InvalidArgumentError("sqlite key store needs a database file path, not '" + options.path +
                               "'");
  }
  if (!options.clock) options.clock = systemClock();
  impl_ = std::make_unique<Impl>(options);
}

SqliteKeyStore::~SqliteKeyStore() = default;

DataKey SqliteKeyStore::getOrCreate(const std::string& subject) {
  if (subject.empty()) throw InvalidArgumentError("a data subject must not be empty");
  requireUtf8(subject, "the data subject");
  std::lock_guard lock(impl_->mu);
  if (auto key = impl_->current(subject)) return std::move(*key);
  // Another process may create it between the read and the write: decide inside the write
  // transaction.
  Transaction tx(impl_->db, "begin key creation");
  std::optional<DataKey> key = impl_->current(subject);
  if (!key) key = impl_->create(subject);
  tx.commit();
  return std::move(*key);
}

std::optional<DataKey> SqliteKeyStore::find(const std::string& subject,
                                            const std::string& keyId) const {
  std::lock_guard lock(impl_->mu);
  StatementUse select(impl_->db.prepare(
      "SELECT nonce, wrapped FROM subject_keys WHERE subject = ?1 AND key_id = ?2"));
  select->bind(1, std::string_view(subject));
  select->bind(2, std::string_view(keyId));
  if (!select->step("find subject key")) return std::nullopt;
  return detail::unwrapKey(impl_->master, subject, keyId, select->text(0), select->text(1),
                           "'" + impl_->path + "'");
}

bool SqliteKeyStore::shred(const std::string& subject) {
  std::lock_guard lock(impl_->mu);
  Transaction tx(impl_->db, "begin shred");
  int64_t deleted = 0;
  {
    StatementUse del(impl_->db.prepare("DELETE FROM subject_keys WHERE subject = ?1"));
    del->bind(1, std::string_view(subject));
    del->step("shred subject key");
    deleted = impl_->db.changes();
  }
  if (deleted > 0) {
    StatementUse tomb(impl_->db.prepare(
        "INSERT INTO subject_key_tombstones (subject, shredded_at) VALUES (?1, ?2) "
        "ON CONFLICT (subject) DO UPDATE SET shredded_at = excluded.shredded_at"));
    tomb->bind(1, std::string_view(subject));
    tomb->bind(2, impl_->clock->nowMillis());
    tomb->step("write shred tombstone");
  }
  bool shreddedBefore = false;
  if (deleted == 0) {
    StatementUse tomb(impl_->db.prepare("SELECT 1 FROM subject_key_tombstones WHERE subject = ?1"));
    tomb->bind(1, std::string_view(subject));
    shreddedBefore = tomb->step("read shred tombstone");
  }
  tx.commit();
  // Shredding again checkpoints again: the checkpoint of the first shred may have failed (a
  // full disk, an I/O error) after its delete committed, leaving the wrapped key in old frames,
  // and an erasure run again must be able to finish it.
  if (deleted > 0 || shreddedBefore) impl_->checkpoint(subject);
  return deleted > 0;
}

bool SqliteKeyStore::wasShredded(const std::string& subject) const {
  std::lock_guard lock(impl_->mu);
  StatementUse select(impl_->db.prepare("SELECT 1 FROM subject_key_tombstones WHERE subject = ?1"));
  select->bind(1, std::string_view(subject));
  return select->step("read shred tombstone");
}

std::vector<std::string> SqliteKeyStore::subjects() const {
  std::lock_guard lock(impl_->mu);
  StatementUse select(impl_->db.prepare("SELECT subject FROM subject_keys ORDER BY subject"));
  std::vector<std::string> out;
  while (select->step("list subjects")) out.emplace_back(select->text(0));
  return out;
}

const std::string& SqliteKeyStore::path() const { return impl_->path; }

}  // namespace loom::compliance

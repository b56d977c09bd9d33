#include "loom/content/sqlite_content_store.h"

#include <sqlite3.h>

#include <atomic>
#include <charconv>
#include <filesystem>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "blob_codec.h"
#include "loom/util/error.h"
#include "store_support.h"
#include "util/sqlite_db.h"

namespace loom::content {
namespace {

using Connection = loom::sqlite::Db;
using loom::sqlite::StatementUse;

// Content schema 3: a rowid table, so rows are appended at the end of the table (a put dirties
// the last leaf, which stays cached, not a random leaf of a table keyed by hash) and keep up to
// about 4 kB in their leaf; the address is a unique index of small entries.
constexpr const char* kCreateTables = R"sql(
CREATE TABLE IF NOT EXISTS content_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS blobs (
  address TEXT NOT NULL,
  bytes BLOB NOT NULL,
  size INTEGER NOT NULL,
  touched_at INTEGER NOT NULL,
  encoding INTEGER NOT NULL DEFAULT 0);
)sql";
constexpr const char* kCreateAddressIndex =
    "CREATE UNIQUE INDEX IF NOT EXISTS blobs_by_address ON blobs (address)";
// Schemas 1 and 2 kept blobs in a WITHOUT ROWID table keyed by address: copied into the layout
// above (the old table's pages are zeroed as it is dropped: secure_delete).
constexpr const char* kMigrateToRowid = R"sql(
CREATE TABLE blobs_v3 (
  address TEXT NOT NULL,
  bytes BLOB NOT NULL,
  size INTEGER NOT NULL,
  touched_at INTEGER NOT NULL,
  encoding INTEGER NOT NULL DEFAULT 0);
INSERT INTO blobs_v3 (address, bytes, size, touched_at, encoding)
  SELECT address, bytes, size, touched_at, encoding FROM blobs;
DROP TABLE blobs;
ALTER TABLE blobs_v3 RENAME TO blobs;
)sql";

// A put rewrites the bytes (repairing a corrupt row) and never moves the touch back.
constexpr const char* kPut =
    "INSERT INTO blobs (address, bytes, size, touched_at, encoding) VALUES (?1, ?2, ?3, ?4, ?5) "
    "ON CONFLICT (address) DO UPDATE SET bytes = excluded.bytes, size = excluded.size, "
    "encoding = excluded.encoding, touched_at = max(touched_at, excluded.touched_at)";
constexpr const char* kGet = "SELECT bytes, encoding, size FROM blobs WHERE address = ?1";
constexpr const char* kHas = "SELECT 1 FROM blobs WHERE address = ?1";
constexpr const char* kTouchIfSized =
    "UPDATE blobs SET touched_at = max(touched_at, ?3) WHERE address = ?1 AND size = ?2";
constexpr const char* kStat = "SELECT size, touched_at FROM blobs WHERE address = ?1";
constexpr const char* kRemove = "DELETE FROM blobs WHERE address = ?1";
constexpr const char* kDeleteIfUntouched =
    "DELETE FROM blobs WHERE address = ?1 AND touched_at < ?2";
constexpr const char* kEnumerate = "SELECT address, size, touched_at FROM blobs";
constexpr std::size_t kMaxIdleReaders = 8;

int parseSchema(std::string_view text, const std::string& name);

void recordSchema(Connection& c) {
  StatementUse upsert(
      c.prepare("INSERT INTO content_meta (key, value) VALUES ('content_schema', ?1) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value"));
  upsert->bind(1, std::string_view(std::to_string(kSqliteContentSchema)));
  upsert->step("write content_meta.content_schema");
}

// Checks the recorded content schema, recording ours in a new database and migrating an older
// one in place (schema 1 had no encoding column: every row is raw; schemas 1 and 2 a WITHOUT
// ROWID table). True when it moved the blobs into schema 3's table.
bool checkSchema(Connection& c, const std::string& name) {
  int version = 0;
  {
    StatementUse select(c.prepare("SELECT value FROM content_meta WHERE key = 'content_schema'"));
    if (!select->step("read content_meta.content_schema")) {
      c.exec(kCreateAddressIndex, "create blobs_by_address");
      recordSchema(c);
      return false;
    }
    version = parseSchema(select->text(0), name);
  }
  if (version > kSqliteContentSchema || version < kSqliteContentSchemaOldestReadable) {
    throw FailedPreconditionError(
        name + " was written under content schema " + std::to_string(version) +
        " but this build reads content schemas " +
        std::to_string(kSqliteContentSchemaOldestReadable) + " to " +
        std::to_string(kSqliteContentSchema) +
        (version > kSqliteContentSchema ? "; upgrade Loom to open it" : ""));
  }
  if (version < 2 && !c.hasColumn("blobs", "encoding")) {
    c.exec("ALTER TABLE blobs ADD COLUMN encoding INTEGER NOT NULL DEFAULT 0",
           "add blobs.encoding (content schema 2)");
  }
  if (version < 3) c.exec(kMigrateToRowid, "move blobs into a rowid table (content schema 3)");
  c.exec(kCreateAddressIndex, "create blobs_by_address");
  if (version < kSqliteContentSchema) recordSchema(c);
  return version < 3;
}

int parseSchema(std::string_view text, const std::string& name) {
  int version = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw DataLossError(name + ": content_meta.content_schema is '" + std::string(text) +
                        "', not a version number");
  }
  return version;
}

// A row staged on the log's writer (putDeferred), served from memory until it is committed.
struct DeferredRow {
  std::string address;
  std::string bytes;
  detail::EncodedBlob encoded;
  int64_t touchedAt = 0;

  std::string_view stored() const {
    return encoded.encoding == detail::BlobEncoding::kRaw ? std::string_view(bytes)
                                                          : std::string_view(encoded.stored);
  }
};

// The rows staged and not yet committed or lost, by address (a row put twice is counted).
class DeferredRows {
 public:
  void add(const std::shared_ptr<const DeferredRow>& row) {
    std::lock_guard lock(mu_);
    auto& [held, count] = rows_[row->address];
    held = row;
    ++count;
  }
  void settle(const std::string& address) {
    std::lock_guard lock(mu_);
    auto it = rows_.find(address);
    if (it != rows_.end() && --it->second.second == 0) rows_.erase(it);
  }
  std::shared_ptr<const DeferredRow> find(std::string_view address) const {
    std::lock_guard lock(mu_);
    auto it = rows_.find(std::string(address));
    return it == rows_.end() ? nullptr : it->second.first;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::pair<std::shared_ptr<const DeferredRow>, int>> rows_;
};

void insertRow(Connection& c, std::string_view address, std::string_view stored, int64_t size,
               int64_t touchedAt, detail::BlobEncoding encoding) {
  StatementUse insert(c.prepare(kPut));
  insert->bind(1, address);
  insert->bindBlob(2, stored);
  insert->bind(3, size);
  insert->bind(4, touchedAt);
  insert->bind(5, static_cast<int64_t>(encoding));
  insert->step("put blob " + std::string(address));
}

// A lost deferred write's blob found in the database all the same (ADR 0019): touched as its
// put would have, when its size says it holds those bytes. False when there is no such row.
bool touchRow(Connection& c, std::string_view address, int64_t size, int64_t touchedAt) {
  StatementUse touch(c.prepare(kTouchIfSized));
  touch->bind(1, address);
  touch->bind(2, size);
  touch->bind(3, touchedAt);
  touch->step("touch blob " + std::string(address));
  return c.changes() > 0;
}

}  // namespace

struct SqliteContentStore::Impl {
  Impl(std::string p, std::shared_ptr<const Clock> clock, int busy, SqliteContentCommit commit)
      : path(std::move(p)),
        name("sqlite content store '" + path + "'"),
        busyTimeoutMillis(busy),
        touch(std::move(clock), name),
        writer(path, busyTimeoutMillis),
        readers(path, busyTimeoutMillis, kMaxIdleReaders) {
    // journal_mode is persistent in the file and cannot change inside a transaction.
    writer.useWal();
    writer.exec(commit == SqliteContentCommit::kDurable ? "PRAGMA synchronous = FULL"
                                                        : "PRAGMA synchronous = NORMAL",
                "set synchronous");
    // A deleted blob's pages are zeroed, not left in the free list (erasure).
    writer.exec("PRAGMA secure_delete = ON", "enable secure_delete");
    writer.exec("BEGIN IMMEDIATE", "begin schema transaction");
    bool moved = false;
    try {
      writer.exec(kCreateTables, "create content tables");
      moved = checkSchema(writer, name);
      writer.exec("COMMIT", "commit schema");
    } catch (const Error&) {
      writer.execNoThrow("ROLLBACK");  // the first error is the one to report
      throw;
    }
    // The move wrote every blob twice into the WAL, the old copies' pages zeroed: out of the WAL
    // now, or at the next delete or close.
    if (moved) truncateWal(0);
  }

  // A read connection used by one call at a time, back to the pool when the lease ends.
  sqlite::ReaderPool::Lease reader() const { return readers.acquire(); }

  // After a delete: copies the WAL into the database and truncates it, so the frames that held
  // the deleted bytes leave the -wal file. Waits at most `waitMillis` for a reader or writer
  // holding the WAL; when it cannot, the next delete or the store's close (which waits up to
  // the busy timeout) tries again. Best effort: never throws (the delete itself is done).
  void truncateWal(int waitMillis) {
    walHoldsDeleted = writer.truncateWal(waitMillis) != SQLITE_OK;
  }

  ~Impl() {
    if (walHoldsDeleted) truncateWal(busyTimeoutMillis);
  }

  const std::string path;
  const std::string name;  // "sqlite content store '<path>'", the prefix of error messages
  const int busyTimeoutMillis;
  detail::TouchClock touch;
  std::mutex writeMu;
  Connection writer;                // GUARDED_BY(writeMu)
  std::atomic<int64_t> deletes{0};  // rows deleted, so a walk knows to truncate the WAL after
  bool walHoldsDeleted = false;     // GUARDED_BY(writeMu): a truncate after a delete was busy
  sqlite::ReaderPool readers;
  std::shared_ptr<sqlite::BorrowedWriter> logWriter;  // puts run on it while its log is open
  // Shared with the staged writes' callbacks, which may run after the store is gone.
  const std::shared_ptr<DeferredRows> deferred = std::make_shared<DeferredRows>();
};

SqliteContentStore::SqliteContentStore(std::string path, std::shared_ptr<const Clock> clock,
                                       int busyTimeoutMillis, SqliteContentCommit commit,
                                       std::shared_ptr<sqlite::BorrowedWriter> logWriter) {
  if (path.empty() || path == ":memory:") {
    throw InvalidArgumentError("sqlite content store needs a database file path, not '" + path +
                               "'");
  }
  impl_ = std::make_unique<Impl>(path, std::move(clock), busyTimeoutMillis, commit);
  if (!logWriter) return;
  if (commit != SqliteContentCommit::kWithDatabase) {
    throw InvalidArgumentError(impl_->name +
                               ": a log's writer commits puts without a flush of their own; "
                               "pass it only with SqliteContentCommit::kWithDatabase");
  }
  std::error_code ec;
  if (!std::filesystem::equivalent(logWriter->path(), path, ec)) {
    throw InvalidArgumentError(impl_->name + ": the log's writer writes '" + logWriter->path() +
                               "', another file; pass only the writer of the log in this file");
  }
  impl_->logWriter = std::move(logWriter);
}

SqliteContentStore::~SqliteContentStore() = default;

ContentCapabilities SqliteContentStore::capabilities() const {
  return {.remove = true,
          .deleteIfUntouchedSince = true,
          .touchClock = true,
          .enumerate = true,
          .sealsContent = false};
}

std::string SqliteContentStore::put(std::string_view bytes, const std::optional<std::string>&) {
  std::string address = sha256Hex(bytes);
  detail::EncodedBlob encoded = detail::encodeBlob(bytes);
  std::string_view stored =
      encoded.encoding == detail::BlobEncoding::kRaw ? bytes : std::string_view(encoded.stored);
  const std::function<void(Connection&)> insertOn = [&](Connection& c) {
    insertRow(c, address, stored, static_cast<int64_t>(bytes.size()), impl_->touch.now(),
              encoded.encoding);
  };
  if (impl_->logWriter && impl_->logWriter->run(insertOn)) return address;
  std::lock_guard lock(impl_->writeMu);
  insertOn(impl_->writer);
  return address;
}

std::string SqliteContentStore::putDeferred(std::string_view bytes,
                                            const std::optional<std::string>& subject) {
  if (!impl_->logWriter) return put(bytes, subject);
  return putDeferredAt(sha256Hex(bytes), bytes);
}

std::string SqliteContentStore::putDeferredAt(std::string address, std::string_view bytes) {
  if (!impl_->logWriter) return put(bytes);
  auto row = std::make_shared<DeferredRow>(
      DeferredRow{address, std::string(bytes), detail::encodeBlob(bytes), impl_->touch.now()});
  impl_->deferred->add(row);
  bool staged = false;
  try {
    staged = impl_->logWriter->stage(
        address,
        [row](Connection& c) {
          insertRow(c, row->address, row->stored(), static_cast<int64_t>(row->bytes.size()),
                    row->touchedAt, row->encoded.encoding);
        },
        [deferred = impl_->deferred, address](std::exception_ptr) { deferred->settle(address); },
        [address, size = static_cast<int64_t>(bytes.size()), at = row->touchedAt](Connection& c) {
          return touchRow(c, address, size, at);
        });
  } catch (...) {
    impl_->deferred->settle(address);  // never staged: not to be served from memory
    throw;
  }
  if (staged) return address;
  impl_->deferred->settle(address);  // the log has closed: put on this store's writer
  return put(bytes);
}

std::optional<std::string> SqliteContentStore::get(std::string_view address,
                                                   const std::optional<std::string>&) const {
  detail::requireAddress(address, impl_->name);
  if (auto row = impl_->deferred->find(address)) return row->bytes;
  std::string bytes;
  {
    auto c = impl_->reader();
    StatementUse select(c->prepare(kGet));
    select->bind(1, address);
    if (!select->step("get blob " + std::string(address))) return std::nullopt;
    bytes = detail::decodeBlob(select->blob(0), select->int64(1), select->int64(2),
                               "blob " + std::string(address) + " in " + impl_->name);
  }
  detail::verifyBytes(bytes, address, impl_->name);
  return bytes;
}

bool SqliteContentStore::has(std::string_view address) const {
  detail::requireAddress(address, impl_->name);
  if (impl_->deferred->find(address)) return true;
  auto c = impl_->reader();
  StatementUse select(c->prepare(kHas));
  select->bind(1, address);
  return select->step("look up blob " + std::string(address));
}

bool SqliteContentStore::remove(std::string_view address) {
  detail::requireAddress(address, impl_->name);
  std::lock_guard lock(impl_->writeMu);
  {
    StatementUse del(impl_->writer.prepare(kRemove));
    del->bind(1, address);
    del->step("remove blob " + std::string(address));
  }  // reset: the statement's transaction ends before the checkpoint
  if (impl_->writer.changes() == 0) return false;
  ++impl_->deletes;
  impl_->truncateWal(0);
  return true;
}

bool SqliteContentStore::deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis) {
  detail::requireAddress(address, impl_->name);
  std::lock_guard lock(impl_->writeMu);
  {
    StatementUse del(impl_->writer.prepare(kDeleteIfUntouched));
    del->bind(1, address);
    del->bind(2, cutoffMillis);
    del->step("delete blob " + std::string(address) + " if untouched");
  }
  if (impl_->writer.changes() == 0) return false;
  ++impl_->deletes;
  impl_->truncateWal(0);
  return true;
}

int64_t SqliteContentStore::touchClock() const { return impl_->touch.now(); }

void SqliteContentStore::forEachBlob(const std::function<void(const BlobInfo&)>& visit) const {
  int64_t deletesBefore = impl_->deletes.load();
  {
    // One read transaction for the walk; a visitor's calls use other connections.
    auto c = impl_->reader();
    StatementUse select(c->prepare(kEnumerate));
    while (select->step("enumerate blobs")) {
      visit(BlobInfo{std::string(select->text(0)), select->int64(1), select->int64(2)});
    }
  }
  // The walk's read transaction kept the WAL from being truncated after the visitor's deletes.
  if (impl_->deletes.load() != deletesBefore) {
    std::lock_guard lock(impl_->writeMu);
    impl_->truncateWal(0);
  }
}

std::optional<BlobInfo> SqliteContentStore::stat(std::string_view address) const {
  detail::requireAddress(address, impl_->name);
  if (auto row = impl_->deferred->find(address)) {
    return BlobInfo{row->address, static_cast<int64_t>(row->bytes.size()), row->touchedAt};
  }
  auto c = impl_->reader();
  StatementUse select(c->prepare(kStat));
  select->bind(1, address);
  if (!select->step("stat blob " + std::string(address))) return std::nullopt;
  return BlobInfo{std::string(address), select->int64(0), select->int64(1)};
}

const std::string& SqliteContentStore::path() const { return impl_->path; }

}  // namespace loom::content

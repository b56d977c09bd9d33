// The SQLite ContentStore: every blob a row of one table, blobs(address, bytes, size,
// touched_at, encoding) with a unique index on address, in a database file in WAL mode; bytes that
// compress by a tenth or more are kept as one zstd frame. With SqliteContentCommit::
// kDurable (synchronous=FULL) a put is durable when it returns; with kWithDatabase it is durable
// with the next synchronous commit to the same file (PackedContentStore: blobs in a log's own
// database). Deletes run under secure_delete and then truncate the WAL when no reader holds it,
// so a deleted blob's bytes leave the file (docs/spec/content-store.md). A put is one INSERT ... ON
// CONFLICT statement and a conditional delete one DELETE ... WHERE touched_at < cutoff, so both are
// atomic against each other in this process and in any other sharing the file. get hashes the bytes
// it read and never returns bytes that do not match their address. Reads use pooled connections
// beside the one writer connection. Schema: docs/spec/content-store.md. Thread-safe; several
// processes may share one file; a forEachBlob visitor may call back into the store.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "loom/content/content_store.h"
#include "loom/util/clock.h"

namespace loom::sqlite {
class BorrowedWriter;
}

namespace loom::content {

// The schema version recorded in content_meta and the range a build opens (an older one is
// migrated in place when opened). 2: blobs.encoding (a row's bytes may be one zstd frame).
// 3: blobs a rowid table with a unique index on address (it was WITHOUT ROWID, keyed by address).
inline constexpr int kSqliteContentSchema = 3;
inline constexpr int kSqliteContentSchemaOldestReadable = 1;

// When a put is durable.
enum class SqliteContentCommit {
  kDurable,  // synchronous=FULL: durable when put returns
  // synchronous=NORMAL: durable with the next synchronous commit of any connection to the same
  // database file. WAL frames are recovered as a prefix, so a blob put in a log's own database
  // is durable before any later commit there that cites it.
  kWithDatabase,
};

class SqliteContentStore : public ContentStore {
 public:
  // Opens (creating when missing) the database at `path`. Throws FailedPreconditionError when
  // it was written under a newer content schema (naming both versions), DataLossError when
  // the file is not a readable SQLite database, UnavailableError when another process keeps
  // it locked past `busyTimeoutMillis`, InvalidArgumentError for an empty path or null clock.
  // `logWriter` (internal to Loom's stores, for the home's packed blobs: ADR 0017): the writer
  // the event log in the same file lends (SqliteEventStore::lendWriter); puts run in the log's
  // group commits while it is open, committed as kWithDatabase puts are. Everything else, and
  // every put once the log is closed, uses this store's own writer. InvalidArgumentError when
  // it writes another file or `commit` is not kWithDatabase.
  SqliteContentStore(std::string path, std::shared_ptr<const Clock> clock,
                     int busyTimeoutMillis = 5000,
                     SqliteContentCommit commit = SqliteContentCommit::kDurable,
                     std::shared_ptr<sqlite::BorrowedWriter> logWriter = nullptr);
  // No call may be running when the store is destroyed.
  ~SqliteContentStore() override;
  SqliteContentStore(const SqliteContentStore&) = delete;
  SqliteContentStore& operator=(const SqliteContentStore&) = delete;

  // ContentStore; see content_store.h for each contract. `subject` is ignored. Besides, every
  // method may throw UnavailableError (locked past the busy timeout, a full disk, a disk I/O
  // error: retry), DataLossError
  // (the file is corrupt) or InternalError, each naming the database path. A put always
  // rewrites the row's bytes, so putting the original bytes again repairs a corrupt blob.
  ContentCapabilities capabilities() const override;
  std::string put(std::string_view bytes,
                  const std::optional<std::string>& subject = std::nullopt) override;
  // With a log's writer: the row is staged on it (BorrowedWriter::stage) and written in the
  // log's next group commit, before that group's appends; get, has and stat serve it from
  // memory until then. Without one, or once the log is closed: put.
  std::string putDeferred(std::string_view bytes,
                          const std::optional<std::string>& subject = std::nullopt) override;
  std::optional<std::string> get(
      std::string_view address,
      const std::optional<std::string>& subject = std::nullopt) const override;
  bool has(std::string_view address) const override;
  bool remove(std::string_view address) override;
  bool deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis) override;
  int64_t touchClock() const override;
  void forEachBlob(const std::function<void(const BlobInfo&)>& visit) const override;
  std::optional<BlobInfo> stat(std::string_view address) const override;

  const std::string& path() const;

 private:
  friend class PackedContentStore;
  // putDeferred of bytes whose address the caller computed (sha256Hex(bytes)).
  std::string putDeferredAt(std::string address, std::string_view bytes);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::content

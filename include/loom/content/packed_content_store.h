// The embedded home's default content store (ADR 0014): a blob smaller than `packBelowBytes`
// is a row of the home's own database (loom.db, a SqliteContentStore opened with
// SqliteContentCommit::kWithDatabase), so its put costs no flush of its own: the commit of the
// event that cites it flushes the same WAL, whose frames are recovered as a prefix. A larger
// blob is one file of the filesystem store (<home>/blobs), flushed as that store does. Blobs an
// older build stored as files stay there and are read, touched and deleted where they are.
// Format and crash guarantees: docs/spec/content-store.md. Thread-safe; several processes may
// share one home.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "loom/content/content_store.h"
#include "loom/content/filesystem_content_store.h"
#include "loom/content/sqlite_content_store.h"

namespace loom::content {

class PackedContentStore : public ContentStore {
 public:
  // `pack` and `files` share one clock. `packBelowBytes` 0 packs nothing (every new blob is a
  // file; packed blobs are still read). Throws InvalidArgumentError for a null store or a
  // negative size.
  PackedContentStore(std::shared_ptr<SqliteContentStore> pack,
                     std::shared_ptr<FilesystemContentStore> files, int64_t packBelowBytes);

  // ContentStore; see content_store.h. A put of bytes stored in the other place touches that
  // copy. A blob held in both places (packed, then put as a file by a build with packing off)
  // is one blob: get and has read either (get falls back to the file when the row is corrupt);
  // remove and deleteIfUntouchedSince delete both copies and report true only when no copy is
  // left; forEachBlob visits it once (with the packed copy's touch: a conditional delete still
  // spares a file copy touched later), or twice when its row is deleted during the walk.
  ContentCapabilities capabilities() const override;
  std::string put(std::string_view bytes,
                  const std::optional<std::string>& subject = std::nullopt) override;
  // A blob to pack is staged on the log's writer (SqliteContentStore::putDeferred); a larger
  // one, or one already stored as a file, is put now.
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

  const SqliteContentStore& pack() const { return *pack_; }
  const FilesystemContentStore& files() const { return *files_; }
  int64_t packBelowBytes() const { return packBelowBytes_; }

 private:
  std::shared_ptr<SqliteContentStore> pack_;
  std::shared_ptr<FilesystemContentStore> files_;
  int64_t packBelowBytes_;
};

}  // namespace loom::content

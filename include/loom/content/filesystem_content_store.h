// The filesystem ContentStore, the embedded default for blobs: one file per blob in sharded
// folders, <root>/<aa>/<bb>/<address> (aa and bb: the address's first two pairs of hex
// digits). A put writes a temp file in <root>/tmp/, fsyncs it, renames it into place and
// fsyncs the folder, so a crash never leaves a partial blob under a real address; temp files
// no live writer holds are removed when a store is opened. A blob's last-touched time is its
// file's mtime, set from the injected Clock. Puts, removes and conditional deletes of one
// address are serialized by a mutex plus an flock on a stripe lock file (<root>/locks/<x>),
// so deleteIfUntouchedSince is atomic against a concurrent put in this process and in any
// other. get hashes what it read and never returns bytes that do not match their address.
// Format: docs/spec/content-store.md. Thread-safe; several processes may share one root.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "loom/content/content_store.h"
#include "loom/util/clock.h"

namespace loom::content {

// The layout version written to <root>/LAYOUT and the range a build opens.
inline constexpr int kFilesystemLayoutVersion = 2;
inline constexpr int kFilesystemLayoutOldestReadable = 1;

class FilesystemContentStore : public ContentStore {
 public:
  // Opens the store at `root`, creating the folder, its LAYOUT file, tmp/ and locks/ when
  // missing, and removes stray temp files (those no live writer holds locked). Throws
  // FailedPreconditionError when the folder is not writable or was written under a newer
  // layout (naming both versions), DataLossError when its LAYOUT file is unreadable,
  // InvalidArgumentError when `clock` is null.
  FilesystemContentStore(std::filesystem::path root, std::shared_ptr<const Clock> clock);
  ~FilesystemContentStore() override;
  FilesystemContentStore(const FilesystemContentStore&) = delete;
  FilesystemContentStore& operator=(const FilesystemContentStore&) = delete;

  // ContentStore; see content_store.h for each contract. `subject` is ignored. Besides,
  // every method may throw UnavailableError (disk full, out of file descriptors: retry),
  // FailedPreconditionError (no permission: fix the folder) or DataLossError (I/O error),
  // each naming the path. A put over a stored copy that no longer matches its address
  // replaces it (so putting the original bytes again repairs a corrupt blob).
  ContentCapabilities capabilities() const override;
  std::string put(std::string_view bytes,
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

  // Puts every blob of `batch` (duplicates allowed) with the guarantees of put, but flushes
  // the batch's temp files together: one disk round trip per batch instead of one per blob.
  // Returns the addresses in the order of `batch`. Every blob is durable when it returns; on
  // an error, each blob is either wholly stored or absent.
  std::vector<std::string> putMany(std::span<const std::string_view> batch);

  // Where the blob at `address` lives (whether or not it exists). Throws InvalidArgumentError
  // for a malformed address.
  std::filesystem::path blobPath(std::string_view address) const;
  const std::filesystem::path& root() const;
  // Stray temp files this store removed when it was opened.
  int64_t strayTempFilesRemoved() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::content

#include "loom/content/packed_content_store.h"

#include "loom/util/error.h"

namespace loom::content {

PackedContentStore::PackedContentStore(std::shared_ptr<SqliteContentStore> pack,
                                       std::shared_ptr<FilesystemContentStore> files,
                                       int64_t packBelowBytes)
    : pack_(std::move(pack)), files_(std::move(files)), packBelowBytes_(packBelowBytes) {
  if (!pack_ || !files_) throw InvalidArgumentError("a packed content store needs both stores");
  if (packBelowBytes_ < 0) {
    throw InvalidArgumentError("packBelowBytes must be 0 or more, not " +
                               std::to_string(packBelowBytes_));
  }
}

ContentCapabilities PackedContentStore::capabilities() const {
  return {.remove = true,
          .deleteIfUntouchedSince = true,
          .touchClock = true,
          .enumerate = true,
          .sealsContent = false};
}

std::string PackedContentStore::put(std::string_view bytes, const std::optional<std::string>&) {
  // A copy stored in the other place (by an older build, or with another packBelowBytes) is
  // touched where it is, so equal bytes never take space twice.
  if (static_cast<int64_t>(bytes.size()) >= packBelowBytes_) {
    return pack_->has(sha256Hex(bytes)) ? pack_->put(bytes) : files_->put(bytes);
  }
  return files_->has(sha256Hex(bytes)) ? files_->put(bytes) : pack_->put(bytes);
}

std::string PackedContentStore::putDeferred(std::string_view bytes,
                                            const std::optional<std::string>& subject) {
  if (static_cast<int64_t>(bytes.size()) >= packBelowBytes_) return put(bytes, subject);
  std::string address = sha256Hex(bytes);
  if (files_->has(address)) return files_->put(bytes);
  return pack_->putDeferredAt(std::move(address), bytes);
}

std::optional<std::string> PackedContentStore::get(std::string_view address,
                                                   const std::optional<std::string>&) const {
  try {
    if (auto bytes = pack_->get(address)) return bytes;
  } catch (const DataLossError&) {
    if (!files_->has(address)) throw;  // a good copy as a file still serves the blob
  }
  return files_->get(address);
}

bool PackedContentStore::has(std::string_view address) const {
  return pack_->has(address) || files_->has(address);
}

bool PackedContentStore::remove(std::string_view address) {
  bool packed = pack_->remove(address);
  bool file = files_->remove(address);
  return packed || file;
}

bool PackedContentStore::deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis) {
  bool packed = pack_->deleteIfUntouchedSince(address, cutoffMillis);
  bool file = files_->deleteIfUntouchedSince(address, cutoffMillis);
  // Deleted means gone: a copy touched since the cutoff (in the other place) spares the blob.
  return (packed || file) && !has(address);
}

int64_t PackedContentStore::touchClock() const { return pack_->touchClock(); }

void PackedContentStore::forEachBlob(const std::function<void(const BlobInfo&)>& visit) const {
  pack_->forEachBlob(visit);
  files_->forEachBlob([&](const BlobInfo& blob) {
    if (!pack_->has(blob.address)) visit(blob);  // a packed copy was visited already
  });
}

std::optional<BlobInfo> PackedContentStore::stat(std::string_view address) const {
  if (auto blob = pack_->stat(address)) return blob;
  return files_->stat(address);
}

}  // namespace loom::content

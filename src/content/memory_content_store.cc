#include "loom/content/memory_content_store.h"

#include <algorithm>
#include <vector>

#include "store_support.h"

namespace loom::content {
namespace {
constexpr std::string_view kName = "memory content store";
}

MemoryContentStore::MemoryContentStore(std::shared_ptr<const Clock> clock)
    : touch_(std::make_unique<detail::TouchClock>(std::move(clock), kName)) {}

MemoryContentStore::~MemoryContentStore() = default;

ContentCapabilities MemoryContentStore::capabilities() const {
  return {.remove = true,
          .deleteIfUntouchedSince = true,
          .touchClock = true,
          .enumerate = true,
          .sealsContent = false};
}

std::string MemoryContentStore::put(std::string_view bytes, const std::optional<std::string>&) {
  std::string address = sha256Hex(bytes);
  std::lock_guard lock(mu_);
  // The touch is read under the lock so it is ordered with deleteIfUntouchedSince.
  int64_t now = touch_->now();
  auto [it, inserted] = blobs_.try_emplace(address);
  if (inserted) it->second.bytes.assign(bytes);
  it->second.touchedMillis = std::max(it->second.touchedMillis, now);
  return address;
}

std::optional<std::string> MemoryContentStore::get(std::string_view address,
                                                   const std::optional<std::string>&) const {
  detail::requireAddress(address, kName);
  std::lock_guard lock(mu_);
  auto it = blobs_.find(std::string(address));
  if (it == blobs_.end()) return std::nullopt;
  return it->second.bytes;
}

bool MemoryContentStore::has(std::string_view address) const {
  detail::requireAddress(address, kName);
  std::lock_guard lock(mu_);
  return blobs_.contains(std::string(address));
}

bool MemoryContentStore::remove(std::string_view address) {
  detail::requireAddress(address, kName);
  std::lock_guard lock(mu_);
  return blobs_.erase(std::string(address)) > 0;
}

bool MemoryContentStore::deleteIfUntouchedSince(std::string_view address, int64_t cutoffMillis) {
  detail::requireAddress(address, kName);
  std::lock_guard lock(mu_);
  auto it = blobs_.find(std::string(address));
  if (it == blobs_.end() || it->second.touchedMillis >= cutoffMillis) return false;
  blobs_.erase(it);
  return true;
}

int64_t MemoryContentStore::touchClock() const { return touch_->now(); }

void MemoryContentStore::forEachBlob(const std::function<void(const BlobInfo&)>& visit) const {
  std::vector<BlobInfo> infos;
  {
    std::lock_guard lock(mu_);
    infos.reserve(blobs_.size());
    for (const auto& [address, blob] : blobs_) {
      infos.push_back({address, static_cast<int64_t>(blob.bytes.size()), blob.touchedMillis});
    }
  }
  for (const auto& info : infos) visit(info);
}

std::optional<BlobInfo> MemoryContentStore::stat(std::string_view address) const {
  detail::requireAddress(address, kName);
  std::lock_guard lock(mu_);
  auto it = blobs_.find(std::string(address));
  if (it == blobs_.end()) return std::nullopt;
  return BlobInfo{it->first, static_cast<int64_t>(it->second.bytes.size()),
                  it->second.touchedMillis};
}

}  // namespace loom::content

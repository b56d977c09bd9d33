// The in-memory ContentStore: blobs live in process memory, each a private copy (nothing a
// caller holds aliases a stored blob). For tests, benchmarks and embedded runs that need no
// durability. Declares every capability except sealsContent. Touch times come from the
// injected Clock, made monotonic per store. Thread-safe (one mutex); forEachBlob copies the
// blob list before visiting, so a visitor may call back into the store.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "loom/content/content_store.h"
#include "loom/util/clock.h"

namespace loom::content {

namespace detail {
class TouchClock;
}

class MemoryContentStore : public ContentStore {
 public:
  // Throws InvalidArgumentError when `clock` is null.
  explicit MemoryContentStore(std::shared_ptr<const Clock> clock);
  ~MemoryContentStore() override;
  MemoryContentStore(const MemoryContentStore&) = delete;
  MemoryContentStore& operator=(const MemoryContentStore&) = delete;

  // ContentStore; see content_store.h for each contract. `subject` is ignored.
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

 private:
  struct Blob {
    std::string bytes;
    int64_t touchedMillis = 0;
  };
  std::unique_ptr<detail::TouchClock> touch_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Blob> blobs_;  // GUARDED_BY(mu_)
};

}  // namespace loom::content

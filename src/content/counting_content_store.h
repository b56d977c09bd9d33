// A ContentStore wrapper for tests that forwards every call to an inner store and counts the
// calls by kind (put, get, has, remove, deleteIfUntouchedSince, touchClock, forEachBlob,
// stat). Tests use it to prove that a replay makes zero content-store calls. A call is
// counted when it starts, so one that throws counts too; capabilities() is forwarded and not
// counted. Thread-safe as the inner store (the counters are atomic). The inner store must
// outlive the wrapper.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "content/content_call.h"
#include "loom/content/content_store.h"

namespace loom::content {

class CountingContentStore : public ContentStore {
 public:
  explicit CountingContentStore(ContentStore& inner) : inner_(inner) {}

  // Calls of `kind` since construction or the last reset().
  int64_t count(ContentCall kind) const;
  // The same by method name ("put", ...); throws InvalidArgumentError for another name.
  int64_t count(std::string_view kind) const;
  // Calls of every kind.
  int64_t total() const;
  // Sets every counter to zero.
  void reset();

  // ContentStore: forwarded to the inner store unchanged.
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
  void note(ContentCall kind) const;

  ContentStore& inner_;
  mutable std::array<std::atomic<int64_t>, kContentCallKinds> counts_{};
};

}  // namespace loom::content

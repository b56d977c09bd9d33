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

#include "content/intercepting_content_store.h"

namespace loom::content {

class CountingContentStore : public InterceptingContentStore {
 public:
  explicit CountingContentStore(ContentStore& inner) : InterceptingContentStore(inner) {}

  // Calls of `kind` since construction or the last reset().
  int64_t count(ContentCall kind) const;
  // The same by method name ("put", ...); throws InvalidArgumentError for another name.
  int64_t count(std::string_view kind) const;
  // Calls of every kind.
  int64_t total() const;
  // Sets every counter to zero.
  void reset();

 private:
  void onCall(ContentCall kind) const override;

  mutable std::array<std::atomic<int64_t>, kContentCallKinds> counts_{};
};

}  // namespace loom::content

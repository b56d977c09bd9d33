// Fault injection for crash tests: a ContentStore wrapper that forwards every call to an
// inner store until told to fail. failFrom(kind, n) makes the nth call of that kind from now
// on, and every later one, throw UnavailableError without reaching the inner store (as a
// store that died at that call). capabilities() is forwarded and never fails. Thread-safe as
// the inner store (the counters are atomic). The inner store must outlive the wrapper.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "content/content_call.h"
#include "loom/content/content_store.h"

namespace loom::content {

class FaultyContentStore : public ContentStore {
 public:
  explicit FaultyContentStore(ContentStore& inner) : inner_(inner) {}

  // Numbers the calls of `kind` from 1 again; call `n` and every later one fail. n = 0 never
  // fails (undoes an earlier failFrom). Other kinds are unaffected.
  void failFrom(ContentCall kind, int64_t n);
  // Calls of `kind` since the last failFrom of that kind (failed ones included).
  int64_t calls(ContentCall kind) const;

  // ContentStore: forwarded to the inner store unless the call is set to fail.
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
  // Counts a call of `kind`; throws UnavailableError when it is set to fail.
  void enter(ContentCall kind) const;

  ContentStore& inner_;
  std::array<std::atomic<int64_t>, kContentCallKinds> failFrom_{};  // 0 = never
  mutable std::array<std::atomic<int64_t>, kContentCallKinds> calls_{};
};

}  // namespace loom::content

// Fault injection for crash tests: a ContentStore wrapper that forwards every call to an
// inner store until told to fail. failFrom(kind, n) makes the nth call of that kind from now
// on, and every later one, throw UnavailableError without reaching the inner store (as a
// store that died at that call). capabilities() is forwarded and never fails. Thread-safe as
// the inner store (the counters are atomic). The inner store must outlive the wrapper.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "content/intercepting_content_store.h"

namespace loom::content {

class FaultyContentStore : public InterceptingContentStore {
 public:
  explicit FaultyContentStore(ContentStore& inner) : InterceptingContentStore(inner) {}

  // Numbers the calls of `kind` from 1 again; call `n` and every later one fail. n = 0 never
  // fails (undoes an earlier failFrom). Other kinds are unaffected.
  void failFrom(ContentCall kind, int64_t n);
  // Calls of `kind` since the last failFrom of that kind (failed ones included).
  int64_t calls(ContentCall kind) const;

 private:
  // Counts a call of `kind`; throws UnavailableError when it is set to fail.
  void onCall(ContentCall kind) const override;

  std::array<std::atomic<int64_t>, kContentCallKinds> failFrom_{};  // 0 = never
  mutable std::array<std::atomic<int64_t>, kContentCallKinds> calls_{};
};

}  // namespace loom::content

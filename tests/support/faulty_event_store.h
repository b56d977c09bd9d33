// Fault injection for crash tests: an EventStore wrapper that fails from its Nth append on
// (throwing UnavailableError, writing nothing), as a store that dies at a chosen write.
// Everything else is forwarded (ForwardingEventStore). Thread-safe as the wrapped store.
#pragma once

#include <atomic>

#include "loom/kernel/forwarding_event_store.h"
#include "loom/util/error.h"

namespace loom::testing {

class FaultyEventStore : public kernel::ForwardingEventStore {
 public:
  explicit FaultyEventStore(kernel::EventStore& inner) : ForwardingEventStore(inner) {}

  // Appends numbered from 1; append number `n` and every later one fail. 0 = never.
  void failFromAppend(int64_t n) {
    failFrom_ = n;
    appends_ = 0;
  }
  int64_t appends() const { return appends_; }

  int64_t append(const std::string& id, int64_t expected,
                 std::vector<kernel::Event> events) override {
    int64_t n = ++appends_;
    if (failFrom_ > 0 && n >= failFrom_)
      throw UnavailableError("injected: store died at append " + std::to_string(n));
    return ForwardingEventStore::append(id, expected, std::move(events));
  }

 private:
  std::atomic<int64_t> failFrom_{0};
  std::atomic<int64_t> appends_{0};
};

}  // namespace loom::testing

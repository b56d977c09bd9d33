// Fault injection for crash tests: an EventStore wrapper that fails from its Nth append on
// (throwing UnavailableError, writing nothing), as a store that dies at a chosen write.
// Everything else is forwarded. Thread-safe as the wrapped store.
#pragma once

#include <atomic>

#include "loom/kernel/event_store.h"
#include "loom/util/error.h"

namespace loom::testing {

class FaultyEventStore : public kernel::EventStore {
 public:
  explicit FaultyEventStore(kernel::EventStore& inner) : inner_(inner) {}

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
    return inner_.append(id, expected, std::move(events));
  }
  void scan(const std::string& id, int64_t from,
            const std::function<void(const kernel::Event&)>& visit) const override {
    inner_.scan(id, from, visit);
  }
  std::optional<kernel::ExecutionInfo> info(const std::string& id) const override {
    return inner_.info(id);
  }
  std::vector<kernel::ExecutionInfo> list(const kernel::ExecutionFilter& f) const override {
    return inner_.list(f);
  }
  bool remove(const std::string& id) override { return inner_.remove(id); }
  int64_t appendControl(int64_t expected, std::vector<kernel::ControlEvent> events) override {
    return inner_.appendControl(expected, std::move(events));
  }
  std::vector<kernel::ControlEvent> readControl(int64_t from) const override {
    return inner_.readControl(from);
  }

 private:
  kernel::EventStore& inner_;
  std::atomic<int64_t> failFrom_{0};
  std::atomic<int64_t> appends_{0};
};

}  // namespace loom::testing

// Fault injection for crash tests: an EventStore wrapper that dies at a chosen write, as a
// process killed right there: from its N-th append on (throwing UnavailableError, writing
// nothing), or at the appendControl of an event type (before or after it is written, once);
// and one whose list() cannot enumerate (FailedPreconditionError). Everything else is
// forwarded (ForwardingEventStore). Thread-safe as the wrapped store for appends; set the
// control fault and cannotList before use.
#pragma once

#include <atomic>
#include <string>
#include <vector>

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

  // The next appendControl whose first event has `type` throws UnavailableError, before the
  // events are written or after (afterWrite); once.
  void dieAt(std::string type, bool afterWrite) {
    dieAt_ = std::move(type);
    afterWrite_ = afterWrite;
  }
  bool died() const { return died_; }
  bool cannotList = false;

  std::vector<kernel::ExecutionInfo> list(const kernel::ExecutionFilter& f) const override {
    if (cannotList) throw FailedPreconditionError("injected: this store cannot list executions");
    return ForwardingEventStore::list(f);
  }
  int64_t appendControl(int64_t n, std::vector<kernel::ControlEvent> events) override {
    bool dies = !died_ && !dieAt_.empty() && !events.empty() && events.front().type == dieAt_;
    if (dies && !afterWrite_) die();
    int64_t next = ForwardingEventStore::appendControl(n, std::move(events));
    if (dies) die();
    return next;
  }

  // Appends under a lease count as appends (the runtime makes them).
  int64_t append(const std::string& id, int64_t expected,
                 std::vector<kernel::Event> events) override {
    countAppend();
    return ForwardingEventStore::append(id, expected, std::move(events));
  }
  int64_t appendLeased(const kernel::Lease& lease, int64_t expected,
                       std::vector<kernel::Event> events) override {
    countAppend();
    return ForwardingEventStore::appendLeased(lease, expected, std::move(events));
  }

 private:
  void countAppend() {
    int64_t n = ++appends_;
    if (failFrom_ > 0 && n >= failFrom_)
      throw UnavailableError("injected: store died at append " + std::to_string(n));
  }

  void die() {
    died_ = true;
    throw UnavailableError("injected: the process died at appendControl of " + dieAt_);
  }

  std::string dieAt_;
  bool afterWrite_ = false;
  bool died_ = false;
  std::atomic<int64_t> failFrom_{0};
  std::atomic<int64_t> appends_{0};
};

}  // namespace loom::testing

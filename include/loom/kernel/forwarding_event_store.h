// ForwardingEventStore: an EventStore that forwards every call to a target store, for
// wrappers (sealing, fault injection, refusing) to derive from and override only the calls
// they change, as leveldb's EnvWrapper does for Env. A method added to the SPI is forwarded
// here once, so no wrapper silently misses it. The target must outlive the wrapper;
// thread-safe as the target.
#pragma once

#include "loom/kernel/event_store.h"

namespace loom::kernel {

class ForwardingEventStore : public EventStore {
 public:
  explicit ForwardingEventStore(EventStore& target) : target_(target) {}

  int64_t append(const std::string& executionId, int64_t expectedNextSeq,
                 std::vector<Event> events) override {
    return target_.append(executionId, expectedNextSeq, std::move(events));
  }
  void scan(const std::string& executionId, int64_t fromSeq,
            const std::function<void(const Event&)>& visit) const override {
    target_.scan(executionId, fromSeq, visit);
  }
  std::optional<ExecutionInfo> info(const std::string& executionId) const override {
    return target_.info(executionId);
  }
  std::vector<ExecutionInfo> list(const ExecutionFilter& filter) const override {
    return target_.list(filter);
  }
  bool remove(const std::string& executionId) override { return target_.remove(executionId); }
  int64_t appendControl(int64_t expectedNextSeq, std::vector<ControlEvent> events) override {
    return target_.appendControl(expectedNextSeq, std::move(events));
  }
  std::vector<ControlEvent> readControl(int64_t fromSeq = 1) const override {
    return target_.readControl(fromSeq);
  }
  int64_t lastControlSeq() const override { return target_.lastControlSeq(); }
  std::vector<ControlEvent> readControlOfTypes(const std::vector<std::string>& types,
                                               int64_t fromSeq = 1) const override {
    return target_.readControlOfTypes(types, fromSeq);
  }
  Lease acquireLease(const LeaseRequest& request) override {
    return target_.acquireLease(request);
  }
  Lease renewLease(const Lease& lease, int64_t ttlMillis) override {
    return target_.renewLease(lease, ttlMillis);
  }
  void releaseLease(const Lease& lease) override { target_.releaseLease(lease); }
  std::optional<Lease> currentLease(const std::string& executionId) const override {
    return target_.currentLease(executionId);
  }
  std::vector<Lease> claimRunnable(const ClaimRequest& request) override {
    return target_.claimRunnable(request);
  }
  bool awaitWork(int64_t timeoutMillis) const override {
    return target_.awaitWork(timeoutMillis);
  }
  std::optional<AddressSet> executionsThatMayCite(const AddressSet& addresses) const override {
    return target_.executionsThatMayCite(addresses);
  }
  int64_t appendLeased(const Lease& lease, int64_t expectedNextSeq,
                       std::vector<Event> events) override {
    return target_.appendLeased(lease, expectedNextSeq, std::move(events));
  }
  void announceWorker(const WorkerPresence& presence, int64_t ttlMillis) override {
    target_.announceWorker(presence, ttlMillis);
  }
  std::vector<WorkerPresence> liveWorkers() const override { return target_.liveWorkers(); }

 protected:
  EventStore& target() const { return target_; }

 private:
  EventStore& target_;
};

}  // namespace loom::kernel

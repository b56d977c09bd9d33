// The in-memory cloning EventStore: logs live in process memory and every value is
// deep-copied on the way in, and read() copies on the way out, so no caller can mutate a
// recorded event (the record's "cloning log"); scan visits the immutable stored events
// themselves, outside the lock. For tests, benchmarks and embedded runs that need no
// durability. Thread-safe (one shared mutex).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "loom/kernel/event_store.h"
#include "loom/util/clock.h"

namespace loom::kernel {

class MemoryEventStore : public EventStore {
 public:
  explicit MemoryEventStore(std::shared_ptr<const Clock> clock = systemClock())
      : clock_(std::move(clock)) {}

  int64_t append(const std::string& executionId, int64_t expectedNextSeq,
                 std::vector<Event> events) override;
  void scan(const std::string& executionId, int64_t fromSeq,
            const std::function<void(const Event&)>& visit) const override;
  std::optional<ExecutionInfo> info(const std::string& executionId) const override;
  std::vector<ExecutionInfo> list(const ExecutionFilter& filter) const override;
  bool remove(const std::string& executionId) override;
  // Holds `events`, a whole log of execution `executionId` read from another store (which
  // checked it), as that execution's log, replacing none: no validation and no measuring
  // (its byte sizes are 0). For an in-memory copy a replay check runs against
  // (workflow/replay_check.h). Throws AlreadyExistsError when the id is taken.
  void adoptLog(const std::string& executionId, std::vector<Event> events);
  int64_t appendControl(int64_t expectedNextSeq, std::vector<ControlEvent> events) override;
  std::vector<ControlEvent> readControl(int64_t fromSeq) const override;
  Lease acquireLease(const LeaseRequest& request) override;
  Lease renewLease(const Lease& lease, int64_t ttlMillis) override;
  void releaseLease(const Lease& lease) override;
  std::optional<Lease> currentLease(const std::string& executionId) const override;
  void announceWorker(const WorkerPresence& presence, int64_t ttlMillis) override;
  std::vector<WorkerPresence> liveWorkers() const override;
  int64_t appendLeased(const Lease& lease, int64_t expectedNextSeq,
                       std::vector<Event> events) override;

 private:
  struct Log {
    ExecutionInfo info;
    // Immutable once appended: scan hands out shared references instead of deep copies,
    // and nothing can change a recorded event (read() copies for callers that want values).
    std::vector<std::shared_ptr<const Event>> events;
  };
  int64_t appendLocked(const std::string& executionId, int64_t expectedNextSeq,
                       std::vector<Event> events);  // REQUIRES(mu_) exclusively
  std::optional<Lease> leaseLocked(const std::string& executionId) const;  // REQUIRES(mu_)

  std::shared_ptr<const Clock> clock_;
  mutable std::shared_mutex mu_;
  std::map<std::string, Log> logs_;       // GUARDED_BY(mu_)
  std::vector<ControlEvent> control_;     // GUARDED_BY(mu_)
  std::map<std::string, Lease> leases_;   // GUARDED_BY(mu_)
  std::map<std::string, WorkerPresence> workers_;  // GUARDED_BY(mu_); by owner id
};

}  // namespace loom::kernel

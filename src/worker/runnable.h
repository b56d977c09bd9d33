// Which executions an executor may run now, claimed by lease (docs/spec/leases.md, "Claiming"):
// - running ones nobody holds (submitted; released; an expired lease): EventStore::claimRunnable;
// - running ones whose owner died on this host before its lease expired (ownerIsDeadHere), at
//   each full look (the first, then every poll interval);
// - parked ones whose timer, retry or approval deadline is due (kernel::timerWakeAt); the due
//   time of a parked run is read once per park (its log does not grow while it waits).
// Not thread-safe: the executor's claiming thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "loom/kernel/event_store.h"
#include "loom/util/clock.h"

namespace loom::worker {

class RunnableFinder {
 public:
  // `codeVersion`: claim only the runs that recorded it or no code version (nullopt: all).
  RunnableFinder(kernel::EventStore& store, kernel::LeaseOwner owner, int64_t claimTtlMillis,
                 std::shared_ptr<const Clock> clock, int64_t pollMillis,
                 std::optional<std::string> codeVersion)
      : store_(store),
        owner_(std::move(owner)),
        ttlMillis_(claimTtlMillis),
        clock_(std::move(clock)),
        pollMillis_(pollMillis),
        codeVersion_(std::move(codeVersion)) {}

  // Claims up to `free` runnable executions not in `skip`; `fullLook` looks for dead owners
  // now whatever the time since the last look. With no free slot it reads nothing and knows no
  // due time. Throws what the store throws.
  std::vector<kernel::Lease> claim(std::size_t free, const std::vector<std::string>& skip,
                                   bool fullLook = false);
  // The earliest due time still to come (clock millis) of a parked run seen waiting; nullopt:
  // none.
  std::optional<int64_t> nextDue() const { return nextDue_; }

 private:
  // `busy`: the ids not to claim (skipped, or claimed in this call); a claim adds its id.
  void claimDeadOwners(std::size_t free, std::unordered_set<std::string>& busy,
                       std::vector<kernel::Lease>& out);
  void claimDue(std::size_t free, std::unordered_set<std::string>& busy,
                std::vector<kernel::Lease>& out);
  std::optional<int64_t> dueAt(const kernel::ExecutionInfo& info);
  bool ofAnotherVersion(const kernel::ExecutionInfo& info) const {
    return codeVersion_ && info.codeVersion && *info.codeVersion != *codeVersion_;
  }
  void take(const std::string& id, std::optional<int64_t> breakToken,
            std::vector<kernel::Lease>& out, std::unordered_set<std::string>& busy);

  kernel::EventStore& store_;
  const kernel::LeaseOwner owner_;
  const int64_t ttlMillis_;
  const std::shared_ptr<const Clock> clock_;
  const int64_t pollMillis_;
  const std::optional<std::string> codeVersion_;
  std::optional<int64_t> nextDue_;
  std::optional<std::chrono::steady_clock::time_point> lastFullLook_;
  // A parked run's due time, by id, as read at its log's end (nextSeq).
  std::map<std::string, std::pair<int64_t, std::optional<int64_t>>> dueByPark_;
};

}  // namespace loom::worker

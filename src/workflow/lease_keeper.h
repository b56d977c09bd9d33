// The runtime's side of leases (docs/spec/leases.md): RunLease takes an execution's lease
// before a run reads or runs anything, and LeaseKeeper renews every lease this runtime holds
// on one background thread, every third of the ttl, until the run drops it (released at
// once, so the next runner need not wait for it to expire).
//
// Taking a lease: a live lease held by another runner is a LeaseHeldError naming it; one held
// by a process of this host that is gone (SIGKILL, a crash) is broken at once by its token.
// A renewal that finds the lease taken over stops renewing it (the run's next append is then
// refused with LeaseLostError); one the store cannot make now (busy, unavailable) is retried
// at the next beat and reported through onWarn.
// Thread-safety: thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "loom/kernel/event_store.h"

namespace loom::workflow {

class LeaseKeeper {
 public:
  // `store` must outlive the keeper. ttlMillis > 0.
  LeaseKeeper(kernel::EventStore& store, kernel::LeaseOwner owner, int64_t ttlMillis,
              std::function<void(std::string_view)> onWarn,
              std::optional<kernel::ClaimedLease> claimed = std::nullopt);
  ~LeaseKeeper();
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // Takes execution `executionId`'s lease (see above) and starts renewing it. `claim`: a lease
  // an executor of this process claimed for this run (Executor, resumeClaimed): taken over by
  // its token; refused (LeaseHeldError) when another runner took it since. A claim this
  // keeper's own owner holds, for at least ttlMillis, is kept as it is (no statement).
  kernel::Lease take(const std::string& executionId,
                     const std::optional<kernel::Lease>& claim = std::nullopt);
  // Stops renewing `lease` and releases it; a release that fails only warns (it expires).
  void drop(const kernel::Lease& lease);

  const kernel::LeaseOwner& owner() const { return owner_; }

 private:
  bool adoptable(const std::optional<kernel::Lease>& claim, const std::string& executionId) const;
  void beat();
  // One renewal of `lease`; what to report goes to `warnings` (onWarn runs with no lock).
  void renewOne(const kernel::Lease& lease, std::chrono::milliseconds interval,
                std::vector<std::string>& warnings);
  // True when the store's current lease is `lease` (token and owner), released: this runner
  // released it. False when it cannot tell.
  bool releasedAsHeld(const kernel::Lease& lease) const;

  kernel::EventStore& store_;
  const kernel::LeaseOwner owner_;
  const int64_t ttlMillis_;
  const std::function<void(std::string_view)> onWarn_;
  const std::optional<kernel::ClaimedLease> claimed_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::string, kernel::Lease> held_;  // GUARDED_BY(mu_); by execution id
  bool stopping_ = false;                      // GUARDED_BY(mu_)
  std::thread thread_;                         // started on the first take
};

// Holds one run's lease for its scope.
class RunLease {
 public:
  RunLease(LeaseKeeper& keeper, const std::string& executionId,
           const std::optional<kernel::Lease>& claim = std::nullopt)
      : keeper_(keeper), lease_(keeper.take(executionId, claim)) {}
  ~RunLease() { keeper_.drop(lease_); }
  RunLease(const RunLease&) = delete;
  RunLease& operator=(const RunLease&) = delete;

  // Token and owner never change while held: what the run's appends are fenced with.
  const kernel::Lease& lease() const { return lease_; }

 private:
  LeaseKeeper& keeper_;
  kernel::Lease lease_;
};

}  // namespace loom::workflow

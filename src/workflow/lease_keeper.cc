#include "lease_keeper.h"

#include <unistd.h>

#include <chrono>
#include <vector>

#include "loom/util/error.h"

namespace loom::workflow {

LeaseKeeper::LeaseKeeper(kernel::EventStore& store, kernel::LeaseOwner owner, int64_t ttlMillis,
                         std::function<void(std::string_view)> onWarn,
                         std::optional<kernel::ClaimedLease> claimed)
    : store_(store),
      owner_(std::move(owner)),
      ttlMillis_(ttlMillis),
      onWarn_(std::move(onWarn)),
      claimed_(std::move(claimed)) {
  if (ttlMillis_ <= 0) {
    throw InvalidArgumentError("leaseTtlMillis is " + std::to_string(ttlMillis_) +
                               "; a lease needs a positive ttl");
  }
}

LeaseKeeper::~LeaseKeeper() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

kernel::Lease LeaseKeeper::take(const std::string& executionId,
                                const std::optional<kernel::Lease>& claim) {
  std::optional<int64_t> breakToken;
  if (claim && claim->executionId == executionId) breakToken = claim->token;
  kernel::LeaseRequest request{executionId, owner_, ttlMillis_, breakToken};
  kernel::Lease lease;
  try {
    lease = adoptable(claim, executionId) ? *claim : store_.acquireLease(request);
  } catch (const kernel::LeaseHeldError& e) {
    const kernel::Lease& held = e.held();
    // Handed over by the worker that claimed it for this process, or its process is gone:
    // no need to wait for expiry.
    bool handedOver = claimed_ && claimed_->executionId == executionId &&
                      claimed_->token == held.token && claimed_->claimerPid == held.owner.pid &&
                      claimed_->claimerPid == static_cast<int64_t>(::getppid());
    if (!handedOver && !kernel::ownerIsDeadHere(held.owner)) throw;
    request.breakToken = held.token;
    lease = store_.acquireLease(request);
  }
  std::lock_guard lock(mu_);
  held_[executionId] = lease;
  if (!thread_.joinable() && !stopping_) thread_ = std::thread([this] { beat(); });
  return lease;
}

// A claim granted to this very owner, for as long as a lease of its own: it is this runner's
// lease already (taking it again would only change its token). Had another runner taken it
// since, the first append under it is refused (LeaseLostError) and the run stops there.
bool LeaseKeeper::adoptable(const std::optional<kernel::Lease>& claim,
                            const std::string& executionId) const {
  return claim && claim->executionId == executionId && claim->owner.id == owner_.id &&
         !claim->released && claim->expiresAtMillis - claim->acquiredAtMillis >= ttlMillis_;
}

void LeaseKeeper::drop(const kernel::Lease& lease) {
  {
    std::lock_guard lock(mu_);
    auto it = held_.find(lease.executionId);
    if (it != held_.end() && it->second.token == lease.token) held_.erase(it);
  }
  try {
    store_.releaseLease(lease);
  } catch (const std::exception& e) {
    onWarn_("could not release the lease of execution '" + lease.executionId +
            "' (it expires in at most " + std::to_string(ttlMillis_ / 1000) + " s): " + e.what());
  }
}

void LeaseKeeper::beat() {
  const auto interval = std::chrono::milliseconds(std::max<int64_t>(1, ttlMillis_ / 3));
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, interval, [this] { return stopping_; });
    if (stopping_) return;
    std::vector<kernel::Lease> due;
    for (const auto& [id, lease] : held_) due.push_back(lease);
    lock.unlock();
    std::vector<std::string> warnings;  // reported with no lock held
    for (const auto& lease : due) renewOne(lease, interval, warnings);
    for (const auto& w : warnings) {
      try {
        onWarn_(w);
      } catch (...) {
        // A warning that cannot be written must not end the heartbeat (or the process).
      }
    }
    lock.lock();
  }
}

void LeaseKeeper::renewOne(const kernel::Lease& lease, std::chrono::milliseconds interval,
                           std::vector<std::string>& warnings) {
  std::optional<kernel::Lease> renewed;
  std::optional<std::string> lost;
  try {
    renewed = store_.renewLease(lease, ttlMillis_);
  } catch (const kernel::LeaseLostError& e) {
    lost = e.what();
  } catch (const std::exception& e) {
    warnings.push_back("could not renew the lease of execution '" + lease.executionId +
                       "' (retried in " + std::to_string(interval.count()) + " ms): " + e.what());
  } catch (...) {
    warnings.push_back("could not renew the lease of execution '" + lease.executionId +
                       "' (an unknown error; retried in " + std::to_string(interval.count()) +
                       " ms)");
  }
  // Released by this runner: the append that ended its run may release it in the same commit
  // (EventStore::releaseLease), before the run drops it here. No news.
  const bool releasedByUs = lost && releasedAsHeld(lease);
  std::lock_guard relock(mu_);
  auto it = held_.find(lease.executionId);
  if (it == held_.end() || it->second.token != lease.token) return;  // dropped meanwhile
  if (renewed) it->second = *renewed;
  if (lost) {
    if (!releasedByUs) warnings.push_back(*lost);
    held_.erase(it);
  }
}

bool LeaseKeeper::releasedAsHeld(const kernel::Lease& lease) const {
  try {
    auto current = store_.currentLease(lease.executionId);
    return current && current->released && current->token == lease.token &&
           current->owner.id == lease.owner.id;
  } catch (const std::exception&) {
    return false;  // cannot tell: report the loss
  }
}

}  // namespace loom::workflow

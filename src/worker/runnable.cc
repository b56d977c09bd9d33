#include "runnable.h"

#include <algorithm>

namespace loom::worker {
namespace {

bool listed(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

bool claimedHere(const std::vector<kernel::Lease>& claims, const std::string& id) {
  return std::any_of(claims.begin(), claims.end(),
                     [&](const kernel::Lease& c) { return c.executionId == id; });
}

}  // namespace

std::vector<kernel::Lease> RunnableFinder::claim(std::size_t free,
                                                 const std::vector<std::string>& skip,
                                                 bool fullLook) {
  std::vector<kernel::Lease> out;
  if (free > 0) out = store_.claimRunnable({owner_, ttlMillis_, free, skip});
  auto steadyNow = std::chrono::steady_clock::now();
  fullLook = fullLook || !lastFullLook_ ||
             steadyNow - *lastFullLook_ >= std::chrono::milliseconds(pollMillis_);
  if (fullLook) {
    lastFullLook_ = steadyNow;
    claimDeadOwners(free, skip, out);
  }
  claimDue(free, skip, out);  // also keeps nextDue() current
  return out;
}

void RunnableFinder::claimDeadOwners(std::size_t free, const std::vector<std::string>& skip,
                                     std::vector<kernel::Lease>& out) {
  kernel::ExecutionFilter filter;
  filter.status = kernel::ExecutionStatus::kRunning;
  int64_t now = clock_->nowMillis();  // the runtime's clock: the wall clock but in a simulation
  kernel::forEachExecution(store_, filter, [&](const kernel::ExecutionInfo& info) {
    if (out.size() >= free || listed(skip, info.id) || claimedHere(out, info.id)) return;
    auto lease = store_.currentLease(info.id);
    if (lease && lease->liveAt(now) && kernel::ownerIsDeadHere(lease->owner)) {
      take(info.id, lease->token, out);
    }
  });
}

void RunnableFinder::claimDue(std::size_t free, const std::vector<std::string>& skip,
                              std::vector<kernel::Lease>& out) {
  kernel::ExecutionFilter filter;
  filter.status = kernel::ExecutionStatus::kParked;
  int64_t now = clock_->nowMillis();
  std::optional<int64_t> earliest;
  std::map<std::string, std::pair<int64_t, std::optional<int64_t>>> seen;
  kernel::forEachExecution(store_, filter, [&](const kernel::ExecutionInfo& info) {
    std::optional<int64_t> due = dueAt(info);
    seen[info.id] = {info.nextSeq, due};
    if (!due) return;
    bool busy = listed(skip, info.id) || claimedHere(out, info.id);
    if (*due <= now && !busy && out.size() < free &&
        kernel::isOrphaned(store_.currentLease(info.id), clock_->nowMillis())) {
      take(info.id, std::nullopt, out);
      return;
    }
    // Only a time to come is a time to wake: a run due now that was not taken waits for a
    // slot (its end wakes the executor) or for its holder to let go (news of work).
    if (!busy && *due > now && (!earliest || *due < *earliest)) earliest = *due;
  });
  dueByPark_ = std::move(seen);  // forgets the runs that are parked no more
  nextDue_ = earliest;
}

std::optional<int64_t> RunnableFinder::dueAt(const kernel::ExecutionInfo& info) {
  auto it = dueByPark_.find(info.id);
  if (it != dueByPark_.end() && it->second.first == info.nextSeq) return it->second.second;
  try {
    return kernel::timerWakeAt(store_, info);
  } catch (const kernel::SealedEventError&) {
    return std::nullopt;  // sealed, and no key here: another worker with the key runs it
  }
}

void RunnableFinder::take(const std::string& id, std::optional<int64_t> breakToken,
                          std::vector<kernel::Lease>& out) {
  try {
    out.push_back(store_.acquireLease({id, owner_, ttlMillis_, breakToken}));
  } catch (const kernel::LeaseHeldError&) {
    // another claimer won
  }
}

}  // namespace loom::worker

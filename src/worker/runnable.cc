#include "runnable.h"


namespace loom::worker {

std::vector<kernel::Lease> RunnableFinder::claim(std::size_t free,
                                                 const std::vector<std::string>& skip,
                                                 bool fullLook) {
  std::vector<kernel::Lease> out;
  if (free == 0) {  // nothing can start: a slot coming free wakes the executor, not a timer
    nextDue_.reset();
    return out;
  }
  out = store_.claimRunnable({owner_, ttlMillis_, free, skip, codeVersion_});
  // Looked up once per execution listed: a set, not the list (thousands of runs run here).
  std::unordered_set<std::string> busy(skip.begin(), skip.end());
  for (const auto& lease : out) busy.insert(lease.executionId);
  auto steadyNow = std::chrono::steady_clock::now();
  fullLook = fullLook || !lastFullLook_ ||
             steadyNow - *lastFullLook_ >= std::chrono::milliseconds(pollMillis_);
  if (fullLook) {
    lastFullLook_ = steadyNow;
    claimDeadOwners(free, busy, out);
  }
  claimDue(free, busy, out);  // also keeps nextDue() current
  return out;
}

void RunnableFinder::claimDeadOwners(std::size_t free, std::unordered_set<std::string>& busy,
                                     std::vector<kernel::Lease>& out) {
  kernel::ExecutionFilter filter;
  filter.status = kernel::ExecutionStatus::kRunning;
  int64_t now = clock_->nowMillis();  // the runtime's clock: the wall clock but in a simulation
  kernel::forEachExecution(store_, filter, [&](const kernel::ExecutionInfo& info) {
    if (out.size() >= free || busy.contains(info.id) || ofAnotherVersion(info)) return;
    auto lease = store_.currentLease(info.id);
    if (lease && lease->liveAt(now) && kernel::ownerIsDeadHere(lease->owner)) {
      take(info.id, lease->token, out, busy);
    }
  });
}

void RunnableFinder::claimDue(std::size_t free, std::unordered_set<std::string>& busy,
                              std::vector<kernel::Lease>& out) {
  kernel::ExecutionFilter filter;
  filter.status = kernel::ExecutionStatus::kParked;
  int64_t now = clock_->nowMillis();
  std::optional<int64_t> earliest;
  std::map<std::string, std::pair<int64_t, std::optional<int64_t>>> seen;
  kernel::forEachExecution(store_, filter, [&](const kernel::ExecutionInfo& info) {
    if (ofAnotherVersion(info)) return;
    std::optional<int64_t> due = dueAt(info);
    seen[info.id] = {info.nextSeq, due};
    if (!due) return;
    bool taken = busy.contains(info.id);
    if (*due <= now && !taken && out.size() < free &&
        kernel::isOrphaned(store_.currentLease(info.id), clock_->nowMillis())) {
      take(info.id, std::nullopt, out, busy);
      return;
    }
    // Only a time to come is a time to wake: a run due now that was not taken waits for a
    // slot (its end wakes the executor) or for its holder to let go (news of work).
    if (!taken && *due > now && (!earliest || *due < *earliest)) earliest = *due;
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
                          std::vector<kernel::Lease>& out, std::unordered_set<std::string>& busy) {
  try {
    out.push_back(store_.acquireLease({id, owner_, ttlMillis_, breakToken}));
    busy.insert(id);
  } catch (const kernel::LeaseHeldError&) {
    // another claimer won
  }
}

}  // namespace loom::worker

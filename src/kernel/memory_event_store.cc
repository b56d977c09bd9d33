#include "loom/kernel/memory_event_store.h"

#include "append_plan.h"
#include "kernel/filter.h"
#include "lease_rules.h"

namespace loom::kernel {

int64_t MemoryEventStore::append(const std::string& executionId, int64_t expectedNextSeq,
                                 std::vector<Event> events) {
  std::unique_lock lock(mu_);
  return appendLocked(executionId, expectedNextSeq, std::move(events));
}

int64_t MemoryEventStore::appendLocked(const std::string& executionId, int64_t expectedNextSeq,
                                       std::vector<Event> events) {
  auto it = logs_.find(executionId);
  std::optional<ExecutionInfo> current;
  if (it != logs_.end()) current = it->second.info;
  AppendPlan plan = planAppend(executionId, current, expectedNextSeq, std::move(events));
  Log& log = it != logs_.end() ? it->second : logs_[executionId];
  log.info = std::move(plan.after);
  for (auto& e : plan.events) log.events.push_back(std::make_shared<const Event>(std::move(e)));
  return log.info.nextSeq;
}

void MemoryEventStore::adoptLog(const std::string& executionId, std::vector<Event> events) {
  std::unique_lock lock(mu_);
  if (logs_.contains(executionId)) {
    throw AlreadyExistsError("execution '" + executionId + "' already exists");
  }
  Log& log = logs_[executionId];
  log.info.id = executionId;
  for (auto& e : events) {
    applyEvent(log.info, e, 0, 0);
    log.events.push_back(std::make_shared<const Event>(std::move(e)));
  }
}

void MemoryEventStore::scan(const std::string& executionId, int64_t fromSeq,
                            const std::function<void(const Event&)>& visit) const {
  // Take references under the lock in chunks, visit outside it: a visitor may call back into
  // the store.
  constexpr std::size_t kChunk = 256;
  std::size_t index = fromSeq > 1 ? static_cast<std::size_t>(fromSeq - 1) : 0;
  for (;;) {
    std::vector<std::shared_ptr<const Event>> chunk;
    {
      std::shared_lock lock(mu_);
      auto it = logs_.find(executionId);
      if (it == logs_.end()) return;
      const auto& events = it->second.events;
      for (std::size_t i = index; i < events.size() && chunk.size() < kChunk; ++i) {
        chunk.push_back(events[i]);
      }
    }
    if (chunk.empty()) return;
    index += chunk.size();
    for (const auto& e : chunk) visit(*e);
  }
}

std::optional<ExecutionInfo> MemoryEventStore::info(const std::string& executionId) const {
  std::shared_lock lock(mu_);
  auto it = logs_.find(executionId);
  if (it == logs_.end()) return std::nullopt;
  return it->second.info;
}

std::vector<ExecutionInfo> MemoryEventStore::list(const ExecutionFilter& filter) const {
  std::shared_lock lock(mu_);
  std::vector<ExecutionInfo> out;
  for (auto it = logs_.upper_bound(filter.afterId); it != logs_.end(); ++it) {
    if (!matches(filter, it->second.info)) continue;
    out.push_back(it->second.info);
    if (filter.limit != 0 && out.size() >= filter.limit) break;
  }
  return out;
}

bool MemoryEventStore::remove(const std::string& executionId) {
  std::unique_lock lock(mu_);
  leases_.erase(executionId);
  return logs_.erase(executionId) > 0;
}

int64_t MemoryEventStore::appendControl(int64_t expectedNextSeq,
                                        std::vector<ControlEvent> events) {
  std::unique_lock lock(mu_);
  planControlAppend(static_cast<int64_t>(control_.size()) + 1, expectedNextSeq, events);
  for (auto& e : events) control_.push_back(std::move(e));
  return static_cast<int64_t>(control_.size()) + 1;
}

std::vector<ControlEvent> MemoryEventStore::readControl(int64_t fromSeq) const {
  std::shared_lock lock(mu_);
  std::vector<ControlEvent> out;
  for (std::size_t i = fromSeq > 1 ? static_cast<std::size_t>(fromSeq - 1) : 0;
       i < control_.size(); ++i) {
    out.push_back(control_[i]);
  }
  return out;
}

std::optional<Lease> MemoryEventStore::leaseLocked(const std::string& executionId) const {
  auto it = leases_.find(executionId);
  if (it == leases_.end()) return std::nullopt;
  return it->second;
}

Lease MemoryEventStore::acquireLease(const LeaseRequest& request) {
  std::unique_lock lock(mu_);
  Lease granted = grantLease(leaseLocked(request.executionId), request, clock_->nowMillis());
  leases_[request.executionId] = granted;
  return granted;
}

Lease MemoryEventStore::renewLease(const Lease& lease, int64_t ttlMillis) {
  std::unique_lock lock(mu_);
  Lease renewed =
      renewedLease(leaseLocked(lease.executionId), lease, ttlMillis, clock_->nowMillis());
  leases_[lease.executionId] = renewed;
  return renewed;
}

void MemoryEventStore::releaseLease(const Lease& lease) {
  std::unique_lock lock(mu_);
  if (isCurrentLease(leaseLocked(lease.executionId), lease)) {
    leases_[lease.executionId].released = true;
  }
}

std::optional<Lease> MemoryEventStore::currentLease(const std::string& executionId) const {
  std::shared_lock lock(mu_);
  return leaseLocked(executionId);
}

int64_t MemoryEventStore::appendLeased(const Lease& lease, int64_t expectedNextSeq,
                                       std::vector<Event> events) {
  std::unique_lock lock(mu_);
  requireCurrentLease(leaseLocked(lease.executionId), lease, "append");
  return appendLocked(lease.executionId, expectedNextSeq, std::move(events));
}

void MemoryEventStore::announceWorker(const WorkerPresence& presence, int64_t ttlMillis) {
  validatePresence(presence, ttlMillis);
  std::unique_lock lock(mu_);
  const int64_t now = clock_->nowMillis();
  std::erase_if(workers_, [&](const auto& w) {
    return w.second.expiresAtMillis + kForgetWorkersAfterMillis <= now;
  });
  WorkerPresence& stored = workers_[presence.owner.id] = presence;
  stored.seenAtMillis = now;
  stored.expiresAtMillis = now + ttlMillis;
}

std::vector<WorkerPresence> MemoryEventStore::liveWorkers() const {
  std::shared_lock lock(mu_);
  const int64_t now = clock_->nowMillis();
  std::vector<WorkerPresence> out;
  for (const auto& [id, w] : workers_) {
    if (w.expiresAtMillis > now) out.push_back(w);
  }
  return out;
}

}  // namespace loom::kernel

#include "loom/kernel/memory_snapshot_store.h"

#include <mutex>
#include <vector>

#include "snapshot_checks.h"

namespace loom::kernel {

void MemorySnapshotStore::put(const Snapshot& snapshot) {
  checkSnapshotKey(snapshot);
  json::value copy = snapshot.state;  // copied outside the lock
  std::unique_lock lock(mu_);
  snapshots_[snapshot.executionId][snapshot.seq] = std::move(copy);
}

std::optional<Snapshot> MemorySnapshotStore::latest(const std::string& executionId) const {
  std::shared_lock lock(mu_);
  auto it = snapshots_.find(executionId);
  if (it == snapshots_.end() || it->second.empty()) return std::nullopt;
  const auto& [seq, state] = *it->second.rbegin();
  return Snapshot{executionId, seq, state};
}

int64_t MemorySnapshotStore::remove(const std::string& executionId) {
  std::unique_lock lock(mu_);
  auto it = snapshots_.find(executionId);
  if (it == snapshots_.end()) return 0;
  auto n = static_cast<int64_t>(it->second.size());
  snapshots_.erase(it);
  return n;
}

int64_t MemorySnapshotStore::prune(const std::string& executionId, int64_t keepFromSeq) {
  std::unique_lock lock(mu_);
  auto it = snapshots_.find(executionId);
  if (it == snapshots_.end()) return 0;
  auto& bySeq = it->second;
  auto end = bySeq.lower_bound(keepFromSeq);
  auto n = static_cast<int64_t>(std::distance(bySeq.begin(), end));
  bySeq.erase(bySeq.begin(), end);
  if (bySeq.empty()) snapshots_.erase(it);
  return n;
}

void MemorySnapshotStore::forEach(const std::function<void(const Snapshot&)>& visit) const {
  std::string after;
  bool first = true;
  for (;;) {
    std::vector<Snapshot> chunk;
    {
      std::shared_lock lock(mu_);
      auto it = first ? snapshots_.begin() : snapshots_.upper_bound(after);
      if (it == snapshots_.end()) return;
      after = it->first;
      for (const auto& [seq, state] : it->second) chunk.push_back(Snapshot{it->first, seq, state});
    }
    first = false;
    for (const auto& s : chunk) visit(s);
  }
}

}  // namespace loom::kernel

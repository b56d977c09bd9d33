// The in-memory SnapshotStore: snapshots live in process memory and are deep-copied in and
// out, like MemoryEventStore. For tests, benchmarks and embedded runs that need no durability.
// Thread-safe (one shared mutex); forEach copies one execution's snapshots at a time and visits
// them outside the lock, so a visitor may call back into the store.
#pragma once

#include <map>
#include <shared_mutex>
#include <string>

#include "loom/kernel/snapshot_store.h"

namespace loom::kernel {

class MemorySnapshotStore : public SnapshotStore {
 public:
  // SnapshotStore (see snapshot_store.h for each contract).
  void put(const Snapshot& snapshot) override;
  std::optional<Snapshot> latest(const std::string& executionId) const override;
  int64_t remove(const std::string& executionId) override;
  int64_t prune(const std::string& executionId, int64_t keepFromSeq) override;
  void forEach(const std::function<void(const Snapshot&)>& visit) const override;

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, std::map<int64_t, json::value>, std::less<>> snapshots_;  // GUARDED_BY(mu_)
};

}  // namespace loom::kernel

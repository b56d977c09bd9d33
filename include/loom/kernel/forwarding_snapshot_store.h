// ForwardingSnapshotStore: a SnapshotStore that forwards every call to a target store, for
// wrappers (sealing) to derive from and override only what they change. The target must
// outlive the wrapper; thread-safe as the target.
#pragma once

#include "loom/kernel/snapshot_store.h"

namespace loom::kernel {

class ForwardingSnapshotStore : public SnapshotStore {
 public:
  explicit ForwardingSnapshotStore(SnapshotStore& target) : target_(target) {}

  void put(const Snapshot& snapshot) override { target_.put(snapshot); }
  std::optional<Snapshot> latest(const std::string& executionId) const override {
    return target_.latest(executionId);
  }
  int64_t remove(const std::string& executionId) override { return target_.remove(executionId); }
  int64_t prune(const std::string& executionId, int64_t keepFromSeq) override {
    return target_.prune(executionId, keepFromSeq);
  }
  void forEach(const std::function<void(const Snapshot&)>& visit) const override {
    target_.forEach(visit);
  }

 protected:
  SnapshotStore& target() const { return target_; }

 private:
  SnapshotStore& target_;
};

}  // namespace loom::kernel

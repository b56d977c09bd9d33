// The leases that fenced appends proved current, so the next append under one reads nothing
// (SqliteEventStore's group commit leader).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>

#include "loom/kernel/lease.h"
#include "util/sqlite_db.h"

namespace loom::kernel {

// Only this store's writer changes leases without changing `PRAGMA data_version` (which moves
// whenever another connection, in any process, commits): while it stands still and this
// writer has not written an execution's lease since, a lease proven current still is. Used
// by the group commit leader alone.
class FenceCache {
 public:
  // Inside the group's write transaction: forgets everything when another connection wrote.
  void startGroup(sqlite::Db& writer) {
    sqlite::StatementUse version(writer.prepare("PRAGMA data_version"));
    version->step("read data_version");
    int64_t now = version->int64(0);
    if (now != dataVersion_) forgetAll();
    dataVersion_ = now;
  }
  bool proven(const Lease& lease) const {
    auto it = proven_.find(lease.executionId);
    return it != proven_.end() && it->second.first == lease.token &&
           it->second.second == lease.owner.id;
  }
  void remember(const Lease& lease) {
    if (proven_.size() >= kMaxRemembered) proven_.clear();
    proven_[lease.executionId] = {lease.token, lease.owner.id};
  }
  void forget(const std::string& executionId) { proven_.erase(executionId); }
  void forgetAll() { proven_.clear(); }

 private:
  static constexpr std::size_t kMaxRemembered = 4096;
  int64_t dataVersion_ = -1;
  std::unordered_map<std::string, std::pair<int64_t, std::string>> proven_;
};

}  // namespace loom::kernel

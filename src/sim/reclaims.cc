// What a sweep deleted, judged when it ends (docs/testing.md, "What the simulator checks"): a
// blob a live log cites load-bearing is never reclaimed, a telemetry (reclaimable) one only once
// every run citing it ended and the ttl passed since. The citations each reclaim was fair for are
// kept: at the end of the seed a blob may be missing for those and for nothing else.
#include "compliance/claim_check_refs.h"
#include "content/claim_check_envelope.h"
#include "world.h"

namespace loom::sim {
namespace {

struct Citation {
  std::string executionId;
  int64_t seq = 0;
  bool retain = false;
};

// Every citation of an address in `addresses` by a live log, as the reader reads it (an erased
// subject's events read as markers and cite nothing).
std::map<std::string, std::vector<Citation>> liveCitations(
    const kernel::EventStore& store, const std::set<std::string>& addresses,
    const std::optional<std::string>& onlyExecution = std::nullopt) {
  std::map<std::string, std::vector<Citation>> found;
  auto scan = [&](const std::string& id) {
    store.scan(id, 1, [&](const kernel::Event& e) {
      compliance::visitEnvelopeRefs(e, [&](std::string_view address, const json::object& env) {
        auto it = addresses.find(std::string(address));
        if (it == addresses.end()) return;
        const json::value* retain = env.if_contains("retain");
        found[*it].push_back({id, e.seq, retain != nullptr && *retain == true});
      });
    });
  };
  if (onlyExecution) {
    scan(*onlyExecution);
  } else {
    for (const kernel::ExecutionInfo& info : store.list({})) scan(info.id);
  }
  return found;
}

}  // namespace

std::set<std::string> World::storedBlobs() {
  std::set<std::string> out;
  reader().contentStore()->forEachBlob(
      [&](const content::BlobInfo& blob) { out.insert(blob.address); });
  return out;
}

void World::judgeReclaimed(const std::set<std::string>& before, int64_t now) {
  std::set<std::string> gone;
  std::set<std::string> after = storedBlobs();
  for (const std::string& address : before) {
    // A sweep inside this one (in one of its deletes) judged what it deleted, by its own time.
    if (!after.count(address) && !judged_.count(address)) gone.insert(address);
  }
  judged_.insert(gone.begin(), gone.end());
  if (gone.empty()) return;
  std::map<std::string, kernel::ExecutionInfo> infos;
  for (kernel::ExecutionInfo& info : reader().store().list({})) infos[info.id] = std::move(info);
  for (const auto& [address, citations] : liveCitations(reader().store(), gone)) {
    bool fair = true;
    for (const Citation& c : citations) {
      const kernel::ExecutionInfo& info = infos.at(c.executionId);
      std::string where = "blob " + address + " cited by " + c.executionId + " (event " +
                          std::to_string(c.seq) + ") was reclaimed by a sweep at " +
                          std::to_string(now) + " ms";
      if (c.retain) {
        violation(where + ", load-bearing");
        fair = false;
      } else if (!kernel::isEnded(info.status)) {
        violation(where + ", while its run was " + std::string(kernel::statusName(info.status)));
        fair = false;
      } else if (info.endedAtMillis.value_or(now) + telemetryTtl_ > now) {
        violation(where + ", before its run's end (" +
                  std::to_string(info.endedAtMillis.value_or(0)) + " ms) plus the ttl (" +
                  std::to_string(telemetryTtl_) + " ms)");
        fair = false;
      }
    }
    if (!fair) continue;
    count("sweep.telemetryReclaimed");
    for (const Citation& c : citations) fairReclaims_[address].insert({c.executionId, c.seq});
  }
}

bool World::reclaimedFairly(const std::string& address, const std::string& executionId) {
  auto fair = fairReclaims_.find(address);
  if (fair == fairReclaims_.end()) return false;
  bool listed = false;  // a reclaim was fair for this run (its log may since be archived)
  for (const auto& [id, seq] : fair->second) listed = listed || id == executionId;
  if (!listed) return false;
  // Every citation its live log holds now was one the reclaim was fair for.
  for (const auto& [a, citations] : liveCitations(reader().store(), {address}, executionId)) {
    for (const Citation& c : citations) {
      if (!fair->second.count({c.executionId, c.seq})) return false;
    }
  }
  return true;
}

}  // namespace loom::sim

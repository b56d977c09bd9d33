// What a sweep deleted (itself: not an erasure inside it), judged when it ends (docs/testing.md,
// "What the simulator checks"): a blob a live log cites load-bearing is never reclaimed, a
// telemetry (reclaimable) one only once every run citing it ended and the ttl passed since. The
// citations each reclaim was fair for are kept: at the end of the seed a blob may be missing for
// those and for nothing else.
#include "compliance/claim_check_refs.h"
#include "content/claim_check_envelope.h"
#include "world.h"

namespace loom::sim {
namespace {

using Citations = std::map<std::string, std::vector<BlobCitation>>;

// Every live citation of an address in `addresses` (all when null), as the reader reads it
// (an erased subject's events read as markers and cite nothing); of one execution's log, or of
// every log.
Citations liveCitations(const kernel::EventStore& store, const std::set<std::string>* addresses,
                        const std::optional<std::string>& onlyExecution = std::nullopt) {
  Citations found;
  auto scan = [&](const std::string& id) {
    store.scan(id, 1, [&](const kernel::Event& e) {
      compliance::visitEnvelopeRefs(e, [&](std::string_view address, const json::object& env) {
        std::string a(address);
        if (addresses != nullptr && !addresses->count(a)) return;
        const json::value* retain = env.if_contains("retain");
        found[a].push_back({id, e.seq, retain != nullptr && *retain == true});
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

World::SweepStart World::sweepStart() {
  SweepStart start;
  start.now = clock_->nowMillis();
  start.stored = storedBlobs();
  start.citations = liveCitations(reader().store(), &start.stored);
  for (kernel::ExecutionInfo& info : reader().store().list({})) {
    start.runs[info.id] = std::move(info);
  }
  return start;
}

void World::judgeReclaimed(const SweepStart& start, const std::set<std::string>& deleted) {
  int64_t now = start.now;
  for (const std::string& address : deleted) {
    auto cited = start.citations.find(address);
    if (cited == start.citations.end()) continue;  // cited by nothing when the sweep began
    bool fair = true;
    for (const BlobCitation& c : cited->second) {
      const kernel::ExecutionInfo& info = start.runs.at(c.executionId);
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
    for (const BlobCitation& c : cited->second)
      fairReclaims_[address].insert({c.executionId, c.seq});
  }
}

bool World::reclaimedFairly(const std::string& address, const std::string& executionId) {
  auto fair = fairReclaims_.find(address);
  if (fair == fairReclaims_.end()) return false;
  bool listed = false;  // a reclaim was fair for this run (its log may since be archived)
  for (const auto& [id, seq] : fair->second) listed = listed || id == executionId;
  if (!listed) return false;
  // Every citation its live log holds now was one the reclaim was fair for.
  std::set<std::string> one{address};
  for (const auto& [a, citations] : liveCitations(reader().store(), &one, executionId)) {
    for (const BlobCitation& c : citations) {
      if (!fair->second.count({c.executionId, c.seq})) return false;
    }
  }
  return true;
}

}  // namespace loom::sim

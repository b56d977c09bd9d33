// OtherExecutions and removeCitedByOthers (declared in claim_check_refs.h): the owner-set check
// of an erasure, ADR 0120 under ADR 0140 D11 rule 3.
#include <atomic>
#include <mutex>

#include "compliance/claim_check_refs.h"
#include "content/claim_check_envelope.h"
#include "erase_parallel.h"
#include "loom/effects/taint.h"
#include "sweep/content_walker.h"

namespace loom::compliance {
namespace {

using IdSet = std::set<std::string, std::less<>>;

// The candidates, struck from several scanning threads.
class SharedCandidates {
 public:
  explicit SharedCandidates(IdSet& set) : set_(set), empty_(set.empty()) {}
  bool empty() const { return empty_.load(std::memory_order_acquire); }

  // Strikes the trusted ref of `event`, if it is a candidate.
  void strike(const kernel::Event& event) {
    if (empty()) return;
    auto envelope = sweep::trustedEnvelopeOf(event);
    if (!envelope) return;
    std::lock_guard lock(mu_);
    auto it = set_.find(envelope->address);
    if (it == set_.end()) return;
    set_.erase(it);
    if (set_.empty()) empty_.store(true, std::memory_order_release);
  }

 private:
  std::mutex mu_;
  IdSet& set_;  // GUARDED_BY(mu_)
  std::atomic<bool> empty_;
};

}  // namespace

OtherExecutions::OtherExecutions(const CitationSources& sources, std::string subject)
    : sources_(sources), subject_(std::move(subject)) {
  kernel::forEachExecution(*sources_.events, {}, [&](const kernel::ExecutionInfo& info) {
    if (info.subject == subject_ || info.steps == 0) return;
    withSteps_.insert(info.id);
    if (liveVersions_.emplace(info.id, std::make_pair(info.startedAtMillis, info.nextSeq)).second) {
      live_.push_back(info.id);
    }
  });
  if (sources_.archive != nullptr) {
    sources_.archive->forEachSegment([&](const sweep::ArchiveSegment& segment) {
      for (const auto& info : segment.listExecutions()) {
        if (info.subject != subject_ && info.steps > 0) withSteps_.insert(info.id);
      }
    });
  }
}

bool OtherExecutions::snapshotCounts(const kernel::Snapshot& snapshot,
                                     const IdSet& subjectIds) const {
  return !isSubjectSnapshot(snapshot, subject_, subjectIds) &&
         !withSteps_.contains(snapshot.executionId);
}

int64_t OtherExecutions::strikeTrustedRefs(IdSet& candidates, int concurrency) const {
  const std::size_t before = candidates.size();
  // Only the logs that may cite a candidate, when the store can tell (a server-side search).
  std::vector<std::string> toRead;
  if (auto may = candidates.empty() ? std::nullopt
                                    : sources_.events->executionsThatMayCite(candidates)) {
    for (const auto& id : live_) {
      if (may->contains(id)) toRead.push_back(id);
    }
  } else {
    toRead = live_;
  }
  SharedCandidates shared(candidates);
  detail::forEachIndexInParallel(toRead.size(), concurrency, [&](std::size_t i) {
    sources_.events->scan(toRead[i], 1, [&](const kernel::Event& e) { shared.strike(e); });
    return !shared.empty();
  });
  if (sources_.archive != nullptr && !shared.empty()) {
    for (const auto& name : sources_.archive->segmentNames()) {
      auto segment = sources_.archive->openSegment(name);
      for (const auto& info : segment.listExecutions()) {
        if (info.subject == subject_ || info.steps == 0) continue;
        auto live = liveVersions_.find(info.id);
        if (live != liveVersions_.end() &&
            live->second == std::make_pair(info.startedAtMillis, info.nextSeq)) {
          continue;  // the same log, read live already
        }
        if (auto archived = segment.read(info.id)) {
          forEachArchivedEvent(sources_, *archived,
                               [&](const kernel::Event& e) { shared.strike(e); });
        }
        if (shared.empty()) break;
      }
      if (shared.empty()) break;
    }
  }
  return static_cast<int64_t>(before - candidates.size());
}

int64_t removeCitedByOthers(const CitationSources& sources, const std::string& subject,
                            const IdSet& subjectIds, IdSet& candidates, int concurrency) {
  if (candidates.empty()) return 0;
  const std::size_t before = candidates.size();
  OtherExecutions others(sources, subject);
  if (sources.snapshots != nullptr) {
    sources.snapshots->forEach([&](const kernel::Snapshot& s) {
      if (candidates.empty() || !others.snapshotCounts(s, subjectIds)) return;
      sweep::visitCitedAddresses(s.state, [&](std::string_view a) {
        if (auto it = candidates.find(a); it != candidates.end()) candidates.erase(it);
      });
    });
  }
  others.strikeTrustedRefs(candidates, concurrency);
  return static_cast<int64_t>(before - candidates.size());
}

}  // namespace loom::compliance

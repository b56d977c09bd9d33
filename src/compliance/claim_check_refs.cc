#include "loom/compliance/claim_check_refs.h"

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

#include "erase_parallel.h"
#include "loom/compliance/event_sealing.h"
#include "loom/content/claim_check_envelope.h"
#include "loom/content/content_store.h"
#include "loom/effects/taint.h"
#include "loom/sweep/content_walker.h"

namespace loom::compliance {
namespace {

using IdSet = std::set<std::string, std::less<>>;

constexpr std::size_t kListPage = 256;

// The address of a {"__loomContent": H} object as a view into it, without allocating.
std::optional<std::string_view> refView(const json::value& v) {
  const auto* o = v.if_object();
  if (o == nullptr || o->size() != 1) return std::nullopt;
  const auto* h = o->if_contains(content::kContentRefKey);
  if (h == nullptr || !h->is_string()) return std::nullopt;
  std::string_view address(h->get_string().data(), h->get_string().size());
  if (!content::isValidAddress(address)) return std::nullopt;
  return address;
}

// The "subject" a snapshot's state names, when it names one.
std::optional<std::string_view> stateSubject(const json::value& state) {
  const auto* o = state.if_object();
  if (o == nullptr) return std::nullopt;
  const auto* s = o->if_contains("subject");
  if (s == nullptr || !s->is_string()) return std::nullopt;
  return std::string_view(s->get_string().data(), s->get_string().size());
}

void addRef(std::string_view address, const json::object& envelope, ClaimCheckRefs& refs) {
  if (refs.find(address) != refs.end()) return;
  ClaimCheckRef ref;
  ref.address = std::string(address);
  if (const auto* size = envelope.if_contains("size"); size != nullptr && size->is_int64()) {
    ref.size = size->get_int64();
  }
  if (const auto* digest = envelope.if_contains("digest")) ref.digest = *digest;
  refs.emplace(ref.address, std::move(ref));
}

// Broad collection over the live logs and archive of `ids`, and the snapshots `wanted` picks.
ClaimCheckRefs collect(const CitationSources& sources, const IdSet& ids,
                       const std::function<bool(const kernel::Snapshot&)>& wanted) {
  ClaimCheckRefs refs;
  auto add = [&](const kernel::Event& e) { addClaimCheckRefs(e, refs); };
  for (const auto& id : ids) sources.events->scan(id, 1, add);
  if (sources.archive != nullptr && !ids.empty()) {
    sources.archive->forEachSegment([&](const sweep::ArchiveSegment& segment) {
      for (const auto& id : ids) {
        if (!segment.contains(id)) continue;
        if (auto archived = segment.read(id)) forEachArchivedEvent(sources, *archived, add);
      }
    });
  }
  if (sources.snapshots != nullptr) {
    sources.snapshots->forEach([&](const kernel::Snapshot& s) {
      if (wanted(s)) addClaimCheckRefs(s.state, refs);
    });
  }
  return refs;
}

// The address of the envelope at the trusted position of `event`, as a view into it, without
// checking the envelope's other members (trustedClaimCheckRefOf does, for a hit).
std::optional<std::string_view> trustedRefView(const kernel::Event& event) {
  if (event.type != kernel::EventType::kStepCompleted) return std::nullopt;
  const auto* output = event.data.if_contains("output");
  if (output == nullptr) return std::nullopt;
  const auto* o = effects::untainted(*output).if_object();
  if (o == nullptr || !o->contains(content::kClaimCheckKey)) return std::nullopt;
  const auto* ref = o->if_contains("ref");
  return ref != nullptr ? refView(*ref) : std::nullopt;
}

// removeCitedByOthers' candidates, struck from several scanning threads.
class SharedCandidates {
 public:
  explicit SharedCandidates(IdSet& set) : set_(set), empty_(set.empty()) {}
  bool empty() const { return empty_.load(std::memory_order_acquire); }

  // Strikes the trusted ref of `event`, if it is a candidate.
  void strike(const kernel::Event& event) {
    if (empty()) return;
    auto address = trustedRefView(event);
    if (!address) return;
    std::lock_guard lock(mu_);
    auto it = set_.find(*address);
    if (it == set_.end() || !trustedClaimCheckRefOf(event)) return;  // a malformed envelope
    erase(it);
  }
  // Strikes `address`, if it is a candidate.
  void strikeAddress(std::string_view address) {
    std::lock_guard lock(mu_);
    if (auto it = set_.find(address); it != set_.end()) erase(it);
  }

 private:
  void erase(IdSet::iterator it) {
    set_.erase(it);
    if (set_.empty()) empty_.store(true, std::memory_order_release);
  }
  std::mutex mu_;
  IdSet& set_;  // GUARDED_BY(mu_)
  std::atomic<bool> empty_;
};

}  // namespace

void forEachArchivedEvent(const CitationSources& sources, const sweep::ArchivedExecution& copy,
                          const std::function<void(const kernel::Event&)>& visit) {
  if (sources.keys == nullptr) {
    for (const auto& e : copy.events) visit(e);
    return;
  }
  EventUnsealer unsealer(*sources.keys);
  for (const auto& e : copy.events) visit(unsealer.unseal(copy.info.id, e));
}

void visitEnvelopeRefs(const json::value& value, const EnvelopeRefVisitor& visit) {
  if (const auto* o = value.if_object()) {
    if (o->contains(content::kClaimCheckKey)) {
      if (const auto* ref = o->if_contains("ref")) {
        if (auto address = refView(*ref)) visit(*address, *o);
      }
    }
    for (const auto& kv : *o) visitEnvelopeRefs(kv.value(), visit);
  } else if (const auto* a = value.if_array()) {
    for (const auto& e : *a) visitEnvelopeRefs(e, visit);
  }
}

void visitEnvelopeRefs(const kernel::Event& event, const EnvelopeRefVisitor& visit) {
  for (const auto& kv : event.data) visitEnvelopeRefs(kv.value(), visit);
}

std::optional<std::string> trustedClaimCheckRefOf(const kernel::Event& event) {
  auto envelope = sweep::topLevelEnvelopeOf(event);
  if (!envelope) return std::nullopt;
  auto parsed = content::parseEnvelope(*envelope);
  if (!parsed) return std::nullopt;
  return std::move(parsed->address);
}

void addClaimCheckRefs(const json::value& value, ClaimCheckRefs& refs) {
  visitEnvelopeRefs(value, [&](std::string_view address, const json::object& envelope) {
    addRef(address, envelope, refs);
  });
}

void addClaimCheckRefs(const kernel::Event& event, ClaimCheckRefs& refs) {
  visitEnvelopeRefs(event, [&](std::string_view address, const json::object& envelope) {
    addRef(address, envelope, refs);
  });
}

ClaimCheckRefs claimCheckRefsOf(const CitationSources& sources, const IdSet& executionIds) {
  return collect(sources, executionIds,
                 [&](const kernel::Snapshot& s) { return executionIds.contains(s.executionId); });
}

ClaimCheckRefs claimCheckRefsOf(const CitationSources& sources, const std::string& executionId) {
  return claimCheckRefsOf(sources, IdSet{executionId});
}

IdSet trustedClaimCheckRefsOf(const CitationSources& sources, const std::string& executionId) {
  IdSet refs;
  bool sawStep = false;
  auto add = [&](const kernel::Event& e) {
    if (e.type == kernel::EventType::kStepCompleted) sawStep = true;
    if (auto address = trustedClaimCheckRefOf(e)) refs.insert(std::move(*address));
  };
  sources.events->scan(executionId, 1, add);
  if (sources.archive != nullptr) {
    sources.archive->forEachSegment([&](const sweep::ArchiveSegment& segment) {
      if (!segment.contains(executionId)) return;
      if (auto archived = segment.read(executionId)) forEachArchivedEvent(sources, *archived, add);
    });
  }
  if (!sawStep && sources.snapshots != nullptr) {
    sources.snapshots->forEach([&](const kernel::Snapshot& s) {
      if (s.executionId != executionId) return;
      sweep::visitCitedAddresses(s.state, [&](std::string_view a) { refs.emplace(a); });
    });
  }
  return refs;
}

SubjectExecutions executionsOfSubject(const CitationSources& sources, const std::string& subject) {
  SubjectExecutions out;
  kernel::ExecutionFilter page;
  page.subject = subject;
  page.limit = kListPage;
  for (;;) {
    auto infos = sources.events->list(page);
    for (auto& info : infos) {
      out.ids.insert(info.id);
      out.live.push_back(std::move(info));
    }
    if (infos.size() < page.limit) break;
    page.afterId = out.live.back().id;
  }
  if (sources.archive != nullptr) {
    sources.archive->forEachSegment([&](const sweep::ArchiveSegment& segment) {
      for (auto& info : segment.listExecutions()) {
        if (info.subject != subject) continue;
        out.ids.insert(info.id);
        out.archived.push_back(std::move(info));
      }
    });
  }
  return out;
}

ClaimCheckRefs claimCheckRefsOfSubject(const CitationSources& sources, const std::string& subject) {
  return claimCheckRefsOfSubject(sources, subject, executionsOfSubject(sources, subject));
}

ClaimCheckRefs claimCheckRefsOfSubject(const CitationSources& sources, const std::string& subject,
                                       const SubjectExecutions& executions) {
  return collect(sources, executions.ids, [&](const kernel::Snapshot& s) {
    return executions.ids.contains(s.executionId) || stateSubject(s.state) == subject;
  });
}

int64_t removeCitedByOthers(const CitationSources& sources, const std::string& subject,
                            const IdSet& subjectIds, IdSet& candidates, int concurrency) {
  const std::size_t before = candidates.size();
  auto removed = [&] { return static_cast<int64_t>(before - candidates.size()); };
  if (candidates.empty()) return 0;
  SharedCandidates shared(candidates);

  // Executions outside the subject whose recorded steps vouch for them (their snapshots do
  // not count), and the live logs to read, by (startedAt, nextSeq).
  IdSet withSteps;
  std::map<std::string, std::pair<int64_t, int64_t>, std::less<>> readLive;
  std::vector<const std::string*> toScan;
  kernel::ExecutionFilter page;
  page.limit = kListPage;
  for (;;) {
    auto infos = sources.events->list(page);
    for (const auto& info : infos) {
      if (info.subject == subject || info.steps == 0) continue;
      withSteps.insert(info.id);
      auto [it, fresh] =
          readLive.emplace(info.id, std::make_pair(info.startedAtMillis, info.nextSeq));
      if (fresh) toScan.push_back(&it->first);
    }
    if (infos.size() < page.limit) break;
    page.afterId = infos.back().id;
  }
  detail::forEachIndexInParallel(toScan.size(), concurrency, [&](std::size_t i) {
    sources.events->scan(*toScan[i], 1, [&](const kernel::Event& e) { shared.strike(e); });
    return !shared.empty();
  });
  if (shared.empty()) return removed();

  if (sources.archive != nullptr) {
    for (const auto& path : sources.archive->segmentPaths()) {
      auto segment = sweep::ArchiveSegment::open(path);
      for (const auto& info : segment.listExecutions()) {
        if (info.subject == subject || info.steps == 0) continue;
        withSteps.insert(info.id);
        auto live = readLive.find(info.id);
        if (live != readLive.end() &&
            live->second == std::make_pair(info.startedAtMillis, info.nextSeq)) {
          continue;  // the same log, read live already
        }
        if (auto archived = segment.read(info.id)) {
          forEachArchivedEvent(sources, *archived,
                               [&](const kernel::Event& e) { shared.strike(e); });
          if (shared.empty()) return removed();
        }
      }
    }
  }

  if (sources.snapshots != nullptr) {
    sources.snapshots->forEach([&](const kernel::Snapshot& s) {
      if (shared.empty() || subjectIds.contains(s.executionId) ||
          withSteps.contains(s.executionId) || stateSubject(s.state) == subject) {
        return;
      }
      sweep::visitCitedAddresses(s.state, [&](std::string_view a) { shared.strikeAddress(a); });
    });
  }
  return removed();
}

}  // namespace loom::compliance

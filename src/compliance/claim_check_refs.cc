#include "compliance/claim_check_refs.h"

#include <utility>

#include "compliance/event_sealing.h"
#include "content/claim_check_envelope.h"
#include "erase_parallel.h"
#include "loom/content/content_store.h"
#include "sweep/content_walker.h"

namespace loom::compliance {
namespace {

using IdSet = std::set<std::string, std::less<>>;

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

// Adds `more` to `refs`, keeping the envelope `refs` saw first.
void merge(ClaimCheckRefs& refs, ClaimCheckRefs&& more) {
  for (auto& [address, ref] : more) refs.try_emplace(address, std::move(ref));
}

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
    if (content::isInertData(*o)) return;  // handed in from outside: cites nothing
    if (o->contains(content::kClaimCheckKey)) {
      if (const auto* ref = o->if_contains("ref")) {
        if (auto address = content::refAddressView(*ref)) visit(*address, *o);
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
  auto envelope = sweep::trustedEnvelopeOf(event);
  if (!envelope) return std::nullopt;
  return std::string(envelope->address);
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

ClaimCheckRefs claimCheckRefsOfLogs(const CitationSources& sources, const IdSet& executionIds,
                                    int concurrency) {
  // One result per execution, merged in id order, so the first envelope wins as if serial.
  std::vector<const std::string*> ids;
  for (const auto& id : executionIds) ids.push_back(&id);
  std::vector<ClaimCheckRefs> perExecution(ids.size());
  detail::forEachIndexInParallel(ids.size(), concurrency, [&](std::size_t i) {
    sources.events->scan(*ids[i], 1,
                         [&](const kernel::Event& e) { addClaimCheckRefs(e, perExecution[i]); });
    return true;
  });
  ClaimCheckRefs refs;
  for (auto& more : perExecution) merge(refs, std::move(more));
  if (sources.archive != nullptr && !executionIds.empty()) {
    sources.archive->forEachSegment([&](const sweep::ArchiveSegment& segment) {
      for (const auto& id : executionIds) {
        if (!segment.contains(id)) continue;
        if (auto archived = segment.read(id)) {
          forEachArchivedEvent(sources, *archived,
                               [&](const kernel::Event& e) { addClaimCheckRefs(e, refs); });
        }
      }
    });
  }
  return refs;
}

ClaimCheckRefs claimCheckRefsOf(const CitationSources& sources, const IdSet& executionIds) {
  ClaimCheckRefs refs = claimCheckRefsOfLogs(sources, executionIds);
  if (sources.snapshots != nullptr) {
    sources.snapshots->forEach([&](const kernel::Snapshot& s) {
      if (executionIds.contains(s.executionId)) addClaimCheckRefs(s.state, refs);
    });
  }
  return refs;
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
  kernel::ExecutionFilter filter;
  filter.subject = subject;
  kernel::forEachExecution(*sources.events, filter, [&](const kernel::ExecutionInfo& info) {
    out.ids.insert(info.id);
    out.live.push_back(info);
  });
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

bool isSubjectSnapshot(const kernel::Snapshot& snapshot, const std::string& subject,
                       const IdSet& subjectIds) {
  if (subjectIds.contains(snapshot.executionId)) return true;
  const auto* o = snapshot.state.if_object();
  const auto* named = o != nullptr ? o->if_contains("subject") : nullptr;
  return named != nullptr && named->is_string() && named->get_string() == subject;
}

ClaimCheckRefs claimCheckRefsOfSubject(const CitationSources& sources, const std::string& subject) {
  return claimCheckRefsOfSubject(sources, subject, executionsOfSubject(sources, subject));
}

ClaimCheckRefs claimCheckRefsOfSubject(const CitationSources& sources, const std::string& subject,
                                       const SubjectExecutions& executions) {
  ClaimCheckRefs refs = claimCheckRefsOfLogs(sources, executions.ids);
  if (sources.snapshots != nullptr) {
    sources.snapshots->forEach([&](const kernel::Snapshot& s) {
      if (isSubjectSnapshot(s, subject, executions.ids)) addClaimCheckRefs(s.state, refs);
    });
  }
  return refs;
}

}  // namespace loom::compliance

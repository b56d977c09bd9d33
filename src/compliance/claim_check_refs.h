// Which claim-checked blobs an execution cites, for erasure and export (ADR 0140 D8 (b), D11
// rule 3). Two collections, deliberately unequal:
// - broad (claimCheckRefsOf): the `ref` of every envelope-shaped object (one with a
//   "__loomClaimCheck" member, well-formed or not) anywhere in an execution's live log, its
//   archived copies and its snapshots. This is what erasure deletes of the erased subject's own
//   executions, and what export resolves: it takes more only of what that subject's own data
//   cites.
// - trusted (trustedClaimCheckRefsOf): only the ref of the envelope at the top level of a
//   recorded STEP_COMPLETED output (directly or through one taint wrapper,
//   sweep::trustedEnvelopeOf), where the claim-check middleware writes it; a look-alike nested
//   in some tool's output does not count. An execution's snapshot counts (every address it
//   cites) only when the execution has no recorded STEP_COMPLETED left in its live log or
//   archive (history gone: the snapshot is the sole evidence, fail closed). This is what
//   decides that ANOTHER execution still needs a blob.
// OtherExecutions / removeCitedByOthers run the trusted collection over every execution
// outside the erased subject in one pass with early exit. Functions over the stores, which
// must be thread-safe; they keep no state (OtherExecutions keeps the others' metadata).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "loom/compliance/key_store.h"
#include "loom/json/json.h"
#include "loom/kernel/event.h"
#include "loom/kernel/event_store.h"
#include "loom/kernel/snapshot_store.h"
#include "loom/sweep/archive.h"

namespace loom::compliance {

// Where executions' citations live. The stores must outlive every call that gets them. With
// sealed logs (compliance.erase), `events` and `snapshots` are the SealingEventStore and
// SealingSnapshotStore (they read unsealed), and `keys` unseals archived events, which
// retention copied sealed, as stored.
struct CitationSources {
  const kernel::EventStore* events = nullptr;        // the live logs; required
  const sweep::Archive* archive = nullptr;           // archive segments; null = none
  const kernel::SnapshotStore* snapshots = nullptr;  // null = none
  const KeyStore* keys = nullptr;  // unseals archived events; null = they are stored clear
};

// Calls `visit` with each archived event of `copy`, unsealed when `sources.keys` is set
// (erased ones as markers: CorruptEventError when one does not authenticate).
void forEachArchivedEvent(const CitationSources& sources, const sweep::ArchivedExecution& copy,
                          const std::function<void(const kernel::Event&)>& visit);

// One cited blob as the first envelope citing it describes it (export's ClaimCheckedBlob
// takes size and digest from here).
struct ClaimCheckRef {
  std::string address;
  std::optional<int64_t> size;        // the envelope's "size" when it is a whole number
  std::optional<json::value> digest;  // the envelope's "digest" when present
};

// Broad collection, keyed by address.
using ClaimCheckRefs = std::map<std::string, ClaimCheckRef, std::less<>>;

using EnvelopeRefVisitor =
    std::function<void(std::string_view address, const json::object& envelope)>;

// Calls `visit` with the address of the `ref` of every envelope-shaped object in `value`, at
// any depth (inside outputs, inputs, digests, snapshots), with that object. An envelope-shaped
// object whose `ref` is not a valid {"__loomContent": H} is skipped. The address is a view into
// `value`, valid while it lives.
void visitEnvelopeRefs(const json::value& value, const EnvelopeRefVisitor& visit);
// The same over every member of an event's data.
void visitEnvelopeRefs(const kernel::Event& event, const EnvelopeRefVisitor& visit);

// The trusted ref of one event: the address of the envelope at the top level of a
// STEP_COMPLETED output (through at most one taint wrapper), whatever its retain flag;
// nullopt for any other event or position.
std::optional<std::string> trustedClaimCheckRefOf(const kernel::Event& event);

// Adds the broad refs of `value` to `refs` (the first envelope seen for an address wins).
void addClaimCheckRefs(const json::value& value, ClaimCheckRefs& refs);
void addClaimCheckRefs(const kernel::Event& event, ClaimCheckRefs& refs);

// Broad collection of the executions `executionIds`: their live logs, every archived copy of
// them, and every snapshot whose execution id is one of them. Each source is read once.
// Errors of the stores propagate (a corrupt row is a CorruptEventError, never skipped).
ClaimCheckRefs claimCheckRefsOf(const CitationSources& sources,
                                const std::set<std::string, std::less<>>& executionIds);
ClaimCheckRefs claimCheckRefsOf(const CitationSources& sources, const std::string& executionId);

// The same without snapshots: live logs (read on up to `concurrency` threads; the first
// envelope of an address still wins in id then seq order) and archived copies.
ClaimCheckRefs claimCheckRefsOfLogs(const CitationSources& sources,
                                    const std::set<std::string, std::less<>>& executionIds,
                                    int concurrency = 1);

// Trusted collection of one execution: the trusted refs of its live log and archived copies;
// plus every address its snapshots cite when neither holds a STEP_COMPLETED of it.
std::set<std::string, std::less<>> trustedClaimCheckRefsOf(const CitationSources& sources,
                                                           const std::string& executionId);

// The executions of one subject: live ones (ExecutionFilter.subject) and archived ones, by id.
// An execution both live and archived (retention interrupted) is in both lists.
struct SubjectExecutions {
  std::vector<kernel::ExecutionInfo> live;
  std::vector<kernel::ExecutionInfo> archived;
  std::set<std::string, std::less<>> ids;  // every id of both lists
};

// Lists the subject's executions. Throws what EventStore::list throws (FailedPreconditionError
// from a store that cannot enumerate its executions) and what opening a segment throws.
SubjectExecutions executionsOfSubject(const CitationSources& sources, const std::string& subject);

// Broad collection of every execution of `subject`: executionsOfSubject, then
// claimCheckRefsOf over those ids, plus snapshots whose state names the subject
// ({"subject": S}) although no log of theirs is left.
ClaimCheckRefs claimCheckRefsOfSubject(const CitationSources& sources, const std::string& subject);
// The same over a listing made already (`executions` = executionsOfSubject(sources, subject)).
ClaimCheckRefs claimCheckRefsOfSubject(const CitationSources& sources, const std::string& subject,
                                       const SubjectExecutions& executions);

// True when `snapshot` belongs to the subject: its execution is one of `subjectIds`, or its
// state names the subject ({"subject": S}) although no log of it is left.
bool isSubjectSnapshot(const kernel::Snapshot& snapshot, const std::string& subject,
                       const std::set<std::string, std::less<>>& subjectIds);

// The executions outside one subject, as erasure's owner-set check (ADR 0120 under D11 rule 3)
// reads them: their metadata first (live logs and archive segments, no log read), so that one
// pass over the snapshots can tell which of them count as evidence, then their logs.
// Not thread-safe itself; the sources must outlive it.
class OtherExecutions {
 public:
  // Lists every execution whose subject is not `subject` (another one, or none), live and
  // archived. Throws FailedPreconditionError when the live logs cannot be enumerated (as
  // EventStore::list throws it) or a segment has a newer format; other errors propagate.
  OtherExecutions(const CitationSources& sources, std::string subject);

  // True when `snapshot` counts as another execution citing what it cites: it is not the
  // subject's (isSubjectSnapshot) and no STEP_COMPLETED of its execution is left in a live log
  // or an archive segment (history gone: the snapshot is the sole evidence, fail closed).
  bool snapshotCounts(const kernel::Snapshot& snapshot,
                      const std::set<std::string, std::less<>>& subjectIds) const;

  // Removes from `candidates` every trusted ref (trustedClaimCheckRefOf) of their logs: live
  // ones on up to `concurrency` threads, then archived copies (a copy of a log read live is
  // skipped), stopping as soon as `candidates` is empty. Returns how many it removed.
  int64_t strikeTrustedRefs(std::set<std::string, std::less<>>& candidates, int concurrency) const;

 private:
  CitationSources sources_;
  std::string subject_;
  std::set<std::string, std::less<>> withSteps_;  // ids with a STEP_COMPLETED live or archived
  std::vector<std::string> live_;                 // live ids with steps, to read
  // The live logs read, by (startedAt, nextSeq): an archived copy of one needs no reading.
  std::map<std::string, std::pair<int64_t, int64_t>, std::less<>> liveVersions_;
};

// OtherExecutions in one call: removes from `candidates` every address an execution outside
// `subject` still cites (trusted refs of its logs; every address of a snapshot that counts).
// Snapshots are read first, then the logs, stopping once `candidates` is empty. Errors as
// OtherExecutions. Returns how many addresses it removed.
int64_t removeCitedByOthers(const CitationSources& sources, const std::string& subject,
                            const std::set<std::string, std::less<>>& subjectIds,
                            std::set<std::string, std::less<>>& candidates, int concurrency = 1);

}  // namespace loom::compliance

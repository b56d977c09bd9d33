#include "loom/compliance/export.h"

#include <boost/json/parse.hpp>
#include <map>

#include "aead.h"
#include "compliance/claim_check_refs.h"
#include "erase_journal.h"
#include "loom/agent/agent_state.h"
#include "loom/kernel/fold.h"
#include "loom/util/error.h"
#include "util/utf8.h"

namespace loom::compliance {
namespace {

json::value timestampOrNull(const std::optional<int64_t>& millis) {
  return millis ? json::value(formatTimestamp(*millis)) : json::value();
}

json::object executionJson(const kernel::ExecutionInfo& info, std::string_view source,
                           const std::vector<kernel::Event>& events) {
  json::array stored;
  stored.reserve(events.size());
  for (const auto& e : events) stored.emplace_back(kernel::toJson(e));
  json::object out{{"id", info.id},
                   {"workflow", info.workflow},
                   {"status", kernel::statusName(info.status)},
                   {"startedAt", formatTimestamp(info.startedAtMillis)},
                   {"endedAt", timestampOrNull(info.endedAtMillis)},
                   {"source", source},
                   {"events", std::move(stored)},
                   {"state", kernel::foldEvents(events)}};
  auto loops = agent::agentLoopsOf(events);
  if (!loops.empty()) {
    json::object agentState;
    for (const auto& loop : loops) agentState[loop] = agent::foldAgentState(events, loop);
    out["agentState"] = std::move(agentState);
  }
  return out;
}

ClaimCheckedBlob resolveClaimCheckedBlob(const content::ContentStore& store,
                                         const ClaimCheckRef& ref,
                                         const std::optional<std::string>& subject) {
  ClaimCheckedBlob blob;
  blob.address = ref.address;
  blob.size = ref.size;
  blob.digest = ref.digest;
  std::optional<std::string> bytes = store.get(ref.address, subject);
  if (!bytes) {
    blob.missing = true;
    return blob;
  }
  if (!blob.size) blob.size = static_cast<int64_t>(bytes->size());
  try {
    blob.value = json::parse(*bytes, "blob " + blob.address);
  } catch (const InvalidArgumentError&) {
    blob.bytesBase64 = detail::toBase64(*bytes);  // not JSON: handed over as bytes
  }
  return blob;
}

// An erasure stopped between its intent and its result (killed, or its shred's flush kept
// busy) may have left some of the subject's blobs and shredded the key that reads the rest: an
// export then would show less than is held, so it waits for the erasure to finish.
void requireNoUnfinishedErasure(const kernel::EventStore& events, const std::string& subject) {
  auto erasure = detail::latestErasure(events, subject);
  if (!erasure || erasure->finished) return;
  throw FailedPreconditionError(
      "an erasure of subject '" + subject + "' is unfinished (its intent is control event #" +
      std::to_string(erasure->intent) +
      ", with no result after it): some of the subject's blobs may still be held while the key "
      "that reads the rest is gone. Run `loom erase " +
      subject + "` again to finish it; nothing is held on the subject afterwards");
}

}  // namespace

json::value toJson(const ClaimCheckedBlob& blob) {
  json::object out{{"address", blob.address},
                   {"size", blob.size ? json::value(*blob.size) : json::value()},
                   {"digest", blob.digest ? *blob.digest : json::value()}};
  if (blob.missing) {
    out["missing"] = true;
  } else if (blob.value) {
    out["value"] = *blob.value;
  } else {
    out["bytesBase64"] = blob.bytesBase64.value_or("");
  }
  return out;
}

ClaimCheckedBlob claimCheckedBlobFromJson(const json::value& entry) {
  const json::object* o = entry.if_object();
  if (o == nullptr) {
    throw InvalidArgumentError("a claimChecked entry must be an object, not " +
                               std::string(json::kindName(entry)));
  }
  ClaimCheckedBlob blob;
  blob.address = std::string(json::requireString(*o, "address"));
  blob.size = json::optionalInt(*o, "size");
  if (const auto* d = o->if_contains("digest"); d != nullptr && !d->is_null()) blob.digest = *d;
  int forms = 0;
  if (const auto* v = o->if_contains("value")) {
    blob.value = *v;
    ++forms;
  }
  if (o->contains("bytesBase64")) {
    blob.bytesBase64 = std::string(json::requireString(*o, "bytesBase64"));
    ++forms;
  }
  if (const auto* m = o->if_contains("missing")) {
    if (!m->is_bool() || !m->get_bool()) {
      throw InvalidArgumentError("claimChecked entry " + blob.address +
                                 ": \"missing\" must be true when present");
    }
    blob.missing = true;
    ++forms;
  }
  if (forms != 1) {
    throw InvalidArgumentError("claimChecked entry " + blob.address +
                               " must hold exactly one of \"value\", \"bytesBase64\" and "
                               "\"missing\"; it holds " +
                               std::to_string(forms));
  }
  return blob;
}

json::object exportSubject(const ExportSubjectOptions& options, const std::string& subject) {
  if (subject.empty()) throw InvalidArgumentError("exportSubject: the subject is empty");
  requireUtf8(subject, "the data subject");
  if (!options.clock) throw InvalidArgumentError("ExportSubjectOptions.clock is null");
  requireNoUnfinishedErasure(options.events, subject);
  CitationSources sources{&options.events, options.archive, options.snapshots, options.keys};
  SubjectExecutions executions = executionsOfSubject(sources, subject);

  // Live logs first, by id; then what only the archive holds (the newest copy of each).
  json::array exported;
  std::set<std::string, std::less<>> live;
  for (const auto& info : executions.live) {
    live.insert(info.id);
    exported.emplace_back(executionJson(info, "live", options.events.read(info.id)));
  }
  std::map<std::string, sweep::ArchivedExecution> archived;
  if (options.archive != nullptr && !executions.archived.empty()) {
    options.archive->forEachSegment([&](const sweep::ArchiveSegment& segment) {
      for (const auto& info : segment.listExecutions()) {
        if (info.subject != subject || live.contains(info.id)) continue;
        auto copy = segment.read(info.id);
        if (!copy) continue;
        std::vector<kernel::Event> clear;
        forEachArchivedEvent(sources, *copy, [&](const kernel::Event& e) { clear.push_back(e); });
        copy->events = std::move(clear);
        archived[info.id] = std::move(*copy);
      }
    });
  }
  for (const auto& [id, copy] : archived) {
    exported.emplace_back(executionJson(copy.info, "archive", copy.events));
  }

  ClaimCheckRefs refs = claimCheckRefsOfSubject(sources, subject, executions);
  if (!refs.empty() && options.content == nullptr) {
    throw FailedPreconditionError(
        "export of subject '" + subject + "' refused: its executions cite " +
        std::to_string(refs.size()) +
        " claim-checked blob(s) and no content store is wired (ExportSubjectOptions.content); "
        "an export without them would hold refs, not the data");
  }
  json::array claimChecked;
  for (const auto& [address, ref] : refs) {
    claimChecked.emplace_back(toJson(resolveClaimCheckedBlob(*options.content, ref, subject)));
  }
  // Blobs the subject put that no run cites any more but the store still holds (a log retention
  // removed without archiving it): held on the subject all the same.
  // Not after an erasure: the ledger rows it keeps are of blobs other runs cite too.
  bool erased = options.keys != nullptr && options.keys->wasShredded(subject);
  if (options.ledger != nullptr && options.content != nullptr && !erased) {
    for (const auto& address : options.ledger->addressesOf(subject)) {
      if (refs.contains(address)) continue;
      ClaimCheckedBlob blob;
      try {
        blob = resolveClaimCheckedBlob(*options.content, ClaimCheckRef{address, {}, {}}, subject);
      } catch (const DataLossError&) {
        // The ledger lists a put before it lands: bytes that do not match their address, and
        // that no run cites, are a failed put's leftover (the sweep and erasure remove them),
        // not a value the subject was ever answered with.
        continue;
      }
      if (!blob.missing) claimChecked.emplace_back(toJson(blob));
    }
  }

  return json::object{{"format", kExportFormat},
                      {"subject", subject},
                      {"exportedAt", formatTimestamp(options.clock->nowMillis())},
                      {"executions", std::move(exported)},
                      {"claimChecked", std::move(claimChecked)}};
}

}  // namespace loom::compliance

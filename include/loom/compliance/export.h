// exportSubject: GDPR Art. 15/20 export of everything Loom holds on one data subject (ADR 0140
// D8 (b); format in docs/spec/export.md, "loom.export/1"). Every execution of the subject,
// live and archived, with its events as stored JSON objects (decrypted: the live ones through
// the SealingEventStore given as `events`, archived ones unsealed with `keys`), its kernel
// folded state and, for agent executions, the folded state of each agent loop; and every
// claim-checked blob the subject's executions cite, resolved from the content store
// (claimChecked), so the export is the data, not refs.
// Reads only; thread-safe as the stores it is given.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "loom/compliance/blob_ledger.h"
#include "loom/compliance/key_store.h"
#include "loom/content/content_store.h"
#include "loom/json/json.h"
#include "loom/kernel/event_store.h"
#include "loom/kernel/snapshot_store.h"
#include "loom/sweep/archive.h"
#include "loom/util/clock.h"

namespace loom::compliance {

// The format this build writes, and the oldest a reader of it needs to understand.
inline constexpr std::string_view kExportFormat = "loom.export/1";
inline constexpr std::string_view kExportFormatOldestReadable = "loom.export/1";

// One entry of an export's `claimChecked` (the record's ClaimCheckedBlob; docs/spec/export.md,
// "A claim-checked blob"): an offloaded blob the subject's executions cite, resolved to its
// data. Exactly one of value, bytesBase64 and missing is set.
struct ClaimCheckedBlob {
  std::string address;                // the content address (64 lower-case hex digits)
  std::optional<int64_t> size;        // the citing envelope's size, else the blob's byte length
  std::optional<json::value> digest;  // the citing envelope's digest (null when it has none)
  std::optional<json::value> value;   // the blob parsed, when its bytes are JSON text
  std::optional<std::string> bytesBase64;  // the bytes (standard base64), when they are not
  bool missing = false;                    // the store has no such blob (reclaimed or erased)

  bool operator==(const ClaimCheckedBlob&) const = default;
};

// The entry as the export document writes it.
json::value toJson(const ClaimCheckedBlob& blob);

// Reads an entry of an export document back (a file `loom export` wrote, say); an entry in
// any other shape is an InvalidArgumentError naming the member that is wrong.
ClaimCheckedBlob claimCheckedBlobFromJson(const json::value& entry);

struct ExportSubjectOptions {
  const kernel::EventStore& events;
  // Where the subject's claim-checked blobs are; null = not wired (refused as soon as the
  // subject's executions cite a blob: an export without them would be refs, not data).
  const content::ContentStore* content = nullptr;
  const sweep::Archive* archive = nullptr;             // null = no archive segments
  const kernel::SnapshotStore* snapshots = nullptr;    // null = no snapshots
  std::shared_ptr<const Clock> clock = systemClock();  // exportedAt
  // Unseals archived events (retention copies them sealed); null = they are stored clear.
  // With sealed logs, `events` and `snapshots` are the Sealing stores.
  const KeyStore* keys = nullptr;
  // The blobs the subject put, cited or not (a run whose log retention removed without
  // archiving it cites nothing any more); null = only cited blobs are exported.
  const BlobLedger* ledger = nullptr;
};

// The export document: {"format": "loom.export/1", "subject", "exportedAt", "executions": [...],
// "claimChecked": [...]} (docs/spec/export.md). An execution both live and archived is
// exported once, from the live log. Throws InvalidArgumentError for an empty subject,
// FailedPreconditionError when blobs are cited and options.content is null; store errors
// propagate (a corrupt row is a CorruptEventError naming it: an export is never silently
// partial).
json::object exportSubject(const ExportSubjectOptions& options, const std::string& subject);

}  // namespace loom::compliance

// The erasure's records in the control log (docs/spec/events.md, "Control log"):
//   ERASURE_CONTENT_DELETE_INTENDED {subject, addresses, kept?, touchCutoff}
//   SUBJECT_SHREDDED {subject}
//   ERASURE_CONTENT_DELETED {subject, deleted, retained, missing?, intent, datedAhead?,
//   datedAheadUntil?}
// Reading them back is how an interrupted erasure is found and finished. Private to the
// compliance module. Thread-safe as the event store; appends retry on a concurrent writer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loom/compliance/erase.h"
#include "loom/kernel/event_store.h"

namespace loom::compliance::detail {

inline constexpr std::string_view kIntendedType = "ERASURE_CONTENT_DELETE_INTENDED";
inline constexpr std::string_view kShreddedType = "SUBJECT_SHREDDED";
inline constexpr std::string_view kDeletedType = "ERASURE_CONTENT_DELETED";

// The newest erasure of one subject as the control log tells it.
struct ErasureRecord {
  int64_t intent = 0;  // seq of its ERASURE_CONTENT_DELETE_INTENDED
  std::vector<std::string> addresses;
  std::optional<int64_t> touchCutoff;
  bool shredJournaled = false;             // a SUBJECT_SHREDDED of the subject follows it
  std::optional<ContentDeleted> finished;  // its ERASURE_CONTENT_DELETED, when journaled
  std::vector<std::string> kept;           // the intent's "kept" (absent in older logs)
};

// The newest erasure of `subject` in the control log; nullopt when it was never erased.
// Throws CorruptEventError (naming the control log and seq) for an erasure event whose fields
// are missing or of the wrong kind.
std::optional<ErasureRecord> latestErasure(const kernel::EventStore& events,
                                           const std::string& subject);

// When each subject was last shredded (its newest SUBJECT_SHREDDED), by subject.
std::map<std::string, int64_t, std::less<>> shredTimes(const kernel::EventStore& events);

// Appends one control event and returns its seq, re-reading the log's end and retrying when a
// concurrent writer took the seq (ConflictError), up to a bound past which the conflict
// propagates.
int64_t journal(kernel::EventStore& events, std::string_view type, json::object data,
                int64_t atMillis);

}  // namespace loom::compliance::detail

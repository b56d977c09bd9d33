// Shared by every EventStore implementation's read side: the rules a log must keep for any
// reader to trust it (docs/spec/events.md, "Reading rules"), checked while a store scans it, and
// the checksum each stored row carries. A log that breaks one is a CorruptEventError naming the
// execution and the seq, on every read path (resume, state, log, sweep, erase, export), never
// replayed as truth.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "loom/kernel/event.h"

namespace loom::kernel {

// Checks the events of one scan as they are visited, in order.
// - seq runs fromSeq, fromSeq + 1, ... with no gap and no duplicate (a deleted row is a gap);
// - no seq at or past the execution's recorded next seq, and none missing before it (a
//   metadata row behind or ahead of its log);
// - a scan from the start begins with EXECUTION_STARTED, and no step has an event after its
//   STEP_COMPLETED (a second completion would replace the recorded value). Sealed and erased
//   events hide their step id and are not counted; their seal binds them to their seq.
class ScanCheck {
 public:
  // `nextSeq` is the execution's recorded next seq, nullopt when it has no metadata row.
  ScanCheck(const std::string& executionId, int64_t fromSeq, std::optional<int64_t> nextSeq);

  // Throws CorruptEventError when `event` breaks a rule.
  void visit(const Event& event);
  // Throws CorruptEventError when the log ended before the recorded next seq.
  void finish() const;

 private:
  const std::string& executionId_;
  std::optional<int64_t> nextSeq_;
  int64_t expected_;
  bool fromStart_;
  std::unordered_set<std::string> completed_;  // step ids with a STEP_COMPLETED (fromStart_)
};

// The step id of a STEP_COMPLETED or STEP_FAILED whose data can be read; nullopt for any other
// event, and for a sealed or erased one.
std::optional<std::string> stepEventId(const Event& event);
// The rule "no step has an event after its STEP_COMPLETED": throws CorruptEventError naming
// the execution and `event`'s seq when `completedBefore` (its step completed earlier in the
// log). ScanCheck applies it to a scan from the start; a reader that learnt the completed steps
// another way (the runtime, from a snapshot, for the events after it) applies it too.
void refuseAfterCompletion(const std::string& executionId, const Event& event,
                           bool completedBefore);

// The checksum stored with each event row: the first 8 bytes of BLAKE2b over the execution id,
// a 0 byte, the seq in decimal, a 0 byte and the body, read as a little-endian signed integer.
// The control log uses an empty execution id. Detects a changed byte, a row moved to another
// seq or execution; it is not a signature (whoever can write loom.db can recompute it).
int64_t rowChecksum(std::string_view executionId, int64_t seq, std::string_view body);

// Throws CorruptEventError when a stored row's checksum does not match its bytes. A row with no
// checksum (written before rows had one) is accepted as it is.
void verifyRowChecksum(const std::string& executionId, int64_t seq, std::string_view body,
                       std::optional<int64_t> stored);
// The same for a control log row (checksummed with an empty execution id).
void verifyControlRowChecksum(int64_t seq, std::string_view body, std::optional<int64_t> stored);

}  // namespace loom::kernel

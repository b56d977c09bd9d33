// Execution metadata: what `loom ls` shows and what list() filters on. Stores derive it from
// the events they append (applyEvent), so metadata and log can never disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "loom/kernel/event.h"
#include "loom/kernel/usage.h"

namespace loom::kernel {

enum class ExecutionStatus { kRunning, kParked, kCompleted, kFailed, kCancelled };

std::string_view statusName(ExecutionStatus status);  // "running", "parked", ...
std::optional<ExecutionStatus> statusFromName(std::string_view name);
inline bool isEnded(ExecutionStatus s) {
  return s == ExecutionStatus::kCompleted || s == ExecutionStatus::kFailed ||
         s == ExecutionStatus::kCancelled;
}

// Byte counts from which the size of the kernel's folded state (fold.h) is computed exactly
// without serializing it: see foldedStateBytes().
struct FoldSizes {
  int64_t headerBytes = 0;   // the state with no steps and no signals
  int64_t stepsBytes = 0;    // members of "steps", with their separators
  int64_t stepsCount = 0;
  int64_t signalsBytes = 0;  // elements of "signals", with their separators
  int64_t signalsCount = 0;
  int64_t inputBytes = 4;    // JSON text of the input ("null" = 4)
  int64_t resultBytes = 4;   // JSON text of output or error ("null" = 4)
};

struct ExecutionInfo {
  std::string id;
  std::string workflow;
  std::optional<std::string> subject;
  // The code version EXECUTION_STARTED recorded ("codeVersion", kept clear in a sealed one);
  // nullopt: none recorded (docs/adr/0029-runs-pinned-to-their-code.md).
  std::optional<std::string> codeVersion;
  ExecutionStatus status = ExecutionStatus::kRunning;
  int64_t startedAtMillis = 0;
  std::optional<int64_t> endedAtMillis;
  int64_t nextSeq = 1;    // the seq the next appended event gets
  int64_t steps = 0;      // STEP_COMPLETED events
  // Sizes of the log as stored (a sealing store's are those of the sealed texts):
  int64_t logBytes = 0;   // sum of the UTF-8 bytes of the events' JSON texts
  int64_t stateBytes = 0; // UTF-8 bytes of the folded state's JSON text
  FoldSizes sizes;
  // The sum of its model steps' "usage" (usage.h; clear in a sealed step too).
  TokenUsage usage;
};

// Updates `info` for one event about to be appended, whose stored text is `textBytes` long.
// `info.id` must be set; for the first event of an execution, pass a default ExecutionInfo.
// `outputBytes`, when >= 0, is the text length of the event's "output" (see toText).
// A sealed or erased event is measured without reading the fields it hides: the text length
// of its "sealed" (or "erased") member stands in for them (docs/spec/events.md, "Sealed
// events"); steps and signals are still counted.
// The folded state's "result" of a cancelled execution: {"cancelled": reason}.
inline json::object cancelledResult(const json::object& cancelledData) {
  return json::object{{"cancelled", cancelledData.at("reason")}};
}

void applyEvent(ExecutionInfo& info, const Event& event, int64_t textBytes,
                int64_t outputBytes = -1);

}  // namespace loom::kernel

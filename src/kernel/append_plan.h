// Shared by every EventStore implementation: checks a batch of events against an execution's
// metadata, numbers them, renders their stored text and computes the metadata after them, so
// the stores differ only in how they persist the result.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loom/kernel/event.h"
#include "loom/kernel/execution_info.h"

namespace loom::kernel {

struct AppendPlan {
  std::vector<Event> events;      // numbered
  std::vector<std::string> texts; // stored JSON text of each event
  ExecutionInfo after;            // metadata once the events are appended
};

// `current` is the execution's metadata, nullopt when it does not exist yet. Throws
// ConflictError (stale expectedNextSeq, or an existing execution started again) and
// InvalidArgumentError (an empty batch, a missing field, no EXECUTION_STARTED first).
AppendPlan planAppend(const std::string& executionId, const std::optional<ExecutionInfo>& current,
                      int64_t expectedNextSeq, std::vector<Event> events);

// Same for the control log, whose next seq is `currentNextSeq`.
std::vector<std::string> planControlAppend(int64_t currentNextSeq, int64_t expectedNextSeq,
                                           std::vector<ControlEvent>& events);

}  // namespace loom::kernel

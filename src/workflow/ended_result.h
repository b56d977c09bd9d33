// How a run that has ended reads as a RunResult (a resume of it runs nothing).
#pragma once

#include "loom/kernel/event_store.h"
#include "loom/workflow/runtime.h"

namespace loom::workflow {

// The RunResult error of a cancelled run: {"code": "cancelled", "message": reason}.
json::value cancelledError(const json::value& reason);

// Read whole (not only the last event): a corrupt row is refused as `loom log` refuses it.
RunResult endedResult(const kernel::ExecutionInfo& info, const kernel::EventStore& store);

}  // namespace loom::workflow

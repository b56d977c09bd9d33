// Fork and rerun (docs/operations.md, "Fork and rerun"; ADR 0030): a new run whose log is a
// recorded run's up to a point, continued on the code at hand. The source is left as it was.
// The copy cites the same blobs (nothing is copied out of the content store), keeps the subject
// (so the sealing store seals it under the subject's key, and erasure and export cover it), and
// records where it came from ("forkedFrom" in its EXECUTION_STARTED).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loom/json/json.h"
#include "loom/kernel/event.h"

namespace loom::workflow {

struct ForkOptions {
  // Where the fork's log stops (exactly one): before the first record of this step (its
  // STEP_COMPLETED, or STEP_FAILED), so the fork runs that step again; or before this seq.
  std::optional<std::string> atStep;
  std::optional<int64_t> atSeq;
  // Replaces the recorded input (admitted and filtered as a new run's input).
  std::optional<json::value> input;
  // The fork's id; empty: a fresh one.
  std::string id;
};

// The events of a fork of `sourceId` (whose whole log, read with its keys, is `source`), cut as
// `options` says, numbered from 1, appended at `nowMillis`, and started on `codeVersion` (empty:
// none recorded). Dropped: the end of the source (EXECUTION_COMPLETED, _FAILED, _CANCELLED) and
// a cancel signal, so the fork goes on. Throws NotFoundError for a step the log never
// recorded, InvalidArgumentError for a seq outside 2..(the source's next seq), and
// FailedPreconditionError for a log that holds erased data (its subject was erased).
std::vector<kernel::Event> forkedLog(const std::string& sourceId,
                                     const std::vector<kernel::Event>& source,
                                     const ForkOptions& options, const std::string& codeVersion,
                                     int64_t nowMillis);

// Where a rerun of a failed run forks (`loom rerun`): at the first record of the last step that
// failed (the failure that ended it), or, when no step failed (the workflow's own code threw), before its
// EXECUTION_FAILED. Throws FailedPreconditionError when `source` did not end failed.
ForkOptions rerunPoint(const std::string& sourceId, const std::vector<kernel::Event>& source);

}  // namespace loom::workflow

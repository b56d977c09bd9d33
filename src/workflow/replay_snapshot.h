// Snapshots of replay state (docs/spec/snapshots.md): a ReplayLog as the JSON a SnapshotStore
// keeps, and how the runtime uses them — loading the newest usable snapshot plus the log's
// tail, and writing one when a run parks or its log has grown by snapshotEveryEvents.
// A snapshot is an optimization: every failure to read or write one is reported through
// RuntimeOptions::onWarn and the run goes on from the log. Internal to the runtime.
// Thread-safety: free functions over a ReplayLog owned by the calling run.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "loom/kernel/event_store.h"
#include "loom/workflow/runtime.h"
#include "replay_log.h"

namespace loom::workflow {

// The version of the snapshot state JSON this build writes, and the oldest it reads.
// Version 2 adds "checkpoints": a reader of version 1 would re-run the steps a checkpoint
// forgot, so it must refuse a version 2 state (and replay the log).
inline constexpr int64_t kSnapshotStateVersion = 2;
inline constexpr int64_t kSnapshotStateOldestReadable = 1;

// The state of `log` as of seq `seq` (= log.nextSeq - 1).
json::value replayStateToJson(const ReplayLog& log, int64_t seq);

// The ReplayLog a snapshot of `executionId` at `seq` holds, with nextSeq = seq + 1 and
// snapshotSeq = seq. Throws FailedPreconditionError for a version this build cannot read and
// DataLossError for any other defect, each naming the execution and the seq.
ReplayLog replayStateFromJson(const json::value& state, const std::string& executionId,
                              int64_t seq);

// True when `options` asks the runtime to write snapshots.
inline bool writesSnapshots(const RuntimeOptions& options) {
  return options.snapshots != nullptr && options.snapshotEveryEvents > 0;
}

// Loads the ReplayLog of the execution `info` describes: from its newest snapshot plus the
// events after it when that snapshot is usable (it is the same execution, its seq is within
// the log, it reads), otherwise — reporting why through options.onWarn — from the whole log.
// Errors reading the log itself (CorruptEventError, ...) propagate.
ReplayLog loadReplayLog(const kernel::EventStore& store, const RuntimeOptions& options,
                        const kernel::ExecutionInfo& info);

// Writes a snapshot of `log` at log.nextSeq - 1 and prunes the older ones, unless one at that
// seq was loaded or written already. Sets log.snapshotSeq even when the store fails (the
// failure is reported through options.onWarn), so a failing store is retried only after
// another snapshotEveryEvents events.
void writeSnapshot(const RuntimeOptions& options, const std::string& executionId, ReplayLog& log);

// Writes a snapshot when the log has grown by options.snapshotEveryEvents since the last.
inline void maybeWriteSnapshot(const RuntimeOptions& options, const std::string& executionId,
                               ReplayLog& log) {
  if (writesSnapshots(options) &&
      log.nextSeq - 1 - log.snapshotSeq >= options.snapshotEveryEvents) {
    writeSnapshot(options, executionId, log);
  }
}

// Reports `message` through options.onWarn, or on stderr when it is empty.
void warn(const RuntimeOptions& options, std::string_view message);

}  // namespace loom::workflow

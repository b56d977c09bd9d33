// sweepUnpinnedContent: garbage collection of a content store (DESIGN §4, ADR 0138/0140/0146).
// It scans the live logs, archive segments and snapshots with the content walker, then walks
// the store's blobs and reclaims what nothing needs:
// - a load-bearing ref (retain: true at the top of a recorded step output) is kept while any
//   live log cites it, however old;
// - everything an archive segment or a snapshot cites is kept (over-retain, never lose);
// - any other ref cited by live logs is telemetry: kept while a citing execution runs, and
//   until `ttl` after the last citing execution ended (ADR 0146); then reclaimed;
// - a blob cited nowhere is reclaimed once untouched for `grace` (a put whose citation is not
//   journaled yet must survive).
// Every delete is deleteIfUntouchedSince(address, sweepStart - grace), so a concurrent put of
// the same bytes spares the blob. Memory is bounded by the set of cited addresses, not by log
// size: logs are streamed one execution at a time. Not thread-safe against itself: run one
// sweep per store at a time (the CLI takes a lock).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "loom/content/content_store.h"
#include "loom/kernel/event_store.h"
#include "loom/util/clock.h"
#include "loom/util/error.h"

namespace loom::sweep {

using AddressVisitor = std::function<void(std::string_view address)>;

// A source that pins every address it cites (archive segments, snapshots).
struct PinSource {
  std::string name;  // the reason reported for what it keeps: "archive", "snapshot"
  std::function<void(const AddressVisitor&)> visitAddresses;
};

struct SweepSources {
  const kernel::EventStore* liveLogs = nullptr;  // required
  std::vector<PinSource> pins;
};

struct SweepProgress {
  int64_t executionsScanned = 0;
  int64_t executionsTotal = -1;  // -1 when unknown
  int64_t blobsSeen = 0;
  std::string phase;  // "scan", "reclaim" (the walk) or "delete" (every 64 deletes)
};

struct SweepOptions {
  int64_t ttlMillis = 7LL * 24 * 3600 * 1000;  // telemetry kept this long after its run ended
  int64_t graceMillis = 3600LL * 1000;         // an uncited blob survives this long untouched
  bool dryRun = false;                         // report what would be deleted; delete nothing
  std::shared_ptr<const Clock> clock = systemClock();
  // Called as the sweep goes; a throw stops it there (what it deleted stays deleted).
  std::function<void(const SweepProgress&)> onProgress;
};

struct SweepReport {
  int64_t executionsScanned = 0;
  int64_t eventsScanned = 0;
  int64_t citedAddresses = 0;  // distinct addresses cited by any source
  int64_t blobsSeen = 0;
  std::map<std::string, int64_t>
      keptByReason;  // loadBearing, archive, snapshot, running, ttl, grace
  int64_t deleted = 0;
  int64_t bytesFreed = 0;
  int64_t spared = 0;  // a conditional delete found the blob touched meanwhile
  bool dryRun = false;
};

// One execution whose events the sweep could not read, and why.
struct UnreadableExecution {
  std::string executionId;
  std::string reason;  // the error's message (sealed without keys, corrupt row, unknown type)
};

// The sweep met history it cannot read: a sealed event with no keys to open it, a corrupt row,
// an unknown event type, in a live log, an archive segment or a snapshot. Such history may
// cite any blob, so the sweep deletes nothing (never "cannot read" as "cites nothing").
// FailedPrecondition: give the sweep the keys, or repair the named executions, then run again.
class SweepRefusedError : public FailedPreconditionError {
 public:
  explicit SweepRefusedError(std::vector<UnreadableExecution> unreadable);
  const std::vector<UnreadableExecution>& unreadable() const { return unreadable_; }

 private:
  std::vector<UnreadableExecution> unreadable_;
};

// Throws FailedPreconditionError (deleting nothing) when the store cannot enumerate, lacks
// deleteIfUntouchedSince or touchClock, or sources.liveLogs is null; SweepRefusedError
// (deleting nothing) when any live log, archived event or snapshot cannot be read: every live
// log is still scanned, so the error names every unreadable execution.
SweepReport sweepUnpinnedContent(content::ContentStore& store, const SweepSources& sources,
                                 const SweepOptions& options);

json::value toJson(const SweepReport& report);
std::string describe(const SweepReport& report);

}  // namespace loom::sweep

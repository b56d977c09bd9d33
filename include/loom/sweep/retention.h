// Retention (`storage.retention { afterDays, archive }`, `loom retention run`): discards the
// live logs of executions that ended more than afterDays ago, after writing them into one new
// archive segment when `archive` is on. Crash-safe by order: the segment is durable (fsynced
// and published) before any live log is removed, and an execution's snapshots are removed before
// its log. Whatever fails or crashes, each selected execution is still live or archived (or
// both, when a run stopped between the two; the next run removes it), never neither. A live log
// is removed only once its archived copy reads back event for event as the live log (every
// block's checksum checked); a copy that does not (damaged on its way to the disk) stops the
// run before anything is removed, and the next run archives that log anew.
// A run that selected anything is recorded as a RETENTION_RUN control event.
// The lead wires the config keys and the CLI command; this is the library function.
// Thread-safety: runRetention may run beside runtimes and sweeps (it touches ended executions
// only); run one retention per home at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "loom/json/json.h"
#include "loom/kernel/event_store.h"
#include "loom/kernel/snapshot_store.h"
#include "loom/sweep/archive.h"
#include "loom/sweep/archive_store.h"
#include "loom/util/clock.h"

namespace loom::sweep {

struct RetentionOptions {
  int64_t afterDays = 30;              // executions that ended more than this long ago
  std::optional<int64_t> afterMillis;  // overrides afterDays (tests, fine-grained config)
  bool archive = true;                 // write them into a segment before removing them
  bool dryRun = false;                 // report what would happen; change nothing
  std::shared_ptr<const Clock> clock = systemClock();
  std::size_t pageSize = 256;  // executions listed per store call
  int compressionLevel = 3;    // zstd level of the segment
  // Called before each live log is removed; a throw stops the run there (run it again to
  // finish). The CLI proves its maintenance lock is still held (PostgreSQL).
  std::function<void()> beforeRemoving;
};

struct RetentionReport {
  int64_t cutoffMillis = 0;  // executions that ended before this were selected
  int64_t scanned = 0;       // ended executions older than the cutoff
  int64_t archived = 0;      // written into the segment
  // Selected logs a segment held already (an earlier run archived them and was killed before
  // it removed them): removed without being archived again.
  int64_t alreadyArchived = 0;
  // Selected logs whose copy in an earlier segment did not read back as the live log (a
  // damaged block, a missing event): archived again into the new segment, which `loom log`
  // reads first. The damaged segments are named in damagedSegments and left as they are.
  // A damaged segment's other selected logs are archived again too (counted here, not in
  // alreadyArchived), so no live log is removed whose only copy is in a damaged segment.
  int64_t rearchived = 0;
  std::set<std::string> damagedSegments;
  // The earlier segments the alreadyArchived logs' only copies are in: journaled with the run,
  // so a sweep, an erasure or an export refuses when one of them is missing.
  std::set<std::string> alreadyArchivedIn;
  int64_t removed = 0;       // live logs removed
  int64_t snapshotsRemoved = 0;
  std::string segmentName;  // the new segment's name; empty when none was written
  std::string segmentPath;  // where it is (ArchiveStore::locate); empty when none was written
  int64_t bytesBefore = 0;  // log bytes of the selected executions in the live store
  int64_t bytesAfter = 0;   // bytes of the segment that now holds them (0: none)
  bool archive = true;
  bool dryRun = false;
};

// Run one retention per archive at a time (the CLI holds the home's lock, or the maintenance
// lock on PostgreSQL): a leftover temp segment in the archive's staging folder is taken for a
// killed run's and deleted.
// Runs retention over `store` (and `snapshots`, when not null), publishing the segment to
// `archive` (<home>/archive, or the server's archive tables). Throws InvalidArgumentError for a
// negative age or a zero page size. On a failure before the segment is durable, nothing is removed
// and no segment is left; on a failure while removing, the error says how far it got and that the
// rest is both live and archived (run again). Before its first remove it appends
// RETENTION_ARCHIVED {segment, alreadyArchivedIn} (the segments the removed logs rely on), and
// when it is done RETENTION_RUN {cutoff, archived, removed, segment, and when there are any
// damagedSegments and alreadyArchivedIn}, both only when it selected anything; a dry run changes
// nothing at all.
RetentionReport runRetention(kernel::EventStore& store, kernel::SnapshotStore* snapshots,
                             const std::shared_ptr<ArchiveStore>& archive,
                             const RetentionOptions& options);

// Throws UnavailableError naming the first segment a RETENTION_ARCHIVED or RETENTION_RUN control
// event records (segment, alreadyArchivedIn) that `archive` does not hold (its disk not mounted,
// the file moved): the runs archived there have no other copy, so a sweep, an erasure or an
// export without it would take them for gone.
void requireJournaledSegments(const kernel::EventStore& store, const Archive& archive);

json::value toJson(const RetentionReport& report);
// A few lines for a terminal: what was selected, archived where, removed, bytes before/after.
std::string describe(const RetentionReport& report);

}  // namespace loom::sweep

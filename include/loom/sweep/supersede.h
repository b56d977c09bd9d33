// Retiring a damaged archive segment (`loom retention supersede SEGMENT`). A segment with a
// damaged block makes the sweep, erasure and export refuse (they cannot tell what it cites or
// holds). When every run it lists is whole elsewhere (a later retention run archived it again
// into a newer segment, or its live log is still there), the segment is no longer anyone's
// only copy: supersedeSegment verifies that, copy by copy, and journals RETENTION_SUPERSEDED.
// From then on the readers (readableArchive) leave the segment out, and the operator may move
// it away; the segments holding the copies become ones retention relies on
// (requireJournaledSegments).
// Thread-safety: run it under the home's maintenance lock, like retention.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "loom/json/json.h"
#include "loom/kernel/event_store.h"
#include "loom/sweep/archive.h"
#include "loom/sweep/archive_store.h"
#include "loom/util/clock.h"

namespace loom::sweep {

// The segments RETENTION_SUPERSEDED control events retired. Throws as readControlOfTypes.
std::set<std::string> supersededSegments(const kernel::EventStore& store);

// The archive the readers read: every segment of `archive` but the superseded ones. `store`
// is the home's event store (its control log).
Archive readableArchive(std::shared_ptr<const ArchiveStore> archive,
                        const kernel::EventStore& store);

struct SupersedeOptions {
  bool dryRun = false;  // verify and report; journal nothing
  std::shared_ptr<const Clock> clock = systemClock();
  // Called after the verification, before the mark is journaled; a throw journals nothing. The
  // CLI proves its maintenance lock is still held (PostgreSQL).
  std::function<void()> beforeJournaling;
};

struct SupersedeReport {
  std::string segment;               // its name
  std::string location;              // where it is (ArchiveStore::locate)
  int64_t executions = 0;            // the runs it lists
  std::vector<std::string> damaged;  // the runs whose block does not read back
  std::string damage;                // what the first damaged block's read said
  std::set<std::string> heldIn;      // the segments holding whole copies of its runs
  int64_t liveCopies = 0;            // runs whose whole copy is their live log
  bool alreadySuperseded = false;    // journaled before: nothing was done
  bool dryRun = false;
};

// toJson names `damaged` "damagedRuns" (the ids); the journaled event counts them as "damaged".
// Verifies that every run segment `name` lists has a whole copy elsewhere, then appends
// RETENTION_SUPERSEDED {segment, executions, damaged, heldIn, liveCopies} (not in a dry run).
// A copy counts when it is the same version of the log (startedAt, nextSeq), reads back with
// every event (each block's checksum) and, when the segment's own block still reads, holds the
// same events. `store` is the event store as stored (sealed events sealed), as segments hold
// them. Throws, journaling nothing:
// - NotFoundError when the archive has no such segment;
// - FailedPreconditionError when its index does not read (which runs it holds is unknown),
//   when it reads back whole (nothing to supersede), or when a run has no whole copy elsewhere
//   (naming them: the segment is their only copy; restore it from a backup);
// - what reading the stores throws.
SupersedeReport supersedeSegment(kernel::EventStore& store,
                                 const std::shared_ptr<const ArchiveStore>& archive,
                                 const std::string& name, const SupersedeOptions& options);

json::value toJson(const SupersedeReport& report);
// A few lines for a terminal: the segment, its damage, where its runs are whole.
std::string describe(const SupersedeReport& report);

}  // namespace loom::sweep

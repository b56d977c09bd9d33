// An execution as an operator sees it (`loom ls`, `loom ls --json`, the inspector's run list):
// its status in the words of `loom ls` (running, orphaned, submitted, parked, retrying,
// completed, failed, cancelled, and erased), who holds it, and why it waits. Computed from the
// store's metadata, the run's lease and its last park; the one home of these rules. Functions
// over a thread-safe store; they keep no state.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loom/json/json.h"
#include "loom/kernel/event_store.h"
#include "loom/kernel/lease.h"

namespace loom::inspect {

// Who runs an execution whose status is running: its lease holder while that one is alive,
// orphaned (safe to resume) otherwise.
struct Liveness {
  bool orphaned = false;
  std::optional<kernel::Lease> lease;  // the last holder, if any
  int64_t nowMillis = 0;
};

// When each erased subject was shredded (the control log): a run of that subject started
// before then reads as erased.
using ShredTimes = std::map<std::string, int64_t, std::less<>>;

// One execution, everything `loom ls` shows of it.
struct RunStatus {
  kernel::ExecutionInfo info;
  bool erased = false;
  bool archived = false;  // retention moved its log into an archive segment (info is its copy's)
  // running runs; a parked run only while a live process holds its lease (a `loom run`
  // waiting out a short retry wait inline)
  std::optional<Liveness> live;
  std::optional<kernel::ParkState> park;  // parked runs whose last park is readable here
  // Live workers left it to a worker of its code version, and none of them runs that version
  // (markUnserved).
  bool unserved = false;
  // running, orphaned, submitted, parked, retrying, completed, failed, cancelled
  std::string status() const;
};

// True when `info`'s subject was shredded after the run started: it reads as erased.
bool isErased(const kernel::ExecutionInfo& info, const ShredTimes& shreds);

RunStatus runStatusOf(const kernel::EventStore& store, const kernel::ExecutionInfo& info,
                      const ShredTimes& shreds);

// Marks `runs` that have not ended and whose code version live workers left to workers of
// their own and none of them runs (EventStore::liveWorkers, docs/spec/leases.md "Workers");
// returns how many. Throws what liveWorkers throws.
std::size_t markUnserved(const kernel::EventStore& store, std::vector<RunStatus>& runs);

// The object `loom ls --json` prints for one execution (docs/cli.md).
json::object toJson(const RunStatus& run);

// "pid 12@host, beat 0.4 s ago" (or "was pid ..." when orphaned); "-" without a lease.
std::string ownerText(const std::optional<Liveness>& live);

// The status as `loom ls` writes it: status(), and for a parked run why it waits
// ("parked: signal approve", "parked: timer 12:00:05", "parked: approval of <step>,
// deadline 12:30:00"; times as shortTime), for a retrying run its next attempt ("retrying:
// next 12:00:07"), for a
// running or orphaned run its lease holder ("running: pid 12@host"), and for a parked or
// retrying run a live process holds while it waits inline, "retrying, inline: pid 12".
std::string statusText(const RunStatus& run, int64_t nowMillis);

// A run that is due (its timer, approval deadline or retry time passed more than `graceMillis`
// ago) and that no live process holds: due work runs only when a worker (or a resume) runs it.
bool dueAndUnowned(const RunStatus& run, int64_t nowMillis, int64_t graceMillis);

// A UTC time for a table cell: "12:00:05" on the day of `nowMillis`, else "12-06 12:00:05".
std::string shortTime(int64_t millis, int64_t nowMillis);

}  // namespace loom::inspect

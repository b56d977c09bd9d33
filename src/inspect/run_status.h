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
  std::optional<Liveness> live;          // running runs only
  std::optional<kernel::ParkState> park;  // parked runs whose last park is readable here
  // running, orphaned, submitted, parked, retrying, completed, failed, cancelled
  std::string status() const;
};

RunStatus runStatusOf(const kernel::EventStore& store, const kernel::ExecutionInfo& info,
                      const ShredTimes& shreds);

// The object `loom ls --json` prints for one execution (docs/cli.md).
json::object toJson(const RunStatus& run);

// "pid 12@host, beat 0.4 s ago" (or "was pid ..." when orphaned); "-" without a lease.
std::string ownerText(const std::optional<Liveness>& live);

}  // namespace loom::inspect

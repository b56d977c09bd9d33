// How a run an executor ran stands now, in the words `loom worker` prints: "completed",
// "parked (timer until 2026-12-06T10:00:00.000Z)", "taken by another runner: process 42 on
// host 'a' (...)", or nullopt when it is still running with nobody holding it (the launcher
// stopped short: it did not finish).
#pragma once

#include <optional>
#include <string>

#include "loom/kernel/event_store.h"

namespace loom::worker {

std::optional<std::string> settledOutcome(const kernel::EventStore& store, const std::string& id);

// A stopped run in those words: its status, and for a parked one its reason and due time.
std::string describeStop(kernel::ExecutionStatus status, const std::string& parkReason,
                         std::optional<int64_t> wakeAtMillis);

}  // namespace loom::worker

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

}  // namespace loom::worker

// Options of the kill switch store (where the operator's stops are kept and how often a
// running process re-reads them). Boot fills them from storage.home; the CLI's
// `loom kill` / `loom unkill` open the same database. Plain values.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "loom/util/clock.h"

namespace loom::middleware {

// The name of the kill switch layer in the chain (outermost, ADR 0140 D5).
inline constexpr std::string_view kKillSwitchName = "killSwitch";
// The row that stops every effect.
inline constexpr std::string_view kAllEffects = "*";
// How long a process may answer isStopped from its cached copy of the stops. A stop written
// by another process is seen within this interval (the promise is "within one second").
inline constexpr int64_t kKillSwitchRefreshMillis = 250;

struct KillSwitchOptions {
  // The home's database, "<home>/loom.db" (":memory:" for a private in-memory one in tests).
  // Its folder must exist; the file and the kill_switch table are created when missing.
  std::string path;
  // Reads the time for the refresh interval and the `at` of each stop.
  std::shared_ptr<const Clock> clock = systemClock();
  int64_t refreshMillis = kKillSwitchRefreshMillis;
  // How long a statement waits for a lock held by another process (then UnavailableError).
  int busyTimeoutMillis = 5000;
};

}  // namespace loom::middleware

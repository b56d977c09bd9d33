// What a worker tells its store of the code it runs (EventStore::announceWorker;
// docs/spec/leases.md "Workers"), so `loom ls` can show the runs no worker of their code version
// serves: the versions of the runs it ran (and the one it declares), and those of the runs it
// left to a worker of their own version. A version it left and later ran (its files were put
// back) moves from one list to the other.
// Thread-safe: ran() and left() come from run threads; sayIfDue() and goodbye() from the
// claiming thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "loom/kernel/event_store.h"

namespace loom::worker {

class Presence {
 public:
  // The word lasts at least kTtlMillis (and three polls: a worker polling rarely is said again
  // at its next look) and is said again a third of that later, or at once on news.
  static constexpr int64_t kTtlMillis = 30'000;

  Presence(kernel::EventStore& store, kernel::LeaseOwner owner,
           const std::optional<std::string>& declared, int64_t pollMillis,
           std::function<void(const std::string&)> warn);

  void ran(const std::optional<std::string>& version);
  void left(const std::string& recorded, const std::string& current);
  // Says it when something changed or the last word is a third of its ttl old. A store that
  // cannot take it is reported once (until it can again); the worker goes on.
  void sayIfDue();
  // Says it is gone (a ttl of 0), when the worker stops.
  void goodbye();

 private:
  void say(int64_t ttlMillis);

  kernel::EventStore& store_;
  const kernel::LeaseOwner owner_;
  const int64_t ttlMillis_;
  const std::function<void(const std::string&)> warn_;
  std::mutex mu_;
  std::set<std::string> runs_;    // GUARDED_BY(mu_)
  std::set<std::string> leaves_;  // GUARDED_BY(mu_)
  bool changed_ = true;           // GUARDED_BY(mu_)
  std::optional<std::chrono::steady_clock::time_point> lastSaid_;  // claiming thread's
  bool failing_ = false;                                           // claiming thread's
};

}  // namespace loom::worker

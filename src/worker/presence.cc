#include "presence.h"

#include <algorithm>

namespace loom::worker {

Presence::Presence(kernel::EventStore& store, kernel::LeaseOwner owner,
                   const std::optional<std::string>& declared, int64_t pollMillis,
                   std::function<void(const std::string&)> warn)
    : store_(store),
      owner_(std::move(owner)),
      ttlMillis_(std::max(kTtlMillis, 3 * pollMillis)),
      warn_(std::move(warn)) {
  if (declared) runs_.insert(*declared);
}

void Presence::ran(const std::optional<std::string>& version) {
  if (!version) return;
  std::lock_guard lock(mu_);
  changed_ = runs_.insert(*version).second || changed_;
  changed_ = leaves_.erase(*version) > 0 || changed_;
}

void Presence::left(const std::string& recorded, const std::string& current) {
  std::lock_guard lock(mu_);
  changed_ = leaves_.insert(recorded).second || changed_;
  changed_ = runs_.erase(recorded) > 0 || changed_;
  changed_ = runs_.insert(current).second || changed_;
}

void Presence::sayIfDue() {
  {
    std::lock_guard lock(mu_);
    auto now = std::chrono::steady_clock::now();
    bool due = changed_ || !lastSaid_ ||
               now - *lastSaid_ >= std::chrono::milliseconds(ttlMillis_ / 3);
    if (!due) return;
  }
  say(ttlMillis_);
}

void Presence::goodbye() { say(0); }

void Presence::say(int64_t ttlMillis) {
  kernel::WorkerPresence word;
  word.owner = owner_;
  {
    std::lock_guard lock(mu_);
    word.runs.assign(runs_.begin(), runs_.end());
    word.leaves.assign(leaves_.begin(), leaves_.end());
    changed_ = false;
  }
  lastSaid_ = std::chrono::steady_clock::now();
  try {
    store_.announceWorker(word, ttlMillis);
    failing_ = false;
  } catch (const std::exception& e) {
    if (!failing_) {
      warn_(std::string("cannot record this worker's presence (`loom ls` may not show which "
                        "runs no worker of their code version serves); retried: ") +
            e.what());
    }
    failing_ = true;  // said again a third of the ttl later, whole: nothing is lost
  }
}

}  // namespace loom::worker

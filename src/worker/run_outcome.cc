#include "run_outcome.h"

#include "loom/util/clock.h"

namespace loom::worker {

std::optional<std::string> settledOutcome(const kernel::EventStore& store, const std::string& id) {
  auto info = store.info(id);
  if (!info) return "gone (removed while it ran)";
  if (info->status != kernel::ExecutionStatus::kRunning) {
    std::optional<kernel::ParkState> park;
    if (info->status == kernel::ExecutionStatus::kParked) {
      try {
        park = kernel::currentPark(store, *info);
      } catch (const kernel::SealedEventError&) {
        // Sealed, and no key here: the status alone says it parked.
      }
    }
    return describeStop(info->status, park ? park->reason : "",
                        park ? park->wakeAtMillis : std::nullopt);
  }
  int64_t now = systemClock()->nowMillis();
  auto lease = store.currentLease(id);
  if (!kernel::isOrphaned(lease, now)) {
    return "taken by another runner: " + kernel::describeHolder(*lease, now);
  }
  return std::nullopt;
}

std::string describeStop(kernel::ExecutionStatus status, const std::string& parkReason,
                         std::optional<int64_t> wakeAtMillis) {
  std::string text(kernel::statusName(status));
  if (status != kernel::ExecutionStatus::kParked || parkReason.empty()) return text;
  if (wakeAtMillis) return text + " (" + parkReason + " until " + formatTimestamp(*wakeAtMillis) + ")";
  return text + " (" + parkReason + ")";
}

}  // namespace loom::worker

#include "run_outcome.h"

#include "loom/util/clock.h"

namespace loom::worker {

std::optional<std::string> settledOutcome(const kernel::EventStore& store, const std::string& id) {
  auto info = store.info(id);
  if (!info) return "gone (removed while it ran)";
  if (info->status != kernel::ExecutionStatus::kRunning) {
    std::string text(kernel::statusName(info->status));
    if (info->status == kernel::ExecutionStatus::kParked) {
      try {
        auto park = kernel::currentPark(store, *info);
        if (park && park->wakeAtMillis) {
          text += " (" + park->reason + " until " + formatTimestamp(*park->wakeAtMillis) + ")";
        } else if (park) {
          text += " (" + park->reason + ")";
        }
      } catch (const kernel::SealedEventError&) {
        // Sealed, and no key here: the status alone says it parked.
      }
    }
    return text;
  }
  int64_t now = systemClock()->nowMillis();
  auto lease = store.currentLease(id);
  if (!kernel::isOrphaned(lease, now)) {
    return "taken by another runner: " + kernel::describeHolder(*lease, now);
  }
  return std::nullopt;
}

}  // namespace loom::worker

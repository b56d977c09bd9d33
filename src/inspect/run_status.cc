#include "inspect/run_status.h"

#include <cstdio>

#include "loom/util/clock.h"

namespace loom::inspect {
namespace {

json::value timestampOrNull(const std::optional<int64_t>& millis) {
  return millis ? json::value(formatTimestamp(*millis)) : json::value(nullptr);
}

std::optional<Liveness> livenessOf(const kernel::EventStore& store,
                                   const kernel::ExecutionInfo& info) {
  if (info.status != kernel::ExecutionStatus::kRunning) return std::nullopt;
  Liveness l;
  l.lease = store.currentLease(info.id);
  l.nowMillis = systemClock()->nowMillis();
  l.orphaned = kernel::isOrphaned(l.lease, l.nowMillis);
  return l;
}

// Why a parked run waits, when its last event can be read here (a sealed one without keys
// cannot: ls shows the metadata only).
std::optional<kernel::ParkState> parkIfReadable(const kernel::EventStore& store,
                                                const kernel::ExecutionInfo& info) {
  try {
    return kernel::currentPark(store, info);
  } catch (const kernel::SealedEventError&) {
    return std::nullopt;
  }
}

bool isErased(const kernel::ExecutionInfo& info, const ShredTimes& shreds) {
  if (!info.subject) return false;
  auto it = shreds.find(*info.subject);
  return it != shreds.end() && info.startedAtMillis <= it->second;
}

json::value ownerJson(const std::optional<Liveness>& live) {
  if (!live || !live->lease) return nullptr;
  const kernel::Lease& lease = *live->lease;
  return json::object{{"host", lease.owner.host},
                      {"pid", lease.owner.pid},
                      {"heartbeatAt", formatTimestamp(lease.renewedAtMillis)},
                      {"heartbeatAgeMs", live->nowMillis - lease.renewedAtMillis},
                      {"leaseExpiresAt", formatTimestamp(lease.expiresAtMillis)}};
}

}  // namespace

std::string RunStatus::status() const {
  // Recorded by `loom run --submit` and never run yet: only its EXECUTION_STARTED, no lease.
  if (live && !live->lease && info.nextSeq == 2) return "submitted";
  if (live && live->orphaned) return "orphaned";
  if (park && park->awaitsRetry()) return "retrying";
  return std::string(kernel::statusName(info.status));
}

RunStatus runStatusOf(const kernel::EventStore& store, const kernel::ExecutionInfo& info,
                      const ShredTimes& shreds) {
  RunStatus run{.info = info};
  run.erased = isErased(info, shreds);
  run.live = livenessOf(store, info);
  if (!run.erased) run.park = parkIfReadable(store, info);
  return run;
}

json::object toJson(const RunStatus& run) {
  const kernel::ExecutionInfo& info = run.info;
  bool erased = run.erased;
  json::object o{
      {"id", info.id},
      {"workflow", info.workflow},
      {"status", run.status()},
      {"subject", info.subject ? json::value(*info.subject) : json::value(nullptr)},
      {"steps", erased ? json::value(nullptr) : json::value(info.steps)},
      {"logBytes", info.logBytes},
      {"stateBytes", erased ? json::value(nullptr) : json::value(info.stateBytes)},
      {"startedAt", formatTimestamp(info.startedAtMillis)},
      {"endedAt", timestampOrNull(info.endedAtMillis)},
  };
  if (erased) o["erased"] = true;
  if (run.live) o["owner"] = ownerJson(run.live);
  if (const auto& park = run.park) {
    o["parkReason"] = park->reason;
    if (park->awaitsRetry()) {
      if (park->wakeAtMillis) o["nextAttemptAt"] = formatTimestamp(*park->wakeAtMillis);
      o["lastError"] = park->detail;
    } else if (park->wakeAtMillis) {
      o["wakeAt"] = formatTimestamp(*park->wakeAtMillis);
    }
  }
  return o;
}

std::string ownerText(const std::optional<Liveness>& live) {
  if (!live || !live->lease) return "-";
  const kernel::Lease& lease = *live->lease;
  char age[32];
  std::snprintf(age, sizeof age, "%.1f s",
                static_cast<double>(live->nowMillis - lease.renewedAtMillis) / 1000.0);
  return (live->orphaned ? "was pid " : "pid ") + std::to_string(lease.owner.pid) + "@" +
         lease.owner.host + ", beat " + age + " ago";
}

}  // namespace loom::inspect

#include "inspect/run_status.h"

#include <cstdio>
#include <set>

#include "loom/util/clock.h"

namespace loom::inspect {
namespace {

json::value timestampOrNull(const std::optional<int64_t>& millis) {
  return millis ? json::value(formatTimestamp(*millis)) : json::value(nullptr);
}

std::optional<Liveness> livenessOf(const kernel::EventStore& store,
                                   const kernel::ExecutionInfo& info) {
  bool parked = info.status == kernel::ExecutionStatus::kParked;
  if (info.status != kernel::ExecutionStatus::kRunning && !parked) return std::nullopt;
  Liveness l;
  l.lease = store.currentLease(info.id);
  l.nowMillis = systemClock()->nowMillis();
  l.orphaned = kernel::isOrphaned(l.lease, l.nowMillis);
  // A parked run is owned only while a live process holds its lease: a `loom run` waiting
  // out a short retry wait inline.
  if (parked && (!l.lease || l.orphaned)) return std::nullopt;
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

bool isErased(const kernel::ExecutionInfo& info, const ShredTimes& shreds) {
  if (!info.subject) return false;
  auto it = shreds.find(*info.subject);
  return it != shreds.end() && info.startedAtMillis <= it->second;
}

std::string RunStatus::status() const {
  // Recorded by `loom run --submit` and never run yet: only its EXECUTION_STARTED, and no
  // lease, or one let go (a worker's claim given back: its app did not load).
  if (live && info.nextSeq == 2 && (!live->lease || live->lease->released)) return "submitted";
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

std::size_t markUnserved(const kernel::EventStore& store, std::vector<RunStatus>& runs) {
  std::set<std::string> served, left;
  for (const auto& w : store.liveWorkers()) {
    served.insert(w.runs.begin(), w.runs.end());
    left.insert(w.leaves.begin(), w.leaves.end());
  }
  std::size_t marked = 0;
  for (auto& run : runs) {
    const auto& version = run.info.codeVersion;
    run.unserved = !kernel::isEnded(run.info.status) && !run.archived && version &&
                   left.contains(*version) && !served.contains(*version);
    marked += run.unserved;
  }
  return marked;
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
  if (info.codeVersion) o["codeVersion"] = *info.codeVersion;
  if (run.unserved) o["unserved"] = true;
  if (info.usage.modelTurns > 0 && !erased) o["usage"] = kernel::toJson(info.usage);
  if (erased) o["erased"] = true;
  if (run.archived) o["archived"] = true;
  if (run.live) o["owner"] = ownerJson(run.live);
  if (const auto& park = run.park) {
    o["parkReason"] = park->reason;
    if (!park->waitingFor.empty()) o["waitingFor"] = park->waitingFor;
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

std::string shortTime(int64_t millis, int64_t nowMillis) {
  std::string t = formatTimestamp(millis);  // 2026-12-06T12:00:05.123Z
  if (t.size() < 19) return t;
  if (t.compare(0, 10, formatTimestamp(nowMillis), 0, 10) == 0) return t.substr(11, 8);
  t = t.substr(5, 14);
  t[5] = ' ';
  return t;
}

std::string statusText(const RunStatus& run, int64_t nowMillis) {
  if (run.erased) return run.archived ? "erased (archived)" : "erased";
  std::string text = run.status();
  if (run.archived) return text + " (archived)";
  const auto& park = run.park;
  if (park && run.live) {  // its process waits for the next attempt itself: that says more
    return text + ", inline: pid " + std::to_string(run.live->lease->owner.pid);
  }
  auto at = [&](int64_t millis) { return shortTime(millis, nowMillis); };
  if (park && park->awaitsRetry()) {
    if (park->wakeAtMillis) text += ": next " + at(*park->wakeAtMillis);
  } else if (park && park->reason == "signal") {
    text += ": signal " + park->waitingFor;
  } else if (park && park->reason == "approval") {
    text += ": approval of " + park->stepId;
    if (park->wakeAtMillis) text += ", deadline " + at(*park->wakeAtMillis);
  } else if (park && park->reason == "timer" && park->wakeAtMillis) {
    text += ": timer " + at(*park->wakeAtMillis);
  } else if (park) {
    text += ": " + park->reason;
  }
  if (run.live && run.live->lease && text != "submitted") {
    text += std::string(run.live->orphaned ? ": was pid " : ": pid ") +
            std::to_string(run.live->lease->owner.pid) + "@" + run.live->lease->owner.host;
  }
  return text;
}

bool dueAndUnowned(const RunStatus& run, int64_t nowMillis, int64_t graceMillis) {
  return run.park && run.park->wakeAtMillis && !run.live && !run.erased &&
         *run.park->wakeAtMillis + graceMillis < nowMillis;
}

}  // namespace loom::inspect

#include "loom/kernel/event_store.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "loom/util/clock.h"
#include "loom/util/error.h"

namespace loom::kernel {

std::vector<Event> EventStore::read(const std::string& executionId, int64_t fromSeq) const {
  std::vector<Event> out;
  scan(executionId, fromSeq, [&](const Event& e) { out.push_back(e); });
  return out;
}

int64_t EventStore::lastControlSeq() const {
  auto log = readControl(1);
  return log.empty() ? 0 : log.back().seq;
}

std::vector<ControlEvent> EventStore::readControlOfTypes(const std::vector<std::string>& types,
                                                         int64_t fromSeq) const {
  std::vector<ControlEvent> out;
  for (auto& e : readControl(fromSeq)) {
    if (std::find(types.begin(), types.end(), e.type) != types.end()) out.push_back(std::move(e));
  }
  return out;
}

int64_t appendControlAtEnd(EventStore& store, ControlEvent event) {
  constexpr int kMaxRounds = 100;
  if (event.atMillis == 0) event.atMillis = systemClock()->nowMillis();  // every one is dated
  for (int round = 0;; ++round) {
    int64_t seq = store.lastControlSeq() + 1;
    try {
      store.appendControl(seq, {event});
      return seq;
    } catch (const ConflictError&) {
      if (round >= kMaxRounds) throw;  // a very busy control log; the caller may retry
    }
  }
}

std::vector<Lease> EventStore::claimRunnable(const ClaimRequest& request) {
  std::vector<Lease> claimed;
  if (request.limit == 0) return claimed;
  std::set<std::string, std::less<>> skip(request.skip.begin(), request.skip.end());
  std::vector<ExecutionInfo> candidates;  // oldest first, as a shared store claims
  ExecutionFilter running;
  running.status = ExecutionStatus::kRunning;
  forEachExecution(*this, running, [&](const ExecutionInfo& info) {
    if (skip.contains(info.id)) return;
    if (request.codeVersion && info.codeVersion && *info.codeVersion != *request.codeVersion) {
      return;
    }
    candidates.push_back(info);
  });
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    return a.startedAtMillis < b.startedAtMillis;
  });
  for (const auto& info : candidates) {
    if (claimed.size() >= request.limit) break;
    try {
      claimed.push_back(acquireLease({info.id, request.owner, request.ttlMillis, std::nullopt}));
    } catch (const LeaseHeldError&) {
      // someone runs it (or claimed it first)
    }
  }
  return claimed;
}

std::optional<EventStore::AddressSet> EventStore::executionsThatMayCite(const AddressSet&) const {
  return std::nullopt;
}

bool EventStore::awaitWork(int64_t timeoutMillis) const {
  if (timeoutMillis > 0) std::this_thread::sleep_for(std::chrono::milliseconds(timeoutMillis));
  return false;
}

void forEachExecution(const EventStore& store, ExecutionFilter filter,
                      const std::function<void(const ExecutionInfo&)>& visit) {
  if (filter.limit == 0) filter.limit = kDefaultPage;
  for (;;) {
    auto infos = store.list(filter);
    for (const auto& info : infos) visit(info);
    if (infos.size() < filter.limit) return;
    filter.afterId = infos.back().id;
  }
}

std::optional<int64_t> timerWakeAt(const EventStore& store, const ExecutionInfo& info) {
  auto park = currentPark(store, info);
  return park ? park->wakeAtMillis : std::nullopt;
}

std::optional<ParkState> currentPark(const EventStore& store, const ExecutionInfo& info) {
  if (info.status != ExecutionStatus::kParked || info.nextSeq < 2) return std::nullopt;
  std::optional<ParkState> park;
  store.scan(info.id, info.nextSeq - 1, [&](const Event& e) {
    if (e.type != EventType::kExecutionParked) return;
    requireUnsealed(info.id, e);
    auto text = [&](std::string_view key) {
      const auto* v = e.data.if_contains(key);
      return v && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    park = ParkState{text("reason"), text("stepId"), text("detail"), parkedWakeAt(e.data),
                     text("waitingFor")};
  });
  return park;
}

}  // namespace loom::kernel

#include "loom/kernel/fold.h"

#include "loom/kernel/execution_info.h"

namespace loom::kernel {
namespace {

json::object emptyState() {
  return json::object{{"workflow", ""},        {"subject", nullptr}, {"status", "running"},
                      {"input", nullptr},      {"steps", json::object{}},
                      {"signals", json::array{}}, {"result", nullptr}};
}

ExecutionStatus progressed(std::string_view current) {
  auto s = statusFromName(current).value_or(ExecutionStatus::kRunning);
  return isEnded(s) ? s : ExecutionStatus::kRunning;
}

}  // namespace

void Fold::apply(const Event& event) {
  if (state_.empty()) state_ = emptyState();
  const auto& d = event.data;
  if (isSealed(d) || isErased(d)) {
    // Unreadable here (sealed, or its subject erased): it still moves the status, and the
    // erased marker is kept so a reader sees why the state is empty.
    if (isErased(d)) state_["erased"] = d.at("erased");
    if (event.type == EventType::kExecutionParked) state_["status"] = "parked";
    if (event.type == EventType::kExecutionCompleted) state_["status"] = "completed";
    if (event.type == EventType::kExecutionFailed) state_["status"] = "failed";
    if (event.type == EventType::kExecutionCancelled) state_["status"] = "cancelled";
    if (event.type == EventType::kStepCompleted || event.type == EventType::kStepFailed) {
      state_["status"] = statusName(progressed(state_["status"].get_string()));
    }
    if (event.type == EventType::kExecutionStarted && d.contains("workflow")) {
      state_["workflow"] = d.at("workflow");
      if (const auto* s = d.if_contains("subject")) state_["subject"] = *s;
    }
    return;
  }
  switch (event.type) {
    case EventType::kExecutionStarted:
      state_["workflow"] = d.at("workflow");
      if (const auto* s = d.if_contains("subject")) state_["subject"] = *s;
      state_["input"] = d.at("input");
      state_["status"] = "running";
      break;
    case EventType::kStepCompleted:
      state_["steps"].get_object()[d.at("stepId").get_string()] = d.at("output");
      state_["status"] = statusName(progressed(state_["status"].get_string()));
      break;
    case EventType::kStepFailed:
      state_["status"] = statusName(progressed(state_["status"].get_string()));
      break;
    case EventType::kExecutionParked:
      state_["status"] = "parked";
      break;
    case EventType::kSignalReceived:
      state_["signals"].get_array().push_back(
          json::object{{"name", d.at("name")}, {"payload", d.at("payload")}});
      break;
    case EventType::kExecutionCompleted:
      state_["status"] = "completed";
      state_["result"] = d.at("output");
      break;
    case EventType::kExecutionFailed:
      state_["status"] = "failed";
      state_["result"] = d.at("error");
      break;
    case EventType::kExecutionCancelled:
      state_["status"] = "cancelled";
      state_["result"] = cancelledResult(d);
      break;
    case EventType::kCodeUpgraded:  // the version is metadata (ExecutionInfo), not state
      break;
  }
}

json::object foldEvents(const std::vector<Event>& events) {
  Fold fold;
  for (const auto& e : events) fold.apply(e);
  return fold.state();
}

int64_t foldedStateBytes(const FoldSizes& s) {
  // headerBytes already counts "steps":{} and "signals":[]; members add their bytes and the
  // commas between them.
  int64_t steps = s.stepsBytes + (s.stepsCount > 1 ? s.stepsCount - 1 : 0);
  int64_t signals = s.signalsBytes + (s.signalsCount > 1 ? s.signalsCount - 1 : 0);
  return s.headerBytes + steps + signals;
}

}  // namespace loom::kernel

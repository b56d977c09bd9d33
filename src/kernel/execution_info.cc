#include "loom/kernel/execution_info.h"

#include "loom/kernel/fold.h"

namespace loom::kernel {
namespace {

constexpr int64_t kNullBytes = 4;

// Bytes of the state with empty steps and signals, input and result counted by size.
int64_t headerBytes(const ExecutionInfo& info) {
  json::object header{{"workflow", info.workflow},
                      {"subject", info.subject ? json::value(*info.subject) : json::value()},
                      {"status", statusName(info.status)},
                      {"input", nullptr},
                      {"steps", json::object{}},
                      {"signals", json::array{}},
                      {"result", nullptr}};
  return static_cast<int64_t>(json::textBytes(header)) - 2 * kNullBytes +
         info.sizes.inputBytes + info.sizes.resultBytes;
}

void progress(ExecutionInfo& info) {
  if (!isEnded(info.status)) info.status = ExecutionStatus::kRunning;
}

// The stored bytes of a sealed (or erased) payload, which stand in for the sizes of the
// fields it hides (docs/spec/events.md, "Sealed events"); -1 for a clear event.
int64_t opaqueBytes(const json::object& d) {
  const json::value* body = nullptr;
  if (isSealed(d)) {
    body = d.if_contains(kSealedKey);
  } else if (isErased(d)) {
    body = d.if_contains(kErasedKey);
  }
  return body ? static_cast<int64_t>(json::textBytes(*body)) : -1;
}

}  // namespace

std::string_view statusName(ExecutionStatus status) {
  switch (status) {
    case ExecutionStatus::kRunning: return "running";
    case ExecutionStatus::kParked: return "parked";
    case ExecutionStatus::kCompleted: return "completed";
    case ExecutionStatus::kFailed: return "failed";
    case ExecutionStatus::kCancelled:
      return "cancelled";
  }
  return "running";
}

std::optional<ExecutionStatus> statusFromName(std::string_view name) {
  for (auto s : {ExecutionStatus::kRunning, ExecutionStatus::kParked, ExecutionStatus::kCompleted,
                 ExecutionStatus::kFailed, ExecutionStatus::kCancelled}) {
    if (statusName(s) == name) return s;
  }
  return std::nullopt;
}

void applyEvent(ExecutionInfo& info, const Event& event, int64_t textBytes,
                int64_t outputBytes) {
  const auto& d = event.data;
  const int64_t opaque = opaqueBytes(d);  // >= 0: the fields below are sealed, unread
  const ExecutionStatus before = info.status;
  info.nextSeq = event.seq + 1;
  info.logBytes += textBytes;
  switch (event.type) {
    case EventType::kExecutionStarted:
      info.workflow = d.at("workflow").get_string();
      if (const auto* s = d.if_contains("subject"); s && s->is_string()) {
        info.subject = std::string(s->get_string());
      }
      if (const auto* v = d.if_contains("codeVersion"); v && v->is_string()) {
        info.codeVersion = std::string(v->get_string());
      }
      info.status = ExecutionStatus::kRunning;
      info.startedAtMillis = event.atMillis;
      info.sizes.inputBytes =
          opaque >= 0 ? opaque : static_cast<int64_t>(json::textBytes(d.at("input")));
      break;
    case EventType::kStepCompleted: {
      info.steps += 1;
      info.sizes.stepsCount += 1;
      if (auto usage = stepUsage(d)) info.usage.add(*usage);
      if (opaque >= 0) {
        info.sizes.stepsBytes += opaque;
        progress(info);
        break;
      }
      int64_t output = outputBytes >= 0 ? outputBytes
                                        : static_cast<int64_t>(json::textBytes(d.at("output")));
      info.sizes.stepsBytes +=
          static_cast<int64_t>(json::textBytes(d.at("stepId"))) + 1 + output;
      progress(info);
      break;
    }
    case EventType::kStepFailed:
      progress(info);
      break;
    case EventType::kExecutionParked:
      info.status = ExecutionStatus::kParked;
      break;
    case EventType::kSignalReceived: {
      info.sizes.signalsCount += 1;
      if (opaque >= 0) {
        info.sizes.signalsBytes += opaque;
        break;
      }
      json::object signal{{"name", d.at("name")}, {"payload", d.at("payload")}};
      info.sizes.signalsBytes += static_cast<int64_t>(json::textBytes(signal));
      // A signal does not run anything by itself: a parked execution stays parked until a
      // runner resumes it.
      break;
    }
    case EventType::kExecutionCompleted:
      info.status = ExecutionStatus::kCompleted;
      info.endedAtMillis = event.atMillis;
      info.sizes.resultBytes =
          opaque >= 0 ? opaque : static_cast<int64_t>(json::textBytes(d.at("output")));
      break;
    case EventType::kExecutionFailed:
      info.status = ExecutionStatus::kFailed;
      info.endedAtMillis = event.atMillis;
      info.sizes.resultBytes =
          opaque >= 0 ? opaque : static_cast<int64_t>(json::textBytes(d.at("error")));
      break;
    case EventType::kCodeUpgraded:  // "codeVersion" is clear in a sealed one too
      info.codeVersion = std::string(d.at("codeVersion").get_string());
      break;
    case EventType::kExecutionCancelled:
      info.status = ExecutionStatus::kCancelled;
      info.endedAtMillis = event.atMillis;
      info.sizes.resultBytes =
          opaque >= 0 ? opaque : static_cast<int64_t>(json::textBytes(cancelledResult(d)));
      break;
  }
  // The header changes only with status, input or result: skip re-measuring it on the hot
  // path (a step of a running execution).
  if (event.type != EventType::kStepCompleted || info.status != before ||
      info.sizes.headerBytes == 0) {
    info.sizes.headerBytes = headerBytes(info);
  }
  info.stateBytes = foldedStateBytes(info.sizes);
}

}  // namespace loom::kernel

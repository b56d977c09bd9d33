#include "replay_log.h"

namespace loom::workflow {

using kernel::EventType;

void ReplayLog::apply(const kernel::Event& e) {
  const auto& d = e.data;
  switch (e.type) {
    case EventType::kExecutionStarted:
      workflow = d.at("workflow").get_string();
      input = d.at("input");
      if (const auto* s = d.if_contains("subject"); s && s->is_string()) {
        subject = std::string(s->get_string());
      }
      break;
    case EventType::kStepCompleted: {
      auto& step = steps[std::string(d.at("stepId").get_string())];
      step.completed = true;
      step.output = d.at("output");
      break;
    }
    case EventType::kStepFailed: {
      auto& step = steps[std::string(d.at("stepId").get_string())];
      const auto& error = d.at("error").get_object();
      step.errorCode = error.at("code").get_string();
      step.errorMessage = error.at("message").get_string();
      step.retryable = d.at("retryable").get_bool();
      step.failedAttempts += 1;
      break;
    }
    case EventType::kSignalReceived:
      signals[std::string(d.at("name").get_string())].push_back(d.at("payload"));
      break;
    default:
      break;
  }
  nextSeq = e.seq + 1;
  lastType = e.type;
  if (e.type == EventType::kExecutionParked) lastParked = d;
}

ReplayLog ReplayLog::load(const kernel::EventStore& store, const std::string& executionId) {
  ReplayLog log;
  store.scan(executionId, 1, [&](const kernel::Event& e) { log.apply(e); });
  return log;
}

}  // namespace loom::workflow

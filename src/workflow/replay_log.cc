#include "replay_log.h"

#include <type_traits>

#include "loom/util/error.h"

namespace loom::workflow {

using kernel::EventType;

namespace {

// One body for both apply forms: `E` is `const Event&` (copies) or `Event&&` (moves).
template <typename E>
void applyEvent(ReplayLog& log, E&& e) {
  constexpr bool kMove = !std::is_const_v<std::remove_reference_t<E>>;
  auto& d = e.data;
  switch (e.type) {
    case EventType::kExecutionStarted:
      log.workflow = d.at("workflow").get_string();
      log.input = d.at("input");
      if (const auto* s = d.if_contains("subject"); s && s->is_string()) {
        log.subject = std::string(s->get_string());
      }
      if (const auto* v = d.if_contains("codeVersion"); v && v->is_string()) {
        log.codeVersion = std::string(v->get_string());
      }
      log.startedAtMillis = e.atMillis;
      break;
    case EventType::kStepCompleted: {
      auto& step = log.steps[std::string(d.at("stepId").get_string())];
      step.completed = true;
      step.usage = kernel::stepUsage(d);
      step.effectId = d.at("effectId").get_string();
      if constexpr (kMove) {
        step.output = std::move(d.at("output"));
      } else {
        step.output = d.at("output");
      }
      break;
    }
    case EventType::kStepFailed: {
      auto& step = log.steps[std::string(d.at("stepId").get_string())];
      step.effectId = d.at("effectId").get_string();
      const auto& error = d.at("error").get_object();
      step.errorCode = error.at("code").get_string();
      step.errorMessage = error.at("message").get_string();
      step.retryable = d.at("retryable").get_bool();
      step.failedAttempts += 1;
      step.nextAttemptAtMillis = std::nullopt;
      if (const auto* next = d.if_contains("nextAttemptAt")) {
        step.nextAttemptAtMillis = kernel::stepNextAttemptAt(d);
        if (!step.nextAttemptAtMillis) {
          throw DataLossError("the STEP_FAILED at seq " + std::to_string(e.seq) + " (step '" +
                              std::string(d.at("stepId").get_string()) + "') has nextAttemptAt " +
                              json::toText(*next) +
                              ", not a time Loom writes; the log was changed outside Loom");
        }
        ++step.retriedFailures;
      }
      break;
    }
    case EventType::kSignalReceived:
      log.signals[std::string(d.at("name").get_string())].push_back(d.at("payload"));
      break;
    case EventType::kCodeUpgraded:  // `loom upgrade`: the run goes on on this version
      log.codeVersion = std::string(d.at("codeVersion").get_string());
      break;
    default:
      break;
  }
  log.nextSeq = e.seq + 1;
  log.lastType = e.type;
  if (e.type == EventType::kExecutionParked) {
    log.lastParked = d;
    const auto* w = d.if_contains("waitingFor");
    log.lastWait = w != nullptr && w->is_string() ? std::string(w->get_string()) : std::string();
  } else if (e.type != EventType::kSignalReceived) {
    log.lastWait.clear();
  }
}

}  // namespace

void ReplayLog::apply(const kernel::Event& e) { applyEvent(*this, e); }

void ReplayLog::apply(kernel::Event&& e) { applyEvent(*this, std::move(e)); }

namespace {

// Erases the entries of `m` whose keys start with `prefix` (a sorted range).
template <typename Map>
void erasePrefix(Map& m, std::string_view prefix) {
  if (prefix.empty()) return;
  auto first = m.lower_bound(prefix);
  auto last = first;
  while (last != m.end() && std::string_view(last->first).starts_with(prefix)) ++last;
  m.erase(first, last);
}

}  // namespace

void ReplayLog::checkpoint(std::string_view scope, json::value state,
                           const std::vector<std::string>& forget) {
  for (const auto& prefix : forget) {
    erasePrefix(steps, prefix);
    erasePrefix(signals, prefix);
  }
  auto it = checkpoints.find(scope);
  if (it == checkpoints.end()) {
    checkpoints.emplace(std::string(scope), std::move(state));
  } else {
    it->second = std::move(state);
  }
}

ReplayLog ReplayLog::load(const kernel::EventStore& store, const std::string& executionId) {
  ReplayLog log;
  store.scan(executionId, 1, [&](const kernel::Event& e) {
    refuseErased(executionId, e);
    log.apply(e);
  });
  return log;
}

void refuseErased(const std::string& executionId, const kernel::Event& event) {
  // A sealed event here means the runtime was given the store below the sealing layer (no
  // keys): replaying it raw would be replaying garbage.
  kernel::requireUnsealed(executionId, event);
  if (!kernel::isErased(event.data)) return;
  const auto& erased = event.data.at(kernel::kErasedKey).get_object();
  const auto* subject = erased.if_contains("subject");
  throw FailedPreconditionError(
      "execution " + executionId + " was erased (subject " +
      (subject && subject->is_string() ? std::string(subject->get_string()) : "?") +
      "); its log can no longer be read, so it cannot be resumed");
}

}  // namespace loom::workflow

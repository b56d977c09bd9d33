#include "append_plan.h"

#include "loom/util/error.h"
#include "util/utf8.h"

namespace loom::kernel {
namespace {

void checkSeq(const std::string& what, int64_t actualNextSeq, int64_t expectedNextSeq) {
  if (actualNextSeq != expectedNextSeq) {
    throw ConflictError(what + ": expected next seq " + std::to_string(expectedNextSeq) +
                        " but the log is at " + std::to_string(actualNextSeq) +
                        " (another writer appended first; re-read and retry)");
  }
}

}  // namespace

AppendPlan planAppend(const std::string& executionId, const std::optional<ExecutionInfo>& current,
                      int64_t expectedNextSeq, std::vector<Event> events) {
  if (executionId.empty()) throw InvalidArgumentError("execution id must not be empty");
  if (events.empty()) throw InvalidArgumentError("append of no events to '" + executionId + "'");
  checkSeq("execution '" + executionId + "'", current ? current->nextSeq : 1, expectedNextSeq);
  if (!current && events.front().type != EventType::kExecutionStarted) {
    throw InvalidArgumentError("execution '" + executionId +
                               "' must start with EXECUTION_STARTED, not " +
                               std::string(eventTypeName(events.front().type)));
  }
  if (!current) {  // once per execution: the names every later row and listing repeats
    requireUtf8(executionId, "execution id");
    const json::value* subject = events.front().data.if_contains("subject");
    if (subject != nullptr && subject->is_string()) {
      requireUtf8(subject->get_string(), "the data subject of execution '" + executionId + "'");
    }
  }
  AppendPlan plan;
  plan.after = current.value_or(ExecutionInfo{});
  plan.after.id = executionId;
  plan.texts.reserve(events.size());
  int64_t seq = expectedNextSeq;
  for (auto& e : events) {
    if (seq > 1 && e.type == EventType::kExecutionStarted) {
      throw InvalidArgumentError("execution '" + executionId +
                                 "' already started: EXECUTION_STARTED at seq " +
                                 std::to_string(seq));
    }
    try {
      validateEventData(e.type, e.data);
    } catch (const InvalidArgumentError& err) {
      throw InvalidArgumentError("event " + std::string(eventTypeName(e.type)) + " for '" +
                                 executionId + "': " + err.what());
    }
    e.seq = seq++;
    int64_t outputBytes = -1;
    plan.texts.push_back(toText(e, &outputBytes));
    applyEvent(plan.after, e, static_cast<int64_t>(plan.texts.back().size()), outputBytes);
  }
  plan.events = std::move(events);
  return plan;
}

std::vector<std::string> planControlAppend(int64_t currentNextSeq, int64_t expectedNextSeq,
                                           std::vector<ControlEvent>& events) {
  if (events.empty()) throw InvalidArgumentError("append of no events to the control log");
  checkSeq("control log", currentNextSeq, expectedNextSeq);
  std::vector<std::string> texts;
  int64_t seq = expectedNextSeq;
  for (auto& e : events) {
    if (!isKnownControlEventType(e.type)) {
      throw InvalidArgumentError("unknown control event type '" + e.type + "'");
    }
    e.seq = seq++;
    texts.push_back(toText(e));
    requireUtf8(texts.back(), "control event " + e.type);
  }
  return texts;
}

}  // namespace loom::kernel

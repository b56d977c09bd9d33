#include "loom/workflow/replay_check.h"

#include "execution_context.h"
#include "loom/kernel/memory_event_store.h"
#include "loom/util/error.h"
#include "loom/workflow/runtime.h"
#include "replay_log.h"

namespace loom::workflow {
namespace {

using kernel::EventType;

bool isEnd(EventType type) {
  return type == EventType::kExecutionCompleted || type == EventType::kExecutionFailed ||
         type == EventType::kExecutionCancelled;
}

ReplayCheckResult unchecked(const std::string& id, std::string why) {
  return ReplayCheckResult{.executionId = id, .outcome = "unchecked", .recorded = std::move(why)};
}

}  // namespace

ReplayCheckResult checkReplay(const std::string& executionId, std::vector<kernel::Event> events,
                              const WorkflowRegistry& workflows,
                              const effects::TaskRegistry& tasks) {
  if (events.empty()) throw DataLossError("execution '" + executionId + "' has no events");
  for (const auto& e : events) {
    try {
      refuseErased(executionId, e);
    } catch (const FailedPreconditionError& erased) {
      return unchecked(executionId, erased.what());
    }
  }
  const std::string workflow(events.front().data.at("workflow").get_string());
  if (workflows.find(workflow) == nullptr) {
    return unchecked(executionId, "its workflow '" + workflow + "' is not registered here");
  }
  // The run as if it had not ended: the code is run to where the log goes.
  std::optional<EventType> end;
  if (isEnd(events.back().type)) {
    end = events.back().type;
    events.pop_back();
  }
  auto clock = systemClock();
  kernel::MemoryEventStore copy(clock);
  copy.adoptLog(executionId, std::move(events));
  RuntimeOptions options;
  options.clock = clock;
  options.workers = 1;
  options.replayCheck = true;
  WorkflowRuntime runtime(copy, workflows, tasks, nullptr, options);
  ReplayCheckResult r{.executionId = executionId, .outcome = "matched"};
  try {
    RunResult run = runtime.resume(executionId);
    r.replayedSteps = run.replayedSteps;
    auto ended = [&](kernel::ExecutionStatus status, EventType type, const std::string& how) {
      if (run.status == status && (!end || *end != type)) {
        r = {executionId, "diverged", "(the end)",
             end ? std::string(kernel::eventTypeName(*end)) : "the run going on (no end)", how,
             run.replayedSteps};
      }
    };
    ended(kernel::ExecutionStatus::kCompleted, EventType::kExecutionCompleted,
          "completed there");
    ended(kernel::ExecutionStatus::kFailed, EventType::kExecutionFailed,
          "failed there (" + json::toText(run.error) + ")");
  } catch (const Error& e) {
    r = {executionId, "unchecked", "", e.what(), "", 0};
  } catch (const ReplayDiverged& d) {
    r = {executionId, "diverged", d.stepId, d.recorded, d.asked, 0};
  } catch (const ReplayLogEnd& e) {
    if (end == EventType::kExecutionCompleted) {
      r = {executionId, "diverged", e.stepId, "the run's end (EXECUTION_COMPLETED)",
           "asked for step '" + e.stepId + "' after it", 0};
    }
  }
  return r;
}

std::vector<ReplayCheckResult> checkReplays(const kernel::EventStore& store,
                                            const WorkflowRegistry& workflows,
                                            const effects::TaskRegistry& tasks,
                                            const kernel::ExecutionFilter& filter) {
  std::vector<ReplayCheckResult> results;
  kernel::forEachExecution(store, filter, [&](const kernel::ExecutionInfo& info) {
    results.push_back(checkReplay(info.id, store.read(info.id), workflows, tasks));
  });
  return results;
}

}  // namespace loom::workflow

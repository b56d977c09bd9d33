// The example workflows shipped with the stock `loom` binary, used by the README's demo, the
// crash test and the CLI tests:
//   example.steps     {"steps": N, "sleepMs": M, "witness": PATH}: N journaled effect steps
//                     ("step-1".."step-N", effect id "example.step"); each sleeps M ms, then
//                     appends its step id as one line to the witness file. Output: N.
//   example.approval  one step, then parks waiting for signal "approve"; a last step records
//                     the signal's payload. Output: {"approval": <payload>}.
// registerDemoWorkflows adds both workflows and the "example.step" task (kind "flow") to the
// registries. Call it before boot; it is not thread-safe (the registries are not).
#pragma once

#include "loom/effects/task.h"
#include "loom/workflow/workflow.h"

namespace loom::demo_workflows {

inline constexpr std::string_view kStepsWorkflow = "example.steps";
inline constexpr std::string_view kApprovalWorkflow = "example.approval";
inline constexpr std::string_view kTimerWorkflow = "example.timer";
inline constexpr std::string_view kStepEffect = "example.step";

// Throws AlreadyExistsError when one of the names is registered already.
void registerDemoWorkflows(workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks);

}  // namespace loom::demo_workflows

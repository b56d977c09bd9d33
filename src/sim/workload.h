// The simulator's workload: one workflow, "sim.agent", that runs a plan drawn from the seed —
// tool calls whose results are big enough to be claim-checked (some identical across runs and
// subjects), model-like steps, a flaky tool that fails retryably a few times (durable
// retries), durable timers, approvals and signals — and the tasks it calls.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "loom/effects/effect_context.h"
#include "loom/effects/task.h"
#include "loom/json/json.h"
#include "loom/workflow/workflow.h"
#include "rng.h"

namespace loom::sim {

inline constexpr std::string_view kWorkflow = "sim.agent";
inline constexpr std::string_view kFetchTool = "sim.fetch";  // the claim-checked tool

// A run's plan: {"ops": [{"op": "fetch", "size", "key"} | {"op": "think"} |
// {"op": "flaky", "fails"} | {"op": "sleep", "ms"} | {"op": "approval"} | {"op": "signal"}]}.
json::value drawPlan(Rng& rng);

// The signals a plan's run waits for, in order ("approve:op3", "go:op5").
std::vector<std::string> signalsOf(const json::value& plan);

// `onEffect` is called by every task before it does its work (the simulator checks there that
// no recorded step runs again).
void registerWorkload(workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks,
                      std::function<void(const effects::EffectContext&)> onEffect);

// The bytes fetch returns for `key` and `size` (the same for every run: identical puts).
std::string fetchedText(const std::string& key, int64_t size);

}  // namespace loom::sim

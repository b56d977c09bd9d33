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
// The agent op's model (a scripted one), its claim-checked tool and its approval-gated tool.
inline constexpr std::string_view kAgentModel = "sim.model";
inline constexpr std::string_view kPageTool = "sim.page";
inline constexpr std::string_view kPublishTool = "sim.publish";
// The agent op's turns: kAgentPageTurns turns of two page calls each, then one publish call
// (it parks for approval), then an answer.
inline constexpr int64_t kAgentPageTurns = 3;

// A run's plan: {"ops": [{"op": "fetch", "size", "key"} | {"op": "think"} |
// {"op": "flaky", "fails"} | {"op": "sleep", "ms"} | {"op": "approval"} | {"op": "signal"} |
// {"op": "agent"}]}. "agent" runs the real agent loop (agentLoop) with the scripted model
// "sim.model", one tool call at a time: page calls (claim-checked, some bytes shared), then a
// publish call that parks until a person approves or denies it.
json::value drawPlan(Rng& rng);

// Inserts an agent op into `plan` at a place `rng` draws (drawn from the world's second
// stream, so plans drawn before the agent op existed stay as they were around it).
void addAgentOp(json::value& plan, Rng& rng);

// The signals a plan's run waits for, in order ("approve:op3", "go:op5").
std::vector<std::string> signalsOf(const json::value& plan);

// `onEffect` is called by every task before it does its work (the simulator checks there that
// no recorded step runs again).
void registerWorkload(workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks,
                      std::function<void(const effects::EffectContext&)> onEffect);

// The bytes fetch returns for `key` and `size` (the same for every run: identical puts).
std::string fetchedText(const std::string& key, int64_t size);

}  // namespace loom::sim

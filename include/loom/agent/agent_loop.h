// agentLoop: the durable tool-calling agent (the record's agentLoop$). Turn i calls the model
// as step `<name>#turn:<i>:model` (an `llm` effect under the model's id) with the transcript
// and the tools; each tool call j runs as step `<name>#turn:<i>:tool:<j>` (a `tool` effect
// under the tool's own name; the calls of one turn run concurrently, see parallelToolCalls);
// results are written back into the transcript in call order and the next turn starts. It
// ends when the model answers without tool calls, or at maxTurns. Every step is journaled, so
// a resume replays recorded turns without calling the model or any tool.
// Usable inside any workflow (agentLoop) or as a whole workflow (registerAgentWorkflow).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "loom/agent/model_input.h"
#include "loom/agent/tool.h"
#include "loom/kernel/usage.h"
#include "loom/workflow/workflow.h"

namespace loom::agent {

struct CompactionOptions {
  int64_t triggerBytes = 0;  // compact when the transcript passes this many bytes
  int64_t keepLastTurns = 2; // turns kept verbatim after the summary
  std::string model;         // model id for the summary; empty = the loop's model
};

// agent.budget (docs/observability.md, "Budgets"): limits on what one run of the loop spends,
// counted from what its steps recorded, so a replay neither counts a step twice nor forgets
// one. Checked at the start of each turn: over a limit, the run parks `budgetExceeded` waiting
// for signal "budget:<loop>#turn:<i>:model" (its payload raises limits: {"maxTokens": 20000}), or
// fails with onExceeded = "fail".
struct AgentBudget {
  std::optional<int64_t> maxTokens;     // input + output tokens of its model steps
  std::optional<double> maxCostUsd;     // their cost at observability.prices
  std::optional<int64_t> maxToolCalls;  // tool calls run
  std::string onExceeded = "park";      // or "fail"
  bool any() const { return maxTokens || maxCostUsd || maxToolCalls; }
  // The first limit `spent` and `toolCalls` reach, in words ("maxTokens 1000: 1250 spent");
  // empty when within every limit.
  std::string exceededBy(const kernel::TokenUsage& spent, int64_t toolCalls) const;
  json::object toJson() const;
};

// {"maxTokens", "maxCostUsd", "maxToolCalls", "onExceeded"}, each optional, over `base` (a
// raise keeps the limits it does not name). InvalidArgumentError naming the key and `where`.
AgentBudget budgetFromJson(const json::value& v, std::string_view where, AgentBudget base = {});

// The prefix of a budget raise's signal name: `budget:<loop>#turn:<i>:model`.
inline constexpr std::string_view kBudgetSignalPrefix = "budget:";

struct AgentOptions {
  std::string model;                  // effect id of the model
  std::vector<ToolDefinition> tools;  // offered to the model; each registered as a task
  std::string system;                 // system prompt; empty = none
  int64_t maxTurns = 50;
  // The tool calls of one model turn run concurrently, at most this many at a time (1 = one
  // after another; at most 64). Each is journaled under its own step id, in call order.
  int64_t parallelToolCalls = 4;
  ModelInputMode modelInput = ModelInputMode::kDelta;
  std::optional<CompactionOptions> compaction;
  // Report-only state-growth warning (ADR 0137): once per run, through onWarn, when the
  // transcript passes this many bytes. 0 = off.
  int64_t warnTranscriptBytes = 0;
  std::function<void(std::string_view)> onWarn;
  AgentBudget budget;  // none set: no limit
};

// Runs the loop named `name` with the user's `prompt`. Returns
// {"outcome": "answered" | "maxTurns", "answer": <last assistant content>, "turns": n}.
// Throws FailedPreconditionError when a model or compaction output comes back as a
// claim-check envelope (name the model out of execution.claimCheck.toolIds).
json::value agentLoop(workflow::WorkflowContext& ctx, std::string_view name,
                      const AgentOptions& options, const json::value& prompt);

// The state-growth warning text for a transcript of `bytes` over `limit`.
std::string stateGrowthWarning(std::string_view loop, int64_t bytes, int64_t limit);

// Registers a workflow `name` whose input is {"prompt": ...} (or a bare string) and whose
// body is agentLoop(ctx, name, options, prompt).
void registerAgentWorkflow(workflow::WorkflowRegistry& workflows, std::string name,
                           AgentOptions options);

}  // namespace loom::agent

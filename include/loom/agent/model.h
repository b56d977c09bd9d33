// Model SPI. A model turns a request into one assistant message. It runs as an `llm` effect
// under its own id, so it goes through the middleware chain and is journaled like any step.
//
// Request:  {"messages": [...], "tools": [{"name","description","inputSchema"}...],
//            "purpose": "turn" | "compact"}
// Response: {"role": "assistant", "content": string|null?, "toolCalls"?: [{"id","name",
//            "arguments"}], "finishReason"?: string, "usage"?: {"inputTokens","outputTokens"}}
// Messages are {"role": "system"|"user"|"assistant"|"tool", ...} (docs/spec/agent-state.md).
// Implementations must be thread-safe: one model serves many executions at once.
#pragma once

#include <memory>
#include <string>

#include "loom/effects/effect_context.h"
#include "loom/effects/task.h"
#include "loom/json/json.h"

namespace loom::agent {

class Model {
 public:
  virtual ~Model() = default;
  // The effect id the model is registered and journaled under ("scripted", "openai:gpt-4o").
  virtual const std::string& id() const = 0;
  // One completion. Throws loom::Error subclasses (UnavailableError for retryable faults).
  virtual json::value complete(const effects::EffectContext& ctx, const json::value& request) = 0;
};

// Registers `model` as an `llm` task under model->id(); the registry's task shares ownership
// of it.
void registerModel(effects::TaskRegistry& tasks, std::shared_ptr<Model> model);

// Checks a model response's shape; throws InvalidArgumentError naming what is wrong.
void validateAssistantMessage(const json::value& message, std::string_view modelId);

}  // namespace loom::agent
